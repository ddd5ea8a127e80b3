"""Permission rows: Editing the method catalog (methods, option names) and frameworks.

Reading the catalog is for owners, adjudicators and viewers, never coders (inclusion is
what they code blind); changing it is for owners. The method, option name and framework
belong to alpha, so the outsider meets 404 first.
"""

from coding.models import Method, OptionName

ROWS = {
    "studies/<slug:slug>/catalog/edit/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/methods/": {"GET": "LNYFFYY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/methods/<int:method_id>/": {
        "GET": "LNYFFYY", "PATCH": "LNFFFFY", "DELETE": "LNFFFFY"},
    "api/studies/<slug:slug>/methods/<int:method_id>/option-names/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/option-names/<int:option_name_id>/": {"DELETE": "LNFFFFY"},
    "api/studies/<slug:slug>/frameworks/": {"GET": "LNYFFYY", "POST": "LNFFFFY"},
    # The table's own row for this path, with the PATCH and DELETE this area adds to it.
    "api/studies/<slug:slug>/frameworks/<int:framework_id>/": {
        "GET": "LNYFFYY", "POST": "LNFFFFY", "PATCH": "LNFFFFY", "DELETE": "LNFFFFY"},
}


def values(world, alpha, people):
    method = Method.objects.create(study=alpha, name="Alpha clip", first_public="2025-03")
    option = OptionName.objects.create(method=method, framework_id=world["framework_id"],
                                       name="alpha_clip_high")
    return {"method_id": method.pk, "option_name_id": option.pk}

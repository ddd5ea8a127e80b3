"""Permission rows: Calibration items, reference answers, pass threshold, who passed.

Owners only, pages and API alike: coders must never see the reference answers or anyone's
results, and adjudicators and viewers have no part in setting calibration up. The table's
`item_id` is a main-round item, which has no reference answer: the owner's 404 there is
"not a calibration item" (tests/coding/labeling/test_calibration_setup.py drives the owner's way
through every one of these routes with a calibration item)."""

OWNER = "LNFFFFY"
OWNER_ON_MAIN_ITEM = "LNFFFFN"

ROWS = {
    "studies/<slug:slug>/calibration/": {"GET": OWNER, "POST": OWNER},
    "studies/<slug:slug>/calibration/<int:item_id>/reference/": {
        "GET": OWNER_ON_MAIN_ITEM, "POST": OWNER_ON_MAIN_ITEM},
    "api/studies/<slug:slug>/calibration/": {"GET": OWNER, "PATCH": OWNER},
    "api/studies/<slug:slug>/calibration/items/": {"POST": OWNER},
    "api/studies/<slug:slug>/calibration/items/<int:item_id>/": {"DELETE": OWNER_ON_MAIN_ITEM},
    "api/studies/<slug:slug>/calibration/items/<int:item_id>/reference/": {
        "GET": OWNER_ON_MAIN_ITEM, "PUT": OWNER_ON_MAIN_ITEM},
}


def values(world, alpha, people):
    return {}

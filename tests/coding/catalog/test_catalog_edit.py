"""Editing the method catalog and frameworks: pages, API and `manage.py catalog`.

The catalog is framework inclusion, which coders code blind: they never see it and never
change it. Only owners change it; every change is checked first, audited, and removing
what landings were found with needs a confirmation.
"""

import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from coding.catalog import landings
from coding.models import AuditEntry, Framework, FrameworkScan, Landing, Method, OptionName, Role
from tests import factories
from tests.coding.catalog.test_landings import Repo
from tests.conftest import page_queries

PAGE = "/studies/{}/catalog/edit/"


@pytest.fixture
def catalog(alpha):
    """Two frameworks and two methods; Clip-higher has landed in toyrl."""
    toyrl = Framework.objects.create(study=alpha, name="toyrl", repository="example/toyrl")
    minirl = Framework.objects.create(study=alpha, name="minirl", repository="example/minirl")
    clip = Method.objects.create(study=alpha, name="Clip-higher", first_public="2025-03-18",
                                 position=0)
    gspo = Method.objects.create(study=alpha, name="GSPO", first_public="2025-07", position=1)
    OptionName.objects.create(method=clip, framework=toyrl, name="clip_ratio_high")
    OptionName.objects.create(method=gspo, framework=toyrl, name="gspo")
    landing = Landing.objects.create(method=clip, framework=toyrl, option_name="clip_ratio_high",
                                     commit="a" * 40, committed_at=datetime(2025, 4, 2, tzinfo=UTC))
    return {"toyrl": toyrl, "minirl": minirl, "clip": clip, "gspo": gspo, "landing": landing}


@pytest.fixture
def beta_catalog(beta):
    framework = Framework.objects.create(study=beta, name="betarl", repository="example/betarl")
    method = Method.objects.create(study=beta, name="Beta method", first_public="2025")
    option = OptionName.objects.create(method=method, framework=framework, name="beta_opt")
    return {"framework": framework, "method": method, "option": option}


def api(slug, tail=""):
    return f"/api/studies/{slug}/{tail}"


def snapshot(study):
    """The whole catalog as comparable rows: proof that a refused request wrote nothing."""
    return (list(Method.objects.filter(study=study).values_list("name", "first_public",
                                                                 "source_arxiv_id", "position")),
            list(Framework.objects.filter(study=study).values_list("name", "repository",
                                                                   "main_branch")),
            list(OptionName.objects.filter(method__study=study).values_list("name", flat=True)),
            Landing.objects.filter(method__study=study).count(),
            AuditEntry.objects.filter(study=study).count())


# --- who may see and change it --------------------------------------------------------

def test_coders_never_see_the_catalog_through_any_door(alpha, catalog, people, client_for):
    cora = client_for(people["cora"])
    clip = catalog["clip"]
    for url in [PAGE.format(alpha.slug), api(alpha.slug, "methods/"),
                api(alpha.slug, f"methods/{clip.pk}/"), api(alpha.slug, "frameworks/")]:
        response = cora.get(url)
        assert response.status_code == 403, url
        assert "clip_ratio_high" not in response.content.decode()


WRITES = [
    ("post", "methods/", {"name": "New", "first_public": "2025"}),
    ("patch", "methods/{clip}/", {"name": "Renamed"}),
    ("delete", "methods/{gspo}/", None),
    ("post", "methods/{clip}/option-names/", {"framework": "{minirl}", "name": "x"}),
    ("delete", "option-names/{option}/", None),
    ("post", "frameworks/", {"name": "new", "repository": "a/b"}),
    ("patch", "frameworks/{toyrl}/", {"repository": "a/b"}),
    ("delete", "frameworks/{minirl}/", None),
]


def _fill(text, ids):
    return text.format(**ids) if isinstance(text, str) else text


@pytest.mark.parametrize("who", ["vera", "ada", "cora", "cyril"])
@pytest.mark.parametrize("method,tail,body", WRITES, ids=[f"{m} {t}" for m, t, _ in WRITES])
def test_only_owners_change_the_catalog(alpha, catalog, people, client_for, who, method, tail,
                                        body):
    ids = {"clip": catalog["clip"].pk, "gspo": catalog["gspo"].pk, "toyrl": catalog["toyrl"].pk,
           "minirl": catalog["minirl"].pk,
           "option": OptionName.objects.get(name="gspo").pk}
    before = snapshot(alpha)
    body = {k: int(_fill(v, ids)) if k == "framework" else v for k, v in (body or {}).items()}
    response = getattr(client_for(people[who]), method)(
        api(alpha.slug, _fill(tail, ids)), body, content_type="application/json")
    assert response.status_code == 403
    assert snapshot(alpha) == before


@pytest.mark.parametrize("who", ["vera", "ada", "cora"])
def test_only_owners_open_the_edit_page_or_post_to_it(alpha, catalog, people, client_for, who):
    client = client_for(people[who])
    before = snapshot(alpha)
    assert client.get(PAGE.format(alpha.slug)).status_code == 403
    response = client.post(PAGE.format(alpha.slug), {"action": "remove-method",
                                                     "method_id": catalog["gspo"].pk})
    assert response.status_code == 403 and snapshot(alpha) == before


def test_outsiders_meet_404(alpha, catalog, people, client_for):
    otto = client_for(people["otto"])
    assert otto.get(PAGE.format(alpha.slug)).status_code == 404
    assert otto.patch(api(alpha.slug, f"methods/{catalog['clip'].pk}/"), {"name": "x"},
                      content_type="application/json").status_code == 404
    assert otto.post(api(alpha.slug, "frameworks/"), {"name": "x", "repository": "a/b"},
                     content_type="application/json").status_code == 404


def test_another_studys_catalog_is_404_through_this_studys_urls(alpha, catalog, beta,
                                                                beta_catalog, people, client_for):
    olive = client_for(people["olive"])
    theirs = beta_catalog
    before = snapshot(beta)
    for method, tail in [("get", f"methods/{theirs['method'].pk}/"),
                         ("patch", f"methods/{theirs['method'].pk}/"),
                         ("delete", f"methods/{theirs['method'].pk}/?confirm=true"),
                         ("post", f"methods/{theirs['method'].pk}/option-names/"),
                         ("delete", f"option-names/{theirs['option'].pk}/?confirm=true"),
                         ("patch", f"frameworks/{theirs['framework'].pk}/"),
                         ("delete", f"frameworks/{theirs['framework'].pk}/?confirm=true")]:
        response = getattr(olive, method)(api(alpha.slug, tail), {"name": "taken"},
                                          content_type="application/json")
        assert response.status_code == 404, (method, tail)
    for action, field, pk in [("edit-method", "method_id", theirs["method"].pk),
                              ("remove-method", "method_id", theirs["method"].pk),
                              ("edit-framework", "framework_id", theirs["framework"].pk),
                              ("remove-framework", "framework_id", theirs["framework"].pk)]:
        response = olive.post(PAGE.format(alpha.slug), {"action": action, field: pk,
                                                        "name": "taken", "confirm": "yes"})
        assert response.status_code == 404, action
    # Their framework cannot take one of our option names either.
    response = olive.post(api(alpha.slug, f"methods/{catalog['clip'].pk}/option-names/"),
                          {"framework": theirs["framework"].pk, "name": "sneaky"},
                          content_type="application/json")
    assert response.status_code == 400 and "framework" in response.json()
    assert snapshot(beta) == before
    assert not OptionName.objects.filter(name="sneaky").exists()


# --- located errors, nothing half-written ------------------------------------------------

def test_a_duplicate_method_name_is_a_located_400(alpha, catalog, people, client_for):
    olive = client_for(people["olive"])
    before = snapshot(alpha)
    response = olive.post(api(alpha.slug, "methods/"), {"name": "gspo", "first_public": "2025"},
                          content_type="application/json")
    assert response.status_code == 400
    assert "already has a method named" in response.json()["name"][0]
    response = olive.patch(api(alpha.slug, f"methods/{catalog['clip'].pk}/"), {"name": "GSPO"},
                           content_type="application/json")
    assert response.status_code == 400 and "name" in response.json()
    assert snapshot(alpha) == before


@pytest.mark.parametrize("tail,body,field", [
    ("methods/", {"name": "M", "first_public": "2025-13"}, "first_public"),
    ("methods/", {"name": "M", "first_public": "18/03/2025"}, "first_public"),
    ("methods/", {"name": "M", "first_public": "2025-02-30"}, "first_public"),
    ("methods/", {"name": "M"}, "first_public"),
    ("methods/", {"name": "M", "first_public": "2025", "source_arxiv_id": "arxiv 123"},
     "source_arxiv_id"),
    ("methods/", {"name": "", "first_public": "2025"}, "name"),
    ("methods/", {"name": "M\u202e", "first_public": "2025"}, "name"),
    ("frameworks/", {"name": "F", "repository": "no-slash"}, "repository"),
    ("frameworks/", {"name": "F", "repository": "a/b/c"}, "repository"),
    ("frameworks/", {"name": "F", "repository": "-bad/name"}, "repository"),
    ("frameworks/", {"name": "F", "repository": "a/b", "main_branch": "--upload-pack=x"},
     "main_branch"),
    ("frameworks/", {"name": "F", "repository": "a/b", "main_branch": "a..b"}, "main_branch"),
    ("frameworks/", {"name": "TOYRL", "repository": "a/b"}, "name"),
])
def test_bad_input_is_a_located_400_and_writes_nothing(alpha, catalog, people, client_for, tail,
                                                       body, field):
    before = snapshot(alpha)
    response = client_for(people["olive"]).post(api(alpha.slug, tail), body,
                                                content_type="application/json")
    assert response.status_code == 400 and field in response.json(), response.json()
    assert snapshot(alpha) == before


@pytest.mark.parametrize("given,kept,day", [("2025", "2025", "2025-01-01"),
                                            ("2025-08", "2025-08", "2025-08-01"),
                                            ("2025-03-18", "2025-03-18", "2025-03-18")])
def test_first_public_may_be_a_year_a_month_or_a_day(alpha, people, client_for, given, kept, day):
    response = client_for(people["olive"]).post(
        api(alpha.slug, "methods/"), {"name": "M", "first_public": given,
                                      "source_arxiv_id": "arXiv:2503.14476v2"},
        content_type="application/json")
    assert response.status_code == 201, response.json()
    method = Method.objects.get(pk=response.json()["id"])
    assert method.first_public == kept and method.source_arxiv_id == "2503.14476"
    assert str(landings.first_public(method)) == day


def test_a_github_address_is_read_as_owner_and_name(alpha, people, client_for):
    response = client_for(people["olive"]).post(
        api(alpha.slug, "frameworks/"),
        {"name": "verl", "repository": "https://github.com/verl-project/verl.git"},
        content_type="application/json")
    assert response.status_code == 201
    assert response.json()["repository"] == "verl-project/verl"
    assert response.json()["main_branch"] == "main"


def test_several_option_names_per_method_and_framework_but_not_the_same_twice(
        alpha, catalog, people, client_for):
    olive = client_for(people["olive"])
    url = api(alpha.slug, f"methods/{catalog['clip'].pk}/option-names/")
    toyrl = catalog["toyrl"].pk
    renamed = olive.post(url, {"framework": toyrl, "name": "clip_high"},
                         content_type="application/json")
    assert renamed.status_code == 201 and renamed.json()["framework"] == "toyrl"
    again = olive.post(url, {"framework": toyrl, "name": "clip_high"},
                       content_type="application/json")
    assert again.status_code == 400 and "already has the option name" in again.json()["name"][0]
    names = olive.get(api(alpha.slug, f"methods/{catalog['clip'].pk}/")).json()["option_names"]
    assert sorted(o["name"] for o in names) == ["clip_high", "clip_ratio_high"]


def test_the_page_shows_every_error_in_place_and_saves_nothing(alpha, catalog, people,
                                                               client_for):
    before = snapshot(alpha)
    response = client_for(people["olive"]).post(PAGE.format(alpha.slug), {
        "action": "add-method", "name": "clip-HIGHER", "first_public": "March 2025",
        f"names_{catalog['toyrl'].pk}": "ok_name, ok_name"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "already has a method named" in page
    assert "is not a date as YYYY, YYYY-MM or YYYY-MM-DD" in page
    assert "&#x27;ok_name&#x27; is given twice" in page
    assert snapshot(alpha) == before


def test_a_method_and_its_option_names_are_saved_together_or_not_at_all(alpha, catalog, people,
                                                                        client_for):
    clip, toyrl = catalog["clip"], catalog["toyrl"]
    before = snapshot(alpha)
    response = client_for(people["olive"]).post(PAGE.format(alpha.slug), {
        "action": "edit-method", "method_id": clip.pk, "name": "Clip-higher (DAPO)",
        "first_public": "2025-03-18", f"names_{toyrl.pk}": "clip_ratio_high, bad\u0007name"})
    assert response.status_code == 200 and "control character" in response.content.decode()
    assert snapshot(alpha) == before


def test_the_page_adds_and_edits_methods_with_their_option_names(alpha, catalog, people,
                                                                 client_for):
    olive = client_for(people["olive"])
    toyrl, minirl = catalog["toyrl"], catalog["minirl"]
    response = olive.post(PAGE.format(alpha.slug), {
        "action": "add-method", "name": "CISPO", "first_public": "2025-06-16",
        "failure_addressed": "Entropy collapse", f"names_{toyrl.pk}": "cispo, use_cispo",
        f"names_{minirl.pk}": ""})
    assert response.status_code == 302
    cispo = Method.objects.get(study=alpha, name="CISPO")
    assert cispo.position == 2  # after the last
    assert sorted(cispo.option_names.values_list("name", flat=True)) == ["cispo", "use_cispo"]
    response = olive.post(PAGE.format(alpha.slug), {
        "action": "edit-method", "method_id": cispo.pk, "name": "CISPO", "first_public": "2025-06",
        "position": "0", f"names_{toyrl.pk}": "use_cispo", f"names_{minirl.pk}": "cispo_loss"})
    assert response.status_code == 302
    cispo.refresh_from_db()
    assert (cispo.first_public, cispo.position) == ("2025-06", 0)
    assert sorted(cispo.option_names.values_list("framework__name", "name")) == [
        ("minirl", "cispo_loss"), ("toyrl", "use_cispo")]
    page = olive.get(PAGE.format(alpha.slug) + f"?method={cispo.pk}").content.decode()
    assert 'value="use_cispo"' in page and "Save CISPO" in page


def test_the_page_leaves_alone_what_it_was_not_sent(alpha, catalog, people, client_for):
    clip = catalog["clip"]
    Method.objects.filter(pk=clip.pk).update(source_arxiv_id="2503.14476")
    response = client_for(people["olive"]).post(PAGE.format(alpha.slug), {
        "action": "edit-method", "method_id": clip.pk, "name": "Clip-higher (DAPO)"})
    assert response.status_code == 302
    clip.refresh_from_db()
    assert (clip.name, clip.first_public, clip.source_arxiv_id) == (
        "Clip-higher (DAPO)", "2025-03-18", "2503.14476")
    assert list(clip.option_names.values_list("name", flat=True)) == ["clip_ratio_high"]
    assert Landing.objects.filter(method=clip).exists()


# --- removals and landings ---------------------------------------------------------------

def test_removing_a_method_with_landings_needs_confirmation(alpha, catalog, people, client_for):
    olive = client_for(people["olive"])
    url = api(alpha.slug, f"methods/{catalog['clip'].pk}/")
    refused = olive.delete(url)
    assert refused.status_code == 409
    assert refused.json()["removes"] == ["Clip-higher's landing in toyrl (2025-04-02, "
                                         "clip_ratio_high)"]
    assert Method.objects.filter(pk=catalog["clip"].pk).exists()
    assert olive.delete(url + "?confirm=true").status_code == 204
    assert not Method.objects.filter(pk=catalog["clip"].pk).exists()
    assert not Landing.objects.filter(method__study=alpha).exists()


def test_removing_without_landings_needs_no_confirmation(alpha, catalog, people, client_for):
    olive = client_for(people["olive"])
    assert olive.delete(api(alpha.slug, f"methods/{catalog['gspo'].pk}/")).status_code == 204
    assert olive.delete(api(alpha.slug, f"frameworks/{catalog['minirl'].pk}/")).status_code == 204
    assert not Method.objects.filter(name="GSPO").exists()


def test_the_page_asks_before_removing_a_framework_with_landings(alpha, catalog, people,
                                                                 client_for):
    olive = client_for(people["olive"])
    form = {"action": "remove-framework", "framework_id": catalog["toyrl"].pk}
    asked = olive.post(PAGE.format(alpha.slug), form)
    page = asked.content.decode()
    assert asked.status_code == 200 and "Remove landings too?" in page
    assert "Clip-higher&#x27;s landing in toyrl (2025-04-02, clip_ratio_high)" in page
    assert Framework.objects.filter(pk=catalog["toyrl"].pk).exists()
    done = olive.post(PAGE.format(alpha.slug), {**form, "confirm": "yes"})
    assert done.status_code == 302
    assert not Framework.objects.filter(pk=catalog["toyrl"].pk).exists()
    assert not OptionName.objects.filter(name="gspo").exists()
    entry = AuditEntry.objects.get(study=alpha, action="framework.remove")
    assert entry.details["landings_removed"] and entry.actor == people["olive"]


def test_an_api_confirm_that_is_not_a_boolean_is_a_400(alpha, catalog, people, client_for):
    response = client_for(people["olive"]).delete(
        api(alpha.slug, f"frameworks/{catalog['toyrl'].pk}/?confirm=perhaps"))
    assert response.status_code == 400 and "confirm" in response.json()


# --- option names and the history scan --------------------------------------------------

@pytest.fixture
def repo(tmp_path):
    """toyrl's history: `clip_high` in February, renamed `clip_ratio_high` in April."""
    repo = Repo(tmp_path / "toyrl")
    repo.commit("Trainer", "2025-01-10", {"trainer.py": "lr = 1\n"})
    repo.commit("Asymmetric clip (#7)", "2025-02-05", {"trainer.py": "lr = 1\nclip_high = 2\n"})
    repo.commit("Rename (#9)", "2025-04-02", {"trainer.py": "lr = 1\nclip_ratio_high = 2\n"})
    return repo


def landed_on(method, framework):
    return Landing.objects.get(method=method, framework=framework).committed_at.date().isoformat()


def test_an_added_option_name_is_searched_through_the_whole_history(alpha, catalog, repo, people,
                                                                    client_for):
    clip, toyrl = catalog["clip"], catalog["toyrl"]
    catalog["landing"].delete()
    landings.scan_framework(toyrl, repo.path)
    assert landed_on(clip, toyrl) == "2025-04-02"  # the renamed option, later than the method
    response = client_for(people["olive"]).post(
        api(alpha.slug, f"methods/{clip.pk}/option-names/"),
        {"framework": toyrl.pk, "name": "clip_high"}, content_type="application/json")
    assert response.status_code == 201
    repo.commit("Unrelated", "2025-05-01", {"other.py": "x = 1\n"})
    landings.scan_framework(toyrl, repo.path)
    assert landed_on(clip, toyrl) == "2025-02-05"  # found in commits before the last scan


def test_renaming_an_option_name_reopens_the_scan_for_it(alpha, catalog, repo, people,
                                                         client_for):
    """The landing found with the old name goes (after confirmation); the next scan searches
    the new name from the first commit, though the last scan read the history already."""
    clip, toyrl = catalog["clip"], catalog["toyrl"]
    catalog["landing"].delete()
    landings.scan_framework(toyrl, repo.path)
    assert landed_on(clip, toyrl) == "2025-04-02"
    olive = client_for(people["olive"])
    form = {"action": "edit-method", "method_id": clip.pk, "name": "Clip-higher",
            "first_public": "2025-03-18", f"names_{toyrl.pk}": "clip_high"}
    asked = olive.post(PAGE.format(alpha.slug), form)
    assert "found with clip_ratio_high" in asked.content.decode()
    assert Landing.objects.filter(method=clip).exists()
    assert olive.post(PAGE.format(alpha.slug), {**form, "confirm": "yes"}).status_code == 302
    assert not Landing.objects.filter(method=clip).exists()
    assert "clip_ratio_high" not in FrameworkScan.objects.get(framework=toyrl).searched_names
    landings.scan_framework(toyrl, repo.path)
    assert landed_on(clip, toyrl) == "2025-02-05"
    actions = list(AuditEntry.objects.filter(study=alpha).order_by("pk")
                   .values_list("action", flat=True))
    assert actions == ["option_name.remove", "option_name.add"]


def test_removing_the_name_a_landing_was_found_with_through_the_api(alpha, catalog, repo,
                                                                    people, client_for):
    clip, toyrl = catalog["clip"], catalog["toyrl"]
    OptionName.objects.create(method=clip, framework=toyrl, name="clip_high")
    catalog["landing"].delete()
    landings.scan_framework(toyrl, repo.path)
    assert Landing.objects.get(method=clip).option_name == "clip_high"
    olive = client_for(people["olive"])
    option = OptionName.objects.get(name="clip_high")
    url = api(alpha.slug, f"option-names/{option.pk}/")
    assert olive.delete(url).status_code == 409
    assert olive.delete(url + "?confirm=1").status_code == 204
    landings.scan_framework(toyrl, repo.path)  # the name left is searched again in full
    assert Landing.objects.get(method=clip).option_name == "clip_ratio_high"


def test_a_name_searched_for_one_method_is_searched_again_for_another(alpha, catalog, repo,
                                                                      people, client_for):
    clip, toyrl = catalog["clip"], catalog["toyrl"]
    catalog["landing"].delete()
    OptionName.objects.create(method=clip, framework=toyrl, name="clip_high")
    landings.scan_framework(toyrl, repo.path)
    assert "clip_high" in FrameworkScan.objects.get(framework=toyrl).searched_names
    response = client_for(people["olive"]).post(
        api(alpha.slug, f"methods/{catalog['gspo'].pk}/option-names/"),
        {"framework": toyrl.pk, "name": "clip_high"}, content_type="application/json")
    assert response.status_code == 201
    landings.scan_framework(toyrl, repo.path)
    assert landed_on(catalog["gspo"], toyrl) == "2025-02-05"


def test_the_framework_page_offers_the_scan_to_owners_only(alpha, catalog, people, client_for,
                                                           settings, tmp_path, repo,
                                                           django_capture_on_commit_callbacks):
    settings.IMPORT_DIR = tmp_path
    toyrl = catalog["toyrl"]
    catalog["landing"].delete()
    url = f"/studies/{alpha.slug}/frameworks/{toyrl.pk}/"
    assert "Scan the history" not in client_for(people["vera"]).get(url).content.decode()
    olive = client_for(people["olive"])
    page = olive.get(url).content.decode()
    assert "Scan the history" in page and "Edit option names" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = olive.post(url, {"repo": repo.path.name})
    assert response.status_code == 302 and "/jobs/" in response["Location"]
    job = olive.get(response["Location"].rstrip("/").replace("/jobs/", "/api/jobs/") + "/").json()
    assert job["status"] == "done" and job["done"] == job["total"] == 3  # commits read
    assert landed_on(catalog["clip"], toyrl) == "2025-04-02"


# --- the audit trail ---------------------------------------------------------------------

def test_every_change_is_audited_with_who_and_what(alpha, catalog, people, client_for):
    olive = client_for(people["olive"])

    def send(method, tail, body=None):
        response = getattr(olive, method)(api(alpha.slug, tail), body or {},
                                          content_type="application/json")
        assert response.status_code < 300, response.content
        return response.json() if response.content else None

    made = send("post", "methods/", {"name": "RLOO", "first_public": "2024-02-22"})
    send("patch", f"methods/{made['id']}/", {"failure_addressed": "Groups without signal"})
    send("patch", f"methods/{made['id']}/", {"failure_addressed": "Groups without signal"})
    option = send("post", f"methods/{made['id']}/option-names/",
                  {"framework": catalog["minirl"].pk, "name": "rloo"})
    send("delete", f"option-names/{option['id']}/")
    framework = send("post", "frameworks/", {"name": "slime", "repository": "THUDM/slime"})
    send("patch", f"frameworks/{framework['id']}/", {"main_branch": "dev"})
    send("delete", f"frameworks/{framework['id']}/")
    send("delete", f"methods/{made['id']}/")
    entries = list(AuditEntry.objects.filter(study=alpha).order_by("pk"))
    assert [e.action for e in entries] == [
        "method.add", "method.edit", "option_name.add", "option_name.remove", "framework.add",
        "framework.edit", "framework.remove", "method.remove"]
    assert {e.actor for e in entries} == {people["olive"]}
    assert entries[1].details == {"changes": {"failure_addressed": {
        "from": "", "to": "Groups without signal"}}}
    assert entries[5].details["changes"]["main_branch"] == {"from": "main", "to": "dev"}


# --- query counts -------------------------------------------------------------------------

def fill_catalog(study, methods, frameworks):
    made = [Framework.objects.create(study=study, name=f"fw{n}", repository=f"lab/fw{n}")
            for n in range(frameworks)]
    for m in range(methods):
        method = Method.objects.create(study=study, name=f"method {m}", first_public="2025-01")
        for framework in made:
            OptionName.objects.create(method=method, framework=framework, name=f"opt_{m}")
            OptionName.objects.create(method=method, framework=framework, name=f"old_opt_{m}")
        Landing.objects.create(method=method, framework=made[0], option_name=f"opt_{m}",
                               commit="b" * 40, committed_at=datetime(2025, 2, 1, tzinfo=UTC))
    return Method.objects.filter(study=study).first()


def test_the_edit_page_and_lists_cost_the_same_queries_whatever_the_catalog_size(people,
                                                                               client_for):
    small = factories.study("Small catalog", owner=people["olive"])
    large = factories.study("Large catalog", owner=people["olive"])
    for study in (small, large):
        factories.member(study, people["olive"], Role.OWNER)
    first_small = fill_catalog(small, 2, 2)
    first_large = fill_catalog(large, 12, 7)
    olive = client_for(people["olive"])
    for url in (PAGE, PAGE + "?method={}", "/api/studies/{}/methods/",
                "/api/studies/{}/frameworks/"):
        counts = [page_queries(olive, url.format(study.slug, first.pk))
                  for study, first in ((small, first_small), (large, first_large))]
        assert counts[0] == counts[1], (url, counts)


# --- manage.py catalog -------------------------------------------------------------------

def test_catalog_export_import_round_trip_is_idempotent(alpha, catalog, people, tmp_path, capsys):
    out = tmp_path / "catalog.json"
    call_command("catalog", alpha.slug, "--export", str(out))
    data = json.loads(out.read_text())
    assert data["methods"][0]["option_names"] == {"toyrl": ["clip_ratio_high"]}
    copy = factories.study("Copy", owner=people["olive"])
    call_command("catalog", copy.slug, "--import", str(out), "--user", "olive")
    assert "2 frameworks added" in capsys.readouterr().out
    audited = AuditEntry.objects.filter(study=copy).count()
    call_command("catalog", copy.slug, "--import", str(out))
    assert "0 frameworks added, 0 frameworks changed, 0 methods added, 0 methods changed, " \
           "0 option names added" in capsys.readouterr().out
    assert AuditEntry.objects.filter(study=copy).count() == audited
    again = tmp_path / "again.json"
    call_command("catalog", copy.slug, "--export", str(again))
    assert again.read_bytes() == out.read_bytes()
    assert AuditEntry.objects.filter(study=copy, actor=people["olive"]).count() == audited


def test_catalog_import_adds_and_updates_but_never_removes(alpha, catalog, tmp_path, capsys):
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"frameworks": [{"name": "toyrl", "repository": "example/toy2"}],
                                "methods": [{"name": "GSPO", "first_public": "2025-07-24",
                                             "option_names": {"toyrl": ["gspo", "seq_is"]}}]}))
    call_command("catalog", alpha.slug, "--import", str(path), "--dry-run")
    assert "1 frameworks changed" in capsys.readouterr().out
    assert Framework.objects.get(name="toyrl").repository == "example/toyrl"  # dry run
    call_command("catalog", alpha.slug, "--import", str(path))
    assert "1 methods changed, 1 option names added" in capsys.readouterr().out
    assert Framework.objects.get(name="toyrl").repository == "example/toy2"
    assert Method.objects.get(study=alpha, name="GSPO").first_public == "2025-07-24"
    assert Method.objects.filter(study=alpha).count() == 2  # Clip-higher, not in the file, stays


def test_catalog_import_names_every_error_and_writes_nothing(alpha, catalog, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({
        "frameworks": [{"name": "new", "repository": "not a repository"}],
        "methods": [{"name": "A", "first_public": "2025-13"},
                    {"name": "a", "first_public": "2025", "option_names": {"nowhere": ["x"]}},
                    "not an object"]}))
    before = snapshot(alpha)
    with pytest.raises(CommandError) as refused:
        call_command("catalog", alpha.slug, "--import", str(path))
    message = str(refused.value)
    for where in ["frameworks[0].repository", "methods[0].first_public", "methods[1].name",
                  "methods[1].option_names.nowhere", "methods[2]:"]:
        assert where in message
    assert snapshot(alpha) == before
    path.write_text("{not json")
    with pytest.raises(CommandError, match="not JSON"):
        call_command("catalog", alpha.slug, "--import", str(path))

"""Calibration set up by the owner (issue 14): items from the pool, reference answers on
the coding form, the pass threshold, waivers, who passed. Pages, API and command.

The people of alpha (tests/conftest.py): olive owns it, cora and cyril code, ada
adjudicates, vera views, otto is a stranger. The reference answers hold a sentinel
text answer that must never reach anyone but the owner."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client

from coding.labeling import calibration, queue
from coding.models import AuditEntry, Item, Membership
from ingest.models import Document, Snapshot, content_sha256
from tests import factories
from tests.conftest import page_queries
from workbench.models import ApiToken

SENTINEL = "REFERENCE-SENTINEL-7731"
REFERENCE = {"label": "rl_method", "scope": "general", "size_b": 7,
             "failures": ["entropy_collapse"], "code_released": "yes"}
SECRET_REFERENCE = {**REFERENCE, "note": SENTINEL}
CODERS_AND_OTHERS = ("cora", "cyril", "ada", "vera")


@pytest.fixture
def calibrated(alpha, people):
    """alpha with one calibration item (paper 50) whose reference holds the sentinel."""
    item = factories.paper_item(alpha, alpha.paper_codebook, 50)
    calibration.add_items(alpha, people["olive"], ids=[item.pk])
    item.refresh_from_db()
    calibration.set_reference(item, SECRET_REFERENCE, people["olive"])
    alpha.calibration_item = item
    return alpha


def api(person):
    _, key = ApiToken.objects.create(person, name="calibration test")
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def send(client, method, url, body=None):
    if method == "get":
        return client.get(url)
    return getattr(client, method)(url, json.dumps(body or {}), content_type="application/json")


def urls(study, item):
    page, base = f"/studies/{study.slug}/calibration/", f"/api/studies/{study.slug}/calibration/"
    return [("get", page), ("post", page), ("get", f"{page}{item.pk}/reference/"),
            ("post", f"{page}{item.pk}/reference/"), ("get", base), ("patch", base),
            ("post", f"{base}items/"), ("delete", f"{base}items/{item.pk}/"),
            ("get", f"{base}items/{item.pk}/reference/"),
            ("put", f"{base}items/{item.pk}/reference/")]


# --- who may: owners only, and nothing leaks ------------------------------------------------

def test_coders_adjudicators_and_viewers_are_refused_everything_and_change_nothing(
        calibrated, people, client_for):
    item = calibrated.calibration_item
    body = {"threshold": 0.1, "items": [item.pk], "values": {"label": "analysis"},
            "waived": {"cora": True}}
    form = {"action": "threshold", "percent": "10", "item": item.pk, "q-label": "analysis"}
    for name in (*CODERS_AND_OTHERS, "otto"):
        client = client_for(people[name])
        for method, url in urls(calibrated, item):
            answer = (client.post(url, form) if method == "post" and "/api/" not in url
                      else send(client, method, url, body))
            expected = 404 if name == "otto" else 403
            assert answer.status_code == expected, (name, method, url)
            assert SENTINEL not in answer.content.decode(), (name, method, url)
    item.refresh_from_db()
    calibrated.refresh_from_db()
    assert item.round == Item.Round.CALIBRATION and item.reference_values == SECRET_REFERENCE
    assert calibrated.calibration_threshold == 0.8
    assert not Membership.objects.filter(calibration_waived=True).exists()


def test_the_coding_page_and_api_of_a_calibration_item_never_hold_its_reference(
        calibrated, people, client_for):
    cora = people["cora"]
    held = queue.next_item(calibrated, cora)
    assert held.item_id == calibrated.calibration_item.pk
    page = client_for(cora).get(f"/studies/{calibrated.slug}/code/{held.pk}/").content.decode()
    assert "Invented paper number 50" in page  # the item is there …
    assert SENTINEL not in page  # … its reference is not, not even as a pre-filled answer
    assert " checked" not in page
    coder_api = api(cora)
    for answer in (send(coder_api, "post", f"/api/studies/{calibrated.slug}/next/"),
                   coder_api.get(f"/api/studies/{calibrated.slug}/assignments/{held.pk}/")):
        assert answer.status_code == 200
        assert SENTINEL not in answer.content.decode() and "reference" not in answer.json()["item"]
    # Nor do the pages and lists of those who may see the pool or review it.
    for name, url in [("ada", f"/api/studies/{calibrated.slug}/items/"),
                      ("vera", f"/api/studies/{calibrated.slug}/items/"),
                      ("ada", f"/studies/{calibrated.slug}/review/{held.item_id}/"),
                      ("ada", f"/api/studies/{calibrated.slug}/items/{held.item_id}/review/"),
                      ("vera", f"/studies/{calibrated.slug}/")]:
        answer = client_for(people[name]).get(url)
        assert answer.status_code < 400, url
        assert SENTINEL not in answer.content.decode(), (name, url)


def test_a_coder_waiting_on_calibration_sees_only_their_own_score(calibrated, people, client_for):
    cora, cyril = people["cora"], people["cyril"]
    factories.code(queue.next_item(calibrated, cyril).item, cyril, **REFERENCE)
    factories.code(queue.next_item(calibrated, cora).item, cora, label="analysis")
    page = client_for(cora).get(f"/studies/{calibrated.slug}/code/").content.decode()
    assert "cyril" not in page.lower() and SENTINEL not in page
    assert client_for(cora).get(f"/api/studies/{calibrated.slug}/calibration/").status_code == 403


# --- moving items between rounds -------------------------------------------------------------

def test_an_item_someone_coded_held_or_skipped_is_refused_with_the_reason(alpha, people,
                                                                          client_for):
    coded, held, skipped = alpha.papers
    factories.code(coded, people["cyril"])
    queue.assign(held, people["cora"])
    queue.skip(queue.assign(skipped, people["cyril"]), "Not in English")
    fresh = factories.paper_item(alpha, alpha.paper_codebook, 60)
    olive = client_for(people["olive"])
    answer = olive.post(f"/studies/{alpha.slug}/calibration/",
                        {"action": "add", "item": [fresh.pk, coded.pk, held.pk, skipped.pk]})
    assert answer.status_code == 400
    page = answer.content.decode()
    assert f"{coded.document.key}: coded by 1 coder in the main round" in page
    assert f"{held.document.key}: held by 1 coder right now" in page
    assert f"{skipped.document.key}: skipped by 1 coder" in page
    refused = send(api(people["olive"]), "post", f"/api/studies/{alpha.slug}/calibration/items/",
                   {"items": [fresh.pk], "document_keys": [coded.document.key, "2599.99999"]})
    assert refused.status_code == 400
    assert set(refused.json()) == {coded.document.key, "2599.99999"}
    # All or nothing: the uncoded item named with them did not move either.
    assert set(Item.objects.filter(study=alpha).values_list("round", flat=True)) == {"main"}
    assert not AuditEntry.objects.filter(action="calibration.add").exists()


def test_another_studys_items_cannot_be_named(calibrated, beta, people, client_for):
    theirs = factories.paper_item(beta, factories.codebook(beta), 77)
    olive = api(people["olive"])
    base = f"/api/studies/{calibrated.slug}/calibration/items/"
    refused = send(olive, "post", base, {"items": [theirs.pk]})
    assert refused.status_code == 400 and refused.json() == {
        str(theirs.pk): ["no such item in this study's pool"]}
    assert olive.delete(f"{base}{theirs.pk}/").status_code == 404
    assert send(olive, "put", f"{base}{theirs.pk}/reference/",
                {"values": REFERENCE}).status_code == 404
    page = client_for(people["olive"]).post(f"/studies/{calibrated.slug}/calibration/",
                                            {"action": "remove", "item": theirs.pk})
    assert page.status_code == 404
    theirs.refresh_from_db()
    assert (theirs.round, theirs.reference_values) == ("main", None)


def test_a_reference_for_an_item_moved_back_meanwhile_is_refused(calibrated, people):
    item = calibrated.calibration_item  # read before …
    calibration.remove_item(calibrated, item, people["olive"])  # … another request moves it
    with pytest.raises(ValidationError, match="only a calibration item"):
        calibration.set_reference(item, REFERENCE, people["olive"])
    item.refresh_from_db()
    assert item.reference_values is None


def test_a_lapsed_lease_does_not_tie_an_item_to_its_round(alpha, people):
    item = alpha.papers[0]
    assignment = queue.assign(item, people["cora"])
    type(assignment).objects.filter(pk=assignment.pk).update(
        leased_until="2000-01-01T00:00:00Z")
    queue.release_expired(alpha)
    assert calibration.add_items(alpha, people["olive"], ids=[item.pk])["added"] == [
        item.document.key]
    item.refresh_from_db()
    assert (item.round, item.target, item.taken) == ("calibration", 0, 0)


def test_a_calibration_item_a_coder_has_coded_stays(calibrated, people, client_for):
    item = calibrated.calibration_item
    factories.code(queue.next_item(calibrated, people["cora"]).item, people["cora"], **REFERENCE)
    answer = client_for(people["olive"]).post(f"/studies/{calibrated.slug}/calibration/",
                                              {"action": "remove", "item": item.pk})
    assert answer.status_code == 400
    assert (f"{item.document.key}: coded by 1 coder in calibration; its codings count toward "
            "their scores" in answer.content.decode())
    refused = api(people["olive"]).delete(
        f"/api/studies/{calibrated.slug}/calibration/items/{item.pk}/")
    assert refused.status_code == 400 and item.document.key in refused.json()
    item.refresh_from_db()
    assert item.round == "calibration" and item.reference_values == SECRET_REFERENCE


def test_an_uncoded_calibration_item_goes_back_to_the_main_round(calibrated, people, client_for):
    item = calibrated.calibration_item
    answer = client_for(people["olive"]).post(f"/studies/{calibrated.slug}/calibration/",
                                              {"action": "remove", "item": item.pk}, follow=True)
    assert answer.status_code == 200 and "is back in the main round" in answer.content.decode()
    item.refresh_from_db()
    assert (item.round, item.target, item.reference_values) == ("main", calibrated.overlap, None)
    entry = AuditEntry.objects.get(action="calibration.remove")
    assert entry.actor == people["olive"] and entry.details["reference"] == SECRET_REFERENCE


def test_main_round_items_have_no_reference_routes(alpha, people, client_for):
    item = alpha.papers[0]
    olive = api(people["olive"])
    base = f"/api/studies/{alpha.slug}/calibration/items/{item.pk}/"
    assert olive.get(f"{base}reference/").status_code == 404
    assert send(olive, "put", f"{base}reference/", {"values": REFERENCE}).status_code == 404
    assert olive.delete(base).status_code == 404
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/calibration/{item.pk}/reference/")
    assert page.status_code == 404
    item.refresh_from_db()
    assert item.reference_values is None


# --- reference answers -------------------------------------------------------------------------

@pytest.mark.parametrize("values,located", [
    ({**REFERENCE, "label": "nonsense"}, {"label": "'nonsense' is not one of"}),
    ({**REFERENCE, "size_b": "seven"}, {"size_b": "expected a number"}),
    ({k: v for k, v in REFERENCE.items() if k != "code_released"}, {"code_released": "required"}),
    ({**REFERENCE, "label": "analysis"}, {"scope": "not applicable"}),
    ({**REFERENCE, "extra": "x"}, {"extra": "no question 'extra'"}),
    ({**REFERENCE, "failures": ["entropy_collapse", "none", "none"]},
     {"failures": "chosen twice"}),
    ({}, {"label": "required"}),
])
def test_an_invalid_reference_is_refused_by_question_and_nothing_is_saved(
        calibrated, people, values, located):
    item = calibrated.calibration_item
    answer = send(api(people["olive"]), "put",
                  f"/api/studies/{calibrated.slug}/calibration/items/{item.pk}/reference/",
                  {"values": values})
    assert answer.status_code == 400
    errors = answer.json()
    for key, message in located.items():
        assert message in " ".join(errors[key]), errors
    item.refresh_from_db()
    assert item.reference_values == SECRET_REFERENCE
    assert AuditEntry.objects.filter(action="calibration.reference").count() == 1  # the fixture's


def test_the_reference_form_is_the_coding_form_prefilled_and_errors_sit_on_their_question(
        calibrated, people, client_for):
    calibrated.blinded_fields = ["included_in"]
    calibrated.save()
    item = calibrated.calibration_item
    item.snapshot.content["included_in"] = ["SECRET-FRAMEWORK"]
    Snapshot.objects.filter(pk=item.snapshot_id).update(content=item.snapshot.content)
    olive = client_for(people["olive"])
    url = f"/studies/{calibrated.slug}/calibration/{item.pk}/reference/"
    page = olive.get(url).content.decode()
    assert 'id="item"' in page and "Invented paper number 50" in page  # the coder's item view
    assert 'name="q-label" value="rl_method" checked' in page  # pre-filled
    assert SENTINEL in page  # the owner's own text answer
    # The field coders never see is named apart, not in the item as coders see it.
    item_view = page[page.index('id="item"'):page.index("</article>")]
    assert "SECRET-FRAMEWORK" not in item_view
    assert "Fields hidden from coders" in page and "SECRET-FRAMEWORK" in page

    bad = olive.post(url, {"q-label": "rl_method", "q-scope": "general", "q-size_b": "lots",
                           "q-failures": "none", "q-code_released": "yes"})
    assert bad.status_code == 400
    body = bad.content.decode()
    size_question = body[body.index('data-key="size_b"'):]
    assert 'class="q has-error" data-key="size_b"' in body
    assert "expected a number" in size_question[:size_question.index("</fieldset>")]
    item.refresh_from_db()
    assert item.reference_values == SECRET_REFERENCE


def test_saving_a_reference_on_the_form_stores_it_audits_it_and_opens_the_next_one(
        calibrated, people, client_for):
    second = factories.paper_item(calibrated, calibrated.paper_codebook, 51)
    calibration.add_items(calibrated, people["olive"], ids=[second.pk])
    olive = client_for(people["olive"])
    first = calibrated.calibration_item
    # A radio left checked under a question whose condition no longer holds is dropped.
    saved = olive.post(f"/studies/{calibrated.slug}/calibration/{first.pk}/reference/",
                       {"q-label": "analysis", "q-scope": "general", "q-size_b": "not_reported",
                        "q-failures": "none", "q-code_released": "no"})
    assert saved.status_code == 302
    assert saved["Location"] == f"/studies/{calibrated.slug}/calibration/{second.pk}/reference/"
    first.refresh_from_db()
    assert first.reference_values == {"label": "analysis", "size_b": "not_reported",
                                      "failures": ["none"], "code_released": "no"}
    entry = AuditEntry.objects.filter(action="calibration.reference").first()
    assert (entry.actor, entry.target) == (people["olive"], first.document.key)
    assert entry.details["from"] == SECRET_REFERENCE and entry.details["to"] == first.reference_values


# --- threshold and waivers ------------------------------------------------------------------

@pytest.mark.parametrize("threshold", [1.5, -0.1, "high", True, None])
def test_a_threshold_out_of_range_is_refused_and_nothing_changes(calibrated, people, threshold):
    answer = send(api(people["olive"]), "patch", f"/api/studies/{calibrated.slug}/calibration/",
                  {"threshold": threshold, "waived": {"cora": True}})
    assert answer.status_code == 400 and "threshold" in answer.json()
    calibrated.refresh_from_db()
    assert calibrated.calibration_threshold == 0.8
    assert not Membership.objects.filter(calibration_waived=True).exists()


def test_the_page_takes_the_threshold_as_a_percentage(calibrated, people, client_for):
    olive = client_for(people["olive"])
    url = f"/studies/{calibrated.slug}/calibration/"
    refused = olive.post(url, {"action": "threshold", "percent": "150"})
    assert refused.status_code == 400
    assert "percent: Ensure this value is less than or equal to 100" in refused.content.decode()
    assert olive.post(url, {"action": "threshold", "percent": "75"}).status_code == 302
    calibrated.refresh_from_db()
    assert calibrated.calibration_threshold == 0.75
    assert "at least <b>75%</b>" in olive.get(url).content.decode()
    entry = AuditEntry.objects.get(action="calibration.threshold")
    assert entry.details == {"from": 0.8, "to": 0.75}


def test_waiving_names_only_coders_of_the_study(calibrated, people):
    olive = api(people["olive"])
    url = f"/api/studies/{calibrated.slug}/calibration/"
    for name in ("ada", "otto", "nobody"):
        answer = send(olive, "patch", url, {"waived": {name: True}, "threshold": 0.5})
        assert answer.status_code == 400 and f"waived.{name}" in answer.json()
    calibrated.refresh_from_db()
    assert calibrated.calibration_threshold == 0.8


# --- who passed, through the real queue -------------------------------------------------------

def test_a_coder_matching_the_reference_passes_and_then_gets_main_items(alpha, people):
    olive, cora, cyril = api(people["olive"]), api(people["cora"]), api(people["cyril"])
    base = f"/api/studies/{alpha.slug}"
    extra = factories.paper_item(alpha, alpha.paper_codebook, 70)
    added = send(olive, "post", f"{base}/calibration/items/",
                 {"document_keys": [extra.document.key]})
    assert added.status_code == 200 and added.json() == {"added": [extra.document.key],
                                                         "already": []}
    assert send(olive, "put", f"{base}/calibration/items/{extra.pk}/reference/",
                {"values": REFERENCE}).status_code == 200
    assert send(olive, "patch", f"{base}/calibration/", {"threshold": 1}).status_code == 200

    for client, values in ((cora, REFERENCE), (cyril, {**REFERENCE, "label": "analysis",
                                                       "scope": None})):
        held = send(client, "post", f"{base}/next/").json()
        assert (held["item"]["id"], held["item"]["round"]) == (extra.pk, "calibration")
        values = {k: v for k, v in values.items() if v is not None}
        assert send(client, "post", f"{base}/assignments/{held['id']}/submit/",
                    {"values": values}).status_code == 201
    after = send(cora, "post", f"{base}/next/").json()
    assert after["item"]["round"] == "main"
    assert send(cyril, "post", f"{base}/next/").status_code == 204  # below the threshold

    report = olive.get(f"{base}/calibration/").json()
    coders = {c["username"]: c for c in report["coders"]}
    assert (coders["cora"]["status"], coders["cora"]["score"]) == ("passed", 1.0)
    assert coders["cyril"]["status"] == "below_threshold"
    assert coders["cyril"]["score"] == queue.calibration_score(alpha, people["cyril"]) == 0.6
    assert coders["cyril"]["differences"] == {
        "label": [{"item": extra.pk, "document_key": extra.document.key, "answer": "analysis",
                   "reference": "rl_method"}],
        "scope": [{"item": extra.pk, "document_key": extra.document.key, "answer": None,
                   "reference": "general"}]}
    assert (coders["cora"]["done"], coders["cora"]["total"]) == (1, 1)
    assert report["items"] == [{"id": extra.pk, "document_key": extra.document.key,
                                "kind": "paper", "title": extra.document.title,
                                "reference": REFERENCE, "finished": 2, "removable": False}]

    assert send(olive, "patch", f"{base}/calibration/",
                {"waived": {"cyril": True}}).status_code == 200
    assert send(cyril, "post", f"{base}/next/").json()["item"]["round"] == "main"
    assert AuditEntry.objects.filter(action="calibration.waive", target="coder cyril").exists()


def test_the_owner_page_shows_who_passed_and_where_they_differed(calibrated, people, client_for):
    cora, cyril = people["cora"], people["cyril"]
    item = calibrated.calibration_item
    calibration.change(calibrated, people["olive"], threshold=0.9)
    factories.code(queue.next_item(calibrated, cora).item, cora, **SECRET_REFERENCE)
    factories.code(queue.next_item(calibrated, cyril).item, cyril,
                   **{**SECRET_REFERENCE, "code_released": "no"})
    page = client_for(people["olive"]).get(f"/studies/{calibrated.slug}/calibration/")
    body = page.content.decode()
    assert page.status_code == 200
    assert "100%" in body and "passed" in body
    assert "83%" in body and "below threshold" in body  # 5 of 6 answers match
    assert f"<code>{item.document.key}</code>: answered <b>no</b>, reference <b>yes</b>" in body
    assert "coded: stays in calibration" in body


# --- the pool picker ----------------------------------------------------------------------------

def bulk_items(study, codebook, count, start=1000):
    """`count` uncoded main-round papers, written in a few statements."""
    documents = Document.objects.bulk_create([
        Document(kind="paper", source="test", key=f"2598.{start + n:05d}",
                 title=f"Bulk paper {start + n}", metadata={"abstract": "Invented."})
        for n in range(count)])
    snapshots = Snapshot.objects.bulk_create([
        Snapshot(document=d, number=1, content=d.content(), sha256=content_sha256(d.content()))
        for d in documents])
    Item.objects.bulk_create([
        Item(study=study, document=d, snapshot=s, codebook=codebook,
             **queue.new_item_fields(study, d)) for d, s in zip(documents, snapshots)])


def test_the_page_costs_the_same_queries_at_50_and_500_items(calibrated, people, client_for):
    for coder in (people["cora"], people["cyril"]):
        factories.code(queue.next_item(calibrated, coder).item, coder, label="analysis")
    olive = client_for(people["olive"])
    page, api_url = f"/studies/{calibrated.slug}/calibration/", f"/api/studies/{calibrated.slug}/calibration/"
    bulk_items(calibrated, calibrated.paper_codebook, 50)
    small = [page_queries(olive, url) for url in (page, page + "?q=bulk&after=1", api_url)]
    bulk_items(calibrated, calibrated.paper_codebook, 450, start=5000)
    more = [factories.paper_item(calibrated, calibrated.paper_codebook, n) for n in (81, 82)]
    calibration.add_items(calibrated, people["olive"], ids=[i.pk for i in more])
    for n, name in enumerate(("ulla", "uwe", "umar")):
        coder = factories.user(name)
        factories.member(calibrated, coder, "coder")
        factories.code(queue.next_item(calibrated, coder).item, coder, label="analysis")
    large = [page_queries(olive, url) for url in (page, page + "?q=bulk&after=1", api_url)]
    assert large == small


def test_the_pool_lists_uncoded_main_items_by_key_or_title_a_page_at_a_time(alpha, people,
                                                                         client_for):
    factories.code(alpha.papers[0], people["cora"])
    bulk_items(alpha, alpha.paper_codebook, calibration.PAGE + 5)
    first, after = calibration.pool_candidates(alpha)
    assert len(first) == calibration.PAGE and after == first[-1].pk
    rest, end = calibration.pool_candidates(alpha, after=after)
    assert len(rest) == 7 and end is None  # papers 1 and 2, and the last 5 bulk papers
    assert alpha.papers[0].pk not in {i.pk for i in first + rest}
    by_title, _ = calibration.pool_candidates(alpha, search="bulk paper 1003")
    by_key, _ = calibration.pool_candidates(alpha, search="2598.01004")
    assert [i.document.key for i in by_title] == ["2598.01003"]
    assert [i.document.key for i in by_key] == ["2598.01004"]
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/calibration/?q=2598.0100").content.decode()
    assert page.count('name="item"') == 10 and "Next page" not in page
    added = olive.post(f"/studies/{alpha.slug}/calibration/",
                       {"action": "add", "keys": "2598.01001, 2598.01002\n2598.01003",
                        "q": "2598.0100"})
    assert added.status_code == 302 and added["Location"].endswith("?q=2598.0100")
    assert set(Item.objects.filter(round="calibration").values_list(
        "document__key", flat=True)) == {"2598.01001", "2598.01002", "2598.01003"}
    assert "2598.01001" not in olive.get(f"/studies/{alpha.slug}/calibration/?q=2598.0100"
                                         ).content.decode().split('id="pool"')[1]


# --- the command ----------------------------------------------------------------------------------

def test_the_command_sets_calibration_up_and_prints_who_passed(alpha, people, tmp_path, capsys):
    key = alpha.papers[2].document.key
    call_command("calibration", alpha.slug, "--add", key)
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps(REFERENCE))
    call_command("calibration", alpha.slug, "--reference", key, str(reference))
    call_command("calibration", alpha.slug, "--threshold", "0.9")
    factories.code(queue.next_item(alpha, people["cora"]).item, people["cora"], **REFERENCE)
    capsys.readouterr()
    call_command("calibration", alpha.slug, "--status")
    out = capsys.readouterr().out
    assert "1 items, pass threshold 90%" in out and "reference entered" in out
    assert "cora" in out and "1/1 done  score 100%" in out and "passed" in out
    item = Item.objects.get(document__key=key, study=alpha)
    assert item.reference_values == REFERENCE and item.round == "calibration"
    assert AuditEntry.objects.filter(action="calibration.add", actor=None).exists()

    reference.write_text(json.dumps({**REFERENCE, "label": "nonsense"}))
    with pytest.raises(CommandError, match="label: 'nonsense' is not one of"):
        call_command("calibration", alpha.slug, "--reference", key, str(reference))
    with pytest.raises(CommandError, match="is not between 0 and 1"):
        call_command("calibration", alpha.slug, "--threshold", "80")
    with pytest.raises(CommandError, match="coded by 1 coder in calibration"):
        call_command("calibration", alpha.slug, "--remove", key)
    with pytest.raises(CommandError, match="not a calibration item"):
        call_command("calibration", alpha.slug, "--reference", alpha.papers[0].document.key,
                     str(reference))


# --- importing straight into calibration ---------------------------------------------------

def test_an_import_can_put_new_documents_straight_into_calibration(
        alpha, people, client_for, tmp_path, settings, django_capture_on_commit_callbacks):
    from tests.coding.labeling.test_pool import PAPERS, snapshot_line

    settings.IMPORT_DIR = tmp_path
    papers = tmp_path / "papers.jsonl"
    papers.write_text("\n".join(snapshot_line(*row) for row in PAPERS[:2]) + "\n")
    olive = client_for(people["olive"])
    calibration_page = olive.get(f"/studies/{alpha.slug}/calibration/").content.decode()
    assert f'href="/studies/{alpha.slug}/import/?round=calibration"' in calibration_page
    form = olive.get(f"/studies/{alpha.slug}/import/?round=calibration").content.decode()
    assert '<option value="calibration" selected>' in form
    with open(papers, "rb") as upload, django_capture_on_commit_callbacks(execute=True):
        page = olive.post(f"/studies/{alpha.slug}/import/", {
            "format": "arxiv_snapshot_file", "file": upload, "round": "calibration"})
    assert page.status_code == 302
    assert set(Item.objects.filter(study=alpha, round="calibration").values_list(
        "document__key", flat=True)) == {"2599.10001", "2599.10002"}
    assert set(Item.objects.filter(round="calibration").values_list("target", flat=True)) == {0}

    # Over the API too; documents already in the pool keep their round.
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(snapshot_line(*row) for row in PAPERS[1:]) + "\n")
    with django_capture_on_commit_callbacks(execute=True):
        started = send(api(people["olive"]), "post", f"/api/studies/{alpha.slug}/imports/", {
            "source": {"format": "arxiv_snapshot_file", "path": str(more)}, "round": "calibration"})
    assert started.status_code == 202
    assert Item.objects.filter(study=alpha, round="calibration").count() == 4
    refused = send(api(people["olive"]), "post", f"/api/studies/{alpha.slug}/imports/", {
        "source": {"format": "arxiv_snapshot_file", "path": str(more)}, "round": "warmup"})
    assert refused.status_code == 400 and "round" in refused.json()
    # The command as well.
    last = tmp_path / "last.jsonl"
    last.write_text(snapshot_line("2599.10009", "One More Paper", "Policy.", "cs.LG",
                                  "Mon, 03 Feb 2025 10:00:00 GMT") + "\n")
    call_command("import_to_study", alpha.slug, "--format", "arxiv_snapshot_file", "--path",
                 str(last), "--round", "calibration")
    assert Item.objects.get(document__key="2599.10009").round == "calibration"


@pytest.mark.parametrize("body", [
    {"values": []}, {"values": "rl_method"}, {"values": None}, {}, {"values": {"label": ["rl_method"]}},
    {"values": {**REFERENCE, "size_b": 1e308 * 10}}, {"values": {**REFERENCE, "size_b": True}},
    {"values": {**REFERENCE, "note": "x\u0000y"}}, {"values": {**REFERENCE, "failures": "none"}},
    {"values": {**REFERENCE, "lab\u202eel": "x"}}, {"values": {**REFERENCE, "note": "n" * 100_000}},
])
def test_hostile_reference_bodies_are_refused_by_name(calibrated, people, body):
    item = calibrated.calibration_item
    raw = json.dumps(body).replace("Infinity", "1e400")
    answer = api(people["olive"]).put(
        f"/api/studies/{calibrated.slug}/calibration/items/{item.pk}/reference/", raw,
        content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert answer.json()
    item.refresh_from_db()
    assert item.reference_values == SECRET_REFERENCE


@pytest.mark.parametrize("body", [
    {"items": "1"}, {"items": [0]}, {"items": [2**63]}, {"items": [1.5]}, {"document_keys": [None]},
    {"document_keys": "2599.00001"}, {"items": list(range(1, 502))}, {"document_keys": ["a\u0000"]},
])
def test_hostile_item_lists_are_refused_by_name(calibrated, people, body):
    answer = send(api(people["olive"]), "post",
                  f"/api/studies/{calibrated.slug}/calibration/items/", body)
    assert answer.status_code == 400, answer.content
    assert Item.objects.filter(round="calibration").count() == 1


def test_text_the_database_cannot_take_is_refused_by_name(calibrated, people, client_for):
    olive = client_for(people["olive"])
    url = f"/studies/{calibrated.slug}/calibration/"
    assert olive.get(url, {"q": "a\x00b"}).status_code == 200
    refused = olive.post(url, {"action": "add", "keys": "2599.00001 a\x00b"})
    assert refused.status_code == 400 and "a\\x00b: not a document key" in refused.content.decode()
    waive = olive.post(url, {"action": "waive", "coder": "co\x00ra", "waived": "1"})
    assert waive.status_code == 400 and "waived.co\\x00ra: not a coder" in waive.content.decode()
    by_api = send(api(people["olive"]), "patch", f"/api/studies/{calibrated.slug}/calibration/",
                  {"waived": {"co\u0000ra": True}})
    assert by_api.status_code == 400 and list(by_api.json()) == ["waived.co\\x00ra"]

"""Model-suggested answers (issue 16): opt-in, never in a blind round, never in reliability.

The people are conftest's: olive owns the study, cora and cyril code it, vera views.
A model rater, gpt-labeller, has labelled every paper. Of six papers two are in the
reliability sample (coded blind by two coders); the other four are coded by one coder and
may be assisted. Whether a coder saw a suggestion is decided by the server when it serves
the item; the tests below try to talk it into or out of that through every door."""

import io
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coding.access.names import pseudonyms
from coding.actions import sample
from coding.export import rows
from coding.labeling import queue, suggestions
from coding.labeling.codings import independent_codings
from coding.models import Assignment, AssistedRound, Coding, Exposure, Item
from coding.raters.imports import import_codings
from coding.raters.setup import add_rater
from tests import factories

ONE_QUESTION = {
    "name": "Screening codebook", "applies_to": "paper",
    "questions": [
        {"key": "label", "kind": "single", "text": "What does the paper do?",
         "options": [{"value": "rl_method"}, {"value": "analysis"}, {"value": "systems"}]},
    ],
}
MODEL_SAYS = "systems"  # every label of the model; the coders answer otherwise


@pytest.fixture
def study(people):
    study = factories.study("Assisted study", owner=people["olive"])
    for name in ("olive", "cora", "cyril", "vera", "ada"):
        factories.member(study, people[name], people["names"][name])
    codebook = factories.codebook(study, ONE_QUESTION)
    study.papers = [factories.paper_item(study, codebook, n) for n in range(6)]
    sample.draw_reliability_sample(study, count=2, seed=7)
    study.refresh_from_db()
    study.blind_items = list(Item.objects.filter(study=study, in_reliability_sample=True))
    study.open_items = list(Item.objects.filter(study=study, in_reliability_sample=False)
                            .order_by("pk"))
    add_rater(study, None, kind="model", name="gpt-labeller", model_version="gpt-x-2026-01-31",
              config_hash="sha256:c0ffee", provenance="zero-shot prompt v3")
    labels = "".join(json.dumps({"item": item.document.key, "rater": "gpt-labeller",
                                 "question": "label", "value": MODEL_SAYS}) + "\n"
                     for item in study.papers)
    import_codings(study, io.StringIO(labels), "jsonl")
    return study


@pytest.fixture
def assisted(study, people):
    suggestions.mark_assisted(study, people["olive"], "main", "gpt-labeller")
    return study


def page(client, study, assignment, **query):
    return client.get(f"/studies/{study.slug}/code/{assignment.pk}/", query)


def submit_page(client, study, assignment, value="analysis", **extra):
    return client.post(f"/studies/{study.slug}/code/{assignment.pk}/",
                       {"q-label": value, **extra})


def api_detail(client, study, assignment, **query):
    return client.get(f"/api/studies/{study.slug}/assignments/{assignment.pk}/", query)


def coding_of(assignment):
    return Coding.objects.filter(assignment=assignment).order_by("-revision").first()


# --- the owner's switch: never a blind round ------------------------------------------

def test_calibration_round_can_never_be_assisted(study, people, client_for):
    with pytest.raises(ValidationError, match="calibration round is blind"):
        suggestions.mark_assisted(study, people["olive"], "calibration", "gpt-labeller")
    response = client_for(people["olive"]).post(
        f"/api/studies/{study.slug}/assisted-rounds/",
        {"round": "calibration", "rater": "gpt-labeller"}, content_type="application/json")
    assert response.status_code == 400
    with pytest.raises(CommandError, match="calibration round is blind"):
        call_command("assisted_round", study.slug, "--round", "calibration",
                     "--rater", "gpt-labeller")
    assert not AssistedRound.objects.exists()


def test_a_main_round_that_is_all_reliability_sample_can_never_be_assisted(study, people,
                                                                            client_for):
    study.reliability_sample = {}  # no sample drawn: every item is in it
    study.save()
    response = client_for(people["olive"]).post(f"/studies/{study.slug}/raters/", {
        "action": "assisted", "round": "main", "rater": "gpt-labeller"})
    assert response.status_code == 400
    assert "reliability sample" in response.content.decode()
    assert not AssistedRound.objects.exists()


def test_only_a_model_rater_can_be_suggested(study, people):
    add_rater(study, None, kind="outside", name="pilot-2024")
    with pytest.raises(ValidationError, match="model raters"):
        suggestions.mark_assisted(study, people["olive"], "main", "pilot-2024")


def test_owner_marks_the_round_from_page_api_and_command(study, people, client_for):
    olive = client_for(people["olive"])
    assert olive.post(f"/studies/{study.slug}/raters/", {
        "action": "assisted", "round": "main", "rater": "gpt-labeller"}).status_code == 302
    assert AssistedRound.objects.get(study=study).rater.name == "gpt-labeller"
    listed = olive.get(f"/api/studies/{study.slug}/assisted-rounds/").json()
    assert listed == [{"round": "main", "rater": "gpt-labeller",
                       "model_version": "gpt-x-2026-01-31", "config_hash": "sha256:c0ffee"}]
    assert olive.post(f"/api/studies/{study.slug}/assisted-rounds/", {"round": "main",
                      "rater": None}, content_type="application/json").status_code == 204
    assert not AssistedRound.objects.exists()
    call_command("assisted_round", study.slug, "--rater", "gpt-labeller", stdout=io.StringIO())
    assert AssistedRound.objects.filter(study=study, round="main").exists()
    call_command("assisted_round", study.slug, "--blind", stdout=io.StringIO())
    assert not AssistedRound.objects.exists()
    assert olive.get(f"/studies/{study.slug}/raters/").status_code == 200


def test_coders_cannot_switch_a_round(assisted, people, client_for):
    cora = client_for(people["cora"])
    assert cora.post(f"/api/studies/{assisted.slug}/assisted-rounds/", {
        "round": "main", "rater": None}, content_type="application/json").status_code == 403
    assert cora.get(f"/api/studies/{assisted.slug}/assisted-rounds/").status_code == 403
    assert AssistedRound.objects.filter(study=assisted).exists()


# --- what a coder sees ----------------------------------------------------------------

def test_assisted_round_shows_the_suggestion_with_its_provenance(assisted, people, client_for):
    mine = queue.assign(assisted.open_items[0], people["cora"])
    html = page(client_for(people["cora"]), assisted, mine).content.decode()
    assert 'id="suggestion-label"' in html
    assert MODEL_SAYS in html and "gpt-labeller" in html
    assert "gpt-x-2026-01-31" in html and "sha256:c0ffee" in html
    shown = Exposure.objects.get(assignment=mine, kind="suggestion")
    assert shown.shown["value"] == MODEL_SAYS and shown.shown["rater"] == "gpt-labeller"


def test_items_in_the_reliability_sample_stay_blind_in_an_assisted_round(assisted, people,
                                                                         client_for):
    cora = client_for(people["cora"])
    mine = queue.assign(assisted.blind_items[0], people["cora"])
    assert "suggestion-label" not in page(cora, assisted, mine).content.decode()
    assert api_detail(cora, assisted, mine).json()["suggestions"] == []
    assert submit_page(cora, assisted, mine).status_code == 302
    assert coding_of(mine).assisted is False
    assert not Exposure.objects.filter(kind="suggestion").exists()


@pytest.mark.parametrize("query", [{"suggestions": "1"}, {"assisted": "1"},
                                   {"rater": "gpt-labeller", "suggest": "yes"}])
def test_a_coder_in_a_blind_round_asking_for_suggestions_gets_none(study, people, client_for,
                                                                   query):
    cora = client_for(people["cora"])
    mine = queue.assign(study.open_items[0], people["cora"])
    html = page(cora, study, mine, **query).content.decode()
    # (the language switcher repeats the query string, so look for what it cannot hold)
    assert "suggestion-label" not in html and "Suggestion" not in html
    assert "gpt-x-2026-01-31" not in html and "sha256:c0ffee" not in html
    payload = api_detail(cora, study, mine, **query).json()
    assert payload["suggestions"] == [] and "gpt-labeller" not in json.dumps(payload)
    assert cora.get(f"/api/studies/{study.slug}/raters/").status_code == 403
    # Claiming to have seen one changes nothing either way.
    assert cora.post(f"/api/studies/{study.slug}/assignments/{mine.pk}/submit/", {
        "values": {"label": "analysis"}, "assisted": True},
        content_type="application/json").status_code in (201, 400)
    assert not Exposure.objects.filter(kind="suggestion").exists()


def test_a_client_cannot_unclaim_a_suggestion_it_was_served(assisted, people, client_for):
    cora = client_for(people["cora"])
    mine = queue.assign(assisted.open_items[0], people["cora"])
    assert api_detail(cora, assisted, mine).json()["suggestions"][0]["value"] == MODEL_SAYS
    response = cora.post(f"/api/studies/{assisted.slug}/assignments/{mine.pk}/submit/", {
        "values": {"label": "analysis"}}, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["latest"]["assisted"] is True
    assert coding_of(mine).assisted is True


def test_an_old_tab_opened_in_a_blind_round_submits_an_unassisted_coding(study, people,
                                                                          client_for):
    """The page was served blind; the owner then made the round assisted. The coder never
    saw a suggestion, so the submission from that tab is not assisted."""
    cora = client_for(people["cora"])
    mine = queue.assign(study.open_items[0], people["cora"])
    assert "suggestion-label" not in page(cora, study, mine).content.decode()
    suggestions.mark_assisted(study, people["olive"], "main", "gpt-labeller")
    assert submit_page(cora, study, mine).status_code == 302
    assert coding_of(mine).assisted is False
    assert independent_codings(study).filter(assignment=mine).exists()


def test_round_switched_from_assisted_to_blind_mid_sitting(assisted, people, client_for):
    """The first item was served with a suggestion; the owner makes the round blind; the
    coder submits it (assisted), then gets the next item with no suggestion (not
    assisted), and a revision of the first stays assisted though no suggestion shows now."""
    cora = client_for(people["cora"])
    first = queue.assign(assisted.open_items[0], people["cora"])
    assert "suggestion-label" in page(cora, assisted, first).content.decode()
    suggestions.mark_blind(assisted, people["olive"], "main")
    assert submit_page(cora, assisted, first).status_code == 302
    assert coding_of(first).assisted is True
    # The page's submit reserved her next item: the round is blind now, so no suggestion.
    second = Assignment.objects.get(study=assisted, coder=people["cora"], status="active")
    assert "suggestion-label" not in page(cora, assisted, second).content.decode()
    assert submit_page(cora, assisted, second).status_code == 302
    assert coding_of(second).assisted is False
    revisit = page(cora, assisted, first).content.decode()
    assert "suggestion-label" not in revisit
    assert submit_page(cora, assisted, first, value="rl_method",
                       opened="2026-01-01T00:00:00+00:00").status_code == 302
    assert [c.assisted for c in Coding.objects.filter(assignment=first).order_by("revision")] \
        == [True, True]
    assert coding_of(first).phase == Coding.Phase.INDEPENDENT  # assisted, not informed
    independent = set(independent_codings(assisted).values_list("assignment_id", flat=True))
    assert first.pk not in independent and second.pk in independent


def test_replaying_an_assisted_submit_stays_assisted(assisted, people, client_for):
    cora = client_for(people["cora"])
    mine = queue.assign(assisted.open_items[0], people["cora"])
    page(cora, assisted, mine)
    body = {"q-label": "analysis", "opened": "2026-01-01T00:00:00+00:00"}
    url = f"/studies/{assisted.slug}/code/{mine.pk}/"
    assert cora.post(url, body).status_code == 302
    suggestions.mark_blind(assisted, people["olive"], "main")
    assert cora.post(url, body).status_code == 302  # the same request again, the round blind
    assert cora.post(f"/api/studies/{assisted.slug}/assignments/{mine.pk}/submit/", {
        "values": {"label": "analysis"}, "assisted": False},
        content_type="application/json").status_code == 201
    assert list(Coding.objects.filter(assignment=mine).values_list("assisted", flat=True)) \
        == [True, True, True]
    assert not independent_codings(assisted).filter(assignment=mine).exists()


# --- assisted codings never feed reliability, and the export says so -------------------

def test_assisted_codings_are_kept_out_of_reliability_and_marked_in_the_export(
        assisted, people, client_for):
    cora = client_for(people["cora"])
    helped = queue.assign(assisted.open_items[0], people["cora"])
    page(cora, assisted, helped)
    submit_page(cora, assisted, helped)
    cyril = client_for(people["cyril"])
    blind = queue.assign(assisted.blind_items[0], people["cyril"])
    page(cyril, assisted, blind)
    submit_page(cyril, assisted, blind)
    independent = set(independent_codings(assisted).values_list("assignment_id", flat=True))
    assert independent == {blind.pk}
    assert rows.independent_count(assisted) == 1
    long = [r for r in rows.long(assisted, pseudonyms(assisted))
            if r["rater_kind"] == "coder"]
    by_item = {r["item_id"]: r for r in long}
    assert by_item[helped.item_id]["assisted"] is True
    assert by_item[helped.item_id]["independent"] is False
    assert by_item[blind.item_id]["assisted"] is False
    assert by_item[blind.item_id]["independent"] is True
    from coding.export.fields import LONG_FIELDS
    described = {f.name: f.description for f in LONG_FIELDS}
    assert "suggest" in described["assisted"] and "reliability" in described["assisted"]


def test_the_api_schema_documents_suggestions_and_assisted_rounds(client_for, people):
    schema = client_for(people["olive"]).get("/api/schema/", {"format": "json"}).json()
    assert "/api/studies/{slug}/assisted-rounds/" in schema["paths"]
    coder = schema["components"]["schemas"]["CoderAssignment"]["properties"]
    assert "suggestions" in coder
    assert "assisted" in coder["suggestions"]["description"]
    assert "reliability" in coder["suggestions"]["description"]


def test_the_assisted_rounds_list_costs_the_same_queries_at_any_size(assisted, people,
                                                                      client_for):
    olive = client_for(people["olive"])
    url = f"/api/studies/{assisted.slug}/assisted-rounds/"
    olive.get(url)

    def queries():
        with CaptureQueriesContext(connection) as captured:
            assert olive.get(url).status_code == 200
        return len(captured)

    small = queries()
    for n in range(6, 40):
        factories.paper_item(assisted, assisted.papers[0].codebook, n)
    for n in range(5):
        add_rater(assisted, None, kind="model", name=f"model-{n}", model_version="v1")
    assert queries() == small


def test_serving_a_suggestion_costs_a_bounded_number_of_queries(assisted, people,
                                                               django_assert_max_num_queries):
    mine = queue.assign(assisted.open_items[0], people["cora"])
    with django_assert_max_num_queries(3):
        assert suggestions.suggestions_for(mine)["label"]["value"] == MODEL_SAYS

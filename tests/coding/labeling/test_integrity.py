"""Issue 15: what a careless or adversarial coder could do, tried against the server.

One test (or group) per finding; each failed on the code before the fix:
1. a decision laundered into an "independent" coding through feedback;
2. a lapsed lease's submission recorded after the slot went to another coder;
3. one coder holding many active items through parallel "next" requests;
5. a naive date in the coding form: a 500 that lost the answers;
7. anything stored: huge notes, thousands of quotes, keys that are not questions,
   numbers out of bounds, an exclusive option with others;
8. coders seeing other coders' names; a GET that reserves an item.
(4 and 6 are in tests/coding/export/test_export_blinding.py and tests/workbench/test_job_privacy.py.)
"""

import json
import threading
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, connections
from django.utils import timezone

from coding.actions.submit import submit
from coding.adjudication import decisions as adjudication
from coding.labeling import queue
from coding.labeling.codings import NotHeld, independent_codings
from coding.models import Assignment, Coding, Exposure, Item, Role
from tests import factories
from tests.conftest import at_once

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
FORM = {"q-label": "analysis", "q-size_b": "7", "q-failures": ["none"], "q-code_released": "no"}
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="real concurrency needs PostgreSQL's row locks; SQLite serialises writers")


def api(study):
    return f"/api/studies/{study.slug}"


# --- 1. informed is not independent ---------------------------------------------------


@pytest.fixture
def decided(alpha, people):
    """Cora and Cyril differ on the label of the first paper; Ada decides rl_method."""
    alpha.show_feedback = True
    alpha.save()
    item = alpha.papers[0]
    factories.code(item, people["cora"], label="analysis")
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    adjudication.decide(item, "label", "rl_method", people["ada"], "The abstract names a new loss.")
    return alpha


def test_a_revision_after_seeing_the_decision_is_informed_and_never_independent(
        decided, people, client_for):
    cora = client_for(people["cora"])
    feedback = cora.get(f"{api(decided)}/feedback/").json()
    shown = feedback["results"][0]["decision"]
    assert shown["value"] == "rl_method" and shown["method"] == "adjudicated"
    mine = Assignment.objects.get(coder=people["cora"], item=decided.papers[0])
    assert Exposure.objects.filter(assignment=mine, kind="feedback", question_key="label").exists()

    # Cora copies the decided value into her own assignment.
    response = cora.post(f"{api(decided)}/assignments/{mine.pk}/submit/",
                         {"values": {**ANSWERS, "label": "rl_method", "scope": "general"}},
                         content_type="application/json")
    assert response.status_code == 201
    revision = Coding.objects.get(assignment=mine, revision=2)
    assert revision.phase == Coding.Phase.INFORMED
    # Reliability still reads her first, independent answer: the disagreement stays.
    independent = {c.assignment.coder.username: c.values["label"]
                   for c in independent_codings(decided)}
    assert independent == {"cora": "analysis", "cyril": "rl_method"}
    rows = adjudication.disagreements(decided, status="all")
    assert (decided.papers[0].pk, "label") in [(r.item.pk, r.question.key) for r in rows]


def test_a_revision_is_informed_when_feedback_could_show_the_decision(decided, people):
    """Not fetching the feedback first is no way round: the decision was there to see."""
    mine = Assignment.objects.get(coder=people["cora"], item=decided.papers[0])
    coding = submit(mine, {**ANSWERS, "label": "rl_method", "scope": "general"})
    assert coding.phase == Coding.Phase.INFORMED


def test_feedback_shows_value_and_method_but_reasons_only_when_the_owner_allows(
        decided, people, client_for):
    cora = client_for(people["cora"])
    shown = cora.get(f"{api(decided)}/feedback/").json()["results"][0]["decision"]
    assert "rationale" not in shown and "decided_by" not in shown
    page = cora.get(f"/studies/{decided.slug}/feedback/").content.decode()
    assert "new loss" not in page and "ada" not in page

    decided.feedback_shows_reasons = True
    decided.save()
    shown = cora.get(f"{api(decided)}/feedback/").json()["results"][0]["decision"]
    assert shown["rationale"] == "The abstract names a new loss."
    assert shown["decided_by"] == "adjudicator_1"  # a pseudonym: names stay hidden


def test_the_coding_page_tells_the_coder_a_revision_will_be_informed(decided, people, client_for):
    mine = Assignment.objects.get(coder=people["cora"], item=decided.papers[0])
    page = client_for(people["cora"]).get(f"/studies/{decided.slug}/code/{mine.pk}/")
    assert "recorded as <b>informed</b>" in page.content.decode()


def test_a_revision_without_anything_seen_stays_independent(alpha, people):
    coding = factories.code(alpha.papers[0], people["cora"])
    revision = submit(coding.assignment, {**ANSWERS, "label": "rl_method", "scope": "general"})
    assert revision.phase == Coding.Phase.INDEPENDENT


# --- 2. a submission checks, under the lock, that the coder still holds the item ----------


@pytest.fixture
def lapsed(alpha, people):
    """One item wanting two coders: Otto holds it, Cora's lease lapsed, then Cyril asks for
    the next item and is given Cora's slot."""
    factories.member(alpha, people["otto"], Role.CODER)
    for item in alpha.papers[1:]:
        item.delete()
    queue.next_item(alpha, people["otto"])
    held = queue.next_item(alpha, people["cora"])
    Assignment.objects.filter(pk=held.pk).update(leased_until=timezone.now() - timedelta(minutes=1))
    given = queue.next_item(alpha, people["cyril"])
    assert given.item_id == held.item_id
    return held


def test_a_lapsed_lease_whose_slot_was_given_away_records_nothing_and_keeps_the_answers(
        alpha, people, client_for, lapsed):
    response = client_for(people["cora"]).post(
        f"{api(alpha)}/assignments/{lapsed.pk}/submit/", {"values": ANSWERS},
        content_type="application/json")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "not_held" and body["work"]["values"] == ANSWERS
    lapsed.refresh_from_db()
    assert lapsed.status == Assignment.Status.RELEASED and lapsed.draft["values"] == ANSWERS
    assert not Coding.objects.exists()
    item = Item.objects.get(pk=lapsed.item_id)
    assert item.taken == 2 == item.assignments.filter(status__in=["active", "submitted"]).count()


def test_the_coding_page_answers_409_with_the_answers_still_on_it(alpha, people, client_for,
                                                                  lapsed):
    response = client_for(people["cora"]).post(f"/studies/{alpha.slug}/code/{lapsed.pk}/",
                                               {**FORM, "q-label": "rl_method",
                                                "q-scope": "embedded"})
    assert response.status_code == 409
    page = response.content.decode()
    assert "kept as a draft" in page and 'value="embedded" checked' in page
    assert not Coding.objects.exists()


def test_a_lapsed_lease_is_taken_again_when_the_item_still_has_room(alpha, people):
    for item in alpha.papers[1:]:
        item.delete()
    held = queue.next_item(alpha, people["cora"])
    Assignment.objects.filter(pk=held.pk).update(leased_until=timezone.now() - timedelta(minutes=1))
    queue.release_expired(alpha)
    coding = submit(Assignment.objects.get(pk=held.pk), ANSWERS)
    assert coding.revision == 1
    assert Item.objects.get(pk=held.item_id).taken == 1


@on_postgresql
def test_submit_racing_a_lease_release_never_puts_three_coders_on_an_item(transactional_db):
    """The reported race, with real threads: Cora submits on a lapsed lease while Cyril asks
    for the next item. Whatever the order, the item never holds more than its target."""
    study = factories.study("Race study", overlap=2)
    codebook = factories.codebook(study)
    coders = [factories.user(name) for name in ("cora", "cyril", "otto")]
    for coder in coders:
        factories.member(study, coder, Role.CODER)
    cora, cyril, otto = coders
    outcomes = []
    for trial in range(12):
        item = factories.paper_item(study, codebook, trial)
        Item.objects.filter(study=study).exclude(pk=item.pk).update(deleted_at=timezone.now())
        queue.assign(item, otto)
        held = queue.assign(item, cora)
        Assignment.objects.filter(pk=held.pk).update(
            leased_until=timezone.now() - timedelta(seconds=1))
        barrier = threading.Barrier(2)

        def submit_late():
            barrier.wait()
            try:
                submit(Assignment.objects.get(pk=held.pk), ANSWERS)
                outcomes.append("recorded")
            except NotHeld:
                outcomes.append("refused")
            finally:
                connections.close_all()

        def ask_next():
            barrier.wait()
            queue.next_item(study, cyril)
            connections.close_all()

        threads = [threading.Thread(target=submit_late), threading.Thread(target=ask_next)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        item.refresh_from_db()
        holding = item.assignments.filter(status__in=["active", "submitted"]).count()
        assert holding <= 2 and item.taken == holding, (trial, holding, item.taken)
        # Clear the coders' holds for the next trial.
        Assignment.objects.filter(study=study, status="active").update(status="released")
    assert len(outcomes) == 12


# --- 3. one active item per coder and study, held by the database ---------------------------


def test_the_database_refuses_a_second_active_item_for_a_coder(alpha, people):
    queue.next_item(alpha, people["cora"])
    with pytest.raises(IntegrityError):
        Assignment.objects.create(item=alpha.papers[2], coder=people["cora"],
                                  status=Assignment.Status.ACTIVE)


def test_repeated_next_requests_return_the_same_item(alpha, people, client_for):
    cora = client_for(people["cora"])
    ids = {cora.post(f"{api(alpha)}/next/").json()["id"] for _ in range(5)}
    assert len(ids) == 1
    assert Assignment.objects.filter(coder=people["cora"], status="active").count() == 1


@on_postgresql
def test_twenty_parallel_next_requests_by_one_coder_reserve_one_item(transactional_db):
    study = factories.study("Parallel study", overlap=2)
    codebook = factories.codebook(study)
    for n in range(30):
        factories.paper_item(study, codebook, n)
    coder = factories.user("eager")
    factories.member(study, coder, Role.CODER)
    outcomes = at_once(*[lambda: queue.next_item(study, coder).pk for _ in range(20)])
    errors = [o for o in outcomes if isinstance(o, Exception)]
    assert not errors, errors
    got = outcomes
    assert len(set(got)) == 1 and len(got) == 20
    assert Assignment.objects.filter(coder=coder, status="active").count() == 1
    assert sum(Item.objects.filter(study=study).values_list("taken", flat=True)) == 1


# --- 5. bad dates are named errors, and the answers stay -----------------------------------


@pytest.mark.parametrize("opened, message", [
    ("0001-01-01T00:00:00", "time zone"),
    ("yesterday at noon", "not a date"),
])
def test_a_bad_opened_time_is_a_400_naming_it_with_the_answers_kept(
        alpha, people, client_for, opened, message):
    coding = factories.code(alpha.papers[0], people["cora"])
    url = f"/studies/{alpha.slug}/code/{coding.assignment.pk}/"
    response = client_for(people["cora"]).post(url, {**FORM, "q-label": "rl_method",
                                                     "q-scope": "embedded", "opened": opened})
    assert response.status_code == 400
    page = response.content.decode()
    assert "opened:" in page and message in page
    assert 'value="embedded" checked' in page
    assert Coding.objects.count() == 1


def test_quotes_that_are_not_json_are_a_named_error(alpha, people, client_for):
    cora = client_for(people["cora"])
    url = cora.post(f"/studies/{alpha.slug}/code/")["Location"]
    response = cora.post(url, {**FORM, "evidence": "[{not json"})
    assert response.status_code == 400 and "evidence:" in response.content.decode()
    assert not Coding.objects.exists()


# --- 7. limits, bounds and keys ---------------------------------------------------------------


@pytest.fixture
def held(alpha, people, client_for):
    cora = client_for(people["cora"])
    taken = cora.post(f"{api(alpha)}/next/").json()
    return cora, f"{api(alpha)}/assignments/{taken['id']}"


def post(client, url, body, method="post"):
    return getattr(client, method)(url, json.dumps(body), content_type="application/json")


def test_a_two_megabyte_note_is_refused_by_name(held):
    cora, url = held
    response = post(cora, f"{url}/submit/", {"values": ANSWERS, "notes": "n" * 2_000_000})
    assert response.status_code == 400 and "notes" in response.json()
    response = post(cora, f"{url}/draft/", {"values": {}, "notes": "n" * 2_000_000}, "put")
    assert response.status_code == 400 and "notes" in response.json()
    assert not Coding.objects.exists()


def test_twenty_thousand_quotes_are_refused_by_name(held):
    cora, url = held
    quotes = [{"question": "label", "field": "title", "quote": "Invented"}] * 20_000
    response = post(cora, f"{url}/submit/", {"values": ANSWERS, "evidence": quotes})
    assert response.status_code == 400 and "evidence" in response.json()
    assert not Coding.objects.exists()


@pytest.mark.parametrize("key", ["not_a_question", "la\u202ebel", "label\u2066"])
def test_a_quote_for_a_key_that_is_not_a_question_is_refused(held, key):
    cora, url = held
    quote = {"question": key, "field": "title", "quote": "Invented"}
    response = post(cora, f"{url}/submit/", {"values": ANSWERS, "evidence": [quote]})
    assert response.status_code == 400
    assert "is not a question" in response.json()["evidence"][0]
    assert "\u202e" not in response.content.decode()  # the control is shown escaped
    assert not Coding.objects.exists()


def test_an_answer_keyed_with_a_direction_control_is_refused(held):
    cora, url = held
    response = post(cora, f"{url}/submit/", {"values": {**ANSWERS, "la\u202ebel": "analysis"}})
    assert response.status_code == 400 and "direction control" in response.content.decode()
    response = post(cora, f"{url}/draft/", {"values": {"la\u202ebel": "x"}}, "put")
    assert response.status_code == 400 and "values" in response.json()


@pytest.fixture
def preset_study(people):
    """A study on the RL-inclusion preset: sizes are at least 0, 'none' is chosen alone."""
    from coding.studies.presets import PAPER_CODEBOOK

    study = factories.study("Preset study", owner=people["olive"])
    factories.member(study, people["cora"], Role.CODER)
    codebook = factories.codebook(study, PAPER_CODEBOOK)
    factories.paper_item(study, codebook, 1)
    return study


PRESET_ANSWERS = {"label": "analysis", "largest_policy_b": 7, "code_released": "no",
                  "industry_author": "no", "failure_addressed": ["none"]}


@pytest.mark.parametrize("change, field, message", [
    ({"largest_policy_b": -3}, "largest_policy_b", "at least 0"),
    ({"failure_addressed": ["none", "entropy_collapse"]}, "failure_addressed", "chosen alone"),
])
def test_codebook_bounds_and_exclusive_options_hold(preset_study, people, client_for,
                                                    change, field, message):
    cora = client_for(people["cora"])
    taken = cora.post(f"{api(preset_study)}/next/").json()
    url = f"{api(preset_study)}/assignments/{taken['id']}/submit/"
    assert post(cora, url, {"values": PRESET_ANSWERS}).status_code == 201
    response = post(cora, url, {"values": {**PRESET_ANSWERS, **change}})
    assert response.status_code == 400 and message in response.json()[field][0]
    assert Coding.objects.count() == 1


def test_the_codebook_api_and_page_show_bounds_and_exclusive_options(preset_study, people,
                                                                     client_for):
    cora = client_for(people["cora"])
    books = cora.get(f"{api(preset_study)}/codebooks/").json()["results"]
    questions = {q["key"]: q for q in books[0]["versions"][0]["questions"]}
    assert questions["largest_policy_b"]["min_value"] == 0
    assert [o["value"] for o in questions["failure_addressed"]["options"] if o["exclusive"]] == ["none"]


# --- 8. pseudonyms, and no reservation on a GET -----------------------------------------------


def test_coders_see_other_members_by_pseudonym_unless_the_owner_shows_names(alpha, people,
                                                                           client_for):
    cora = client_for(people["cora"])
    page = cora.get(f"/studies/{alpha.slug}/").content.decode()
    members = cora.get(f"{api(alpha)}/members/").json()["results"]
    for name in ("cyril", "Cyril", "olive", "ada"):
        assert name not in page
        assert name not in json.dumps(members)
    assert "you" in {m["username"] for m in members}
    assert {"coder_1", "coder_2"} & {m["username"] for m in members}
    # Probing by username finds nothing out either.
    assert len(cora.get(f"{api(alpha)}/members/?username=cyril").json()["results"]) == len(members)

    alpha.coders_see_names = True
    alpha.save()
    assert "cyril" in cora.get(f"/studies/{alpha.slug}/").content.decode()
    # Owners always see names.
    assert "cyril" in client_for(people["olive"]).get(f"{api(alpha)}/members/").content.decode()


def test_opening_the_code_page_reserves_nothing_until_the_coder_presses_start(
        alpha, people, client_for):
    cora = client_for(people["cora"])
    page = cora.get(f"/studies/{alpha.slug}/code/")
    assert page.status_code == 200 and 'id="start-coding"' in page.content.decode()
    assert not Assignment.objects.exists()
    response = cora.post(f"/studies/{alpha.slug}/code/")
    assert response.status_code == 302
    held = Assignment.objects.get()
    # From then on a GET opens the item held, and still reserves nothing more.
    assert cora.get(f"/studies/{alpha.slug}/code/")["Location"].endswith(f"/code/{held.pk}/")
    assert Assignment.objects.count() == 1


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_an_informed_revision_is_exported_as_informed_and_not_independent(decided, people,
                                                                         tmp_path, fmt):
    from coding.dataset import load
    from coding.export.bundle import build_bundle

    mine = Assignment.objects.get(coder=people["cora"], item=decided.papers[0])
    submit(mine, {**ANSWERS, "label": "rl_method", "scope": "general"})
    path = tmp_path / f"bundle-{fmt}.zip"
    build_bundle(decided, path, shapes=["long"], fmt=fmt)
    long = load(path)["long"]
    rows = long[(long.question == "label") & (long.revision == 2)]
    assert list(rows.phase.astype(str)) == ["informed"]
    assert not rows.independent.astype(bool).any()

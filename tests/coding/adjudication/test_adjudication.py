"""Disagreements, decisions and the discussion step."""

import json

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from coding.actions import sample
from coding.actions.submit import submit
from coding.adjudication import decisions as adjudication
from coding.labeling import queue
from coding.labeling.codings import independent_codings
from coding.models import Assignment, Coding, Decision, Item
from tests import factories

BASE = {"size_b": 7, "failures": ["none"], "code_released": "no"}


@pytest.fixture(autouse=True)
def run_after_commit(django_capture_on_commit_callbacks):
    """Tests run inside a transaction; run what a submission schedules after commit."""
    global after_commit
    after_commit = django_capture_on_commit_callbacks


def code(item, coder, **values):
    """Submit through the coder's door, so the item is settled as it would be."""
    assignment = (Assignment.objects.filter(item=item, coder=coder).first()
                  or queue.assign(item, coder))
    with after_commit(execute=True):
        return submit(Assignment.objects.get(pk=assignment.pk), {**BASE, **values})


@pytest.fixture
def split(alpha, people):
    """Paper 0: cora says analysis, cyril rl_method/general; paper 1: both say analysis."""
    code(alpha.papers[0], people["cora"], label="analysis")
    code(alpha.papers[0], people["cyril"], label="rl_method", scope="general")
    code(alpha.papers[1], people["cora"], label="analysis")
    code(alpha.papers[1], people["cyril"], label="analysis")
    return alpha


def current(item, key):
    return adjudication.current_decision(item, key)


def test_unanimous_answers_are_decided_automatically(split):
    agreed = split.papers[1]
    assert {d.question_key: (d.value, d.method) for d in agreed.decisions.all()} == {
        "label": ("analysis", "unanimous"), "size_b": (7, "unanimous"),
        "failures": (["none"], "unanimous"), "code_released": ("no", "unanimous"),
        "note": (None, "unanimous")}  # left unanswered by both: decided as missing


def test_an_item_coded_by_one_coder_by_design_is_decided_as_single(alpha, people):
    sample.draw_reliability_sample(alpha, count=0)
    code(alpha.papers[2], people["cora"], label="analysis")
    assert current(alpha.papers[2], "label").method == Decision.Method.SINGLE


def test_an_item_waits_for_all_its_codings_before_any_decision(alpha, people):
    code(alpha.papers[0], people["cora"], label="analysis")
    assert not Decision.objects.exists()


def test_differing_answers_wait_for_an_adjudicator(split):
    assert current(split.papers[0], "label") is None
    assert current(split.papers[0], "size_b").method == "unanimous"
    rows = adjudication.disagreements(split)
    assert {(r.item.pk, r.question.key) for r in rows} == {(split.papers[0].pk, "label"),
                                                           (split.papers[0].pk, "scope")}


def test_adjudicator_accepts_a_coders_value(split, people):
    decision = adjudication.decide(split.papers[0], "label", "rl_method", people["ada"])
    assert (decision.method, decision.decided_by, decision.value) == (
        "adjudicated", people["ada"], "rl_method")
    assert {r.question.key for r in adjudication.disagreements(split)} == {"scope"}


def test_a_value_no_coder_gave_needs_a_rationale(split, people):
    with pytest.raises(ValidationError, match="needs a rationale"):
        adjudication.decide(split.papers[0], "size_b", 13, people["ada"])
    decision = adjudication.decide(split.papers[0], "size_b", 13, people["ada"],
                                   "Table 2 reports a 13B policy.")
    assert decision.rationale == "Table 2 reports a 13B policy."


def test_an_invalid_value_is_refused_by_question(split, people):
    with pytest.raises(ValidationError) as error:
        adjudication.decide(split.papers[0], "label", "poetry", people["ada"], "why not")
    assert "label" in error.value.message_dict


def test_revising_a_decision_keeps_every_revision(split, people):
    item = split.papers[0]
    adjudication.decide(item, "label", "analysis", people["ada"])
    adjudication.decide(item, "label", "rl_method", people["olive"], "Second reading.")
    history = list(item.decisions.filter(question_key="label").order_by("revision")
                   .values_list("revision", "value", "decided_by__username"))
    assert history == [(1, "analysis", "ada"), (2, "rl_method", "olive")]
    assert current(item, "label").value == "rl_method"


def test_an_adjudicator_cannot_decide_an_item_they_coded(split, people):
    from coding.models import Membership, Role

    Membership.objects.create(study=split, user=people["cora"], role=Role.ADJUDICATOR)
    with pytest.raises(PermissionDenied):
        adjudication.decide(split.papers[0], "label", "analysis", people["cora"])
    split.allow_self_adjudication = True
    split.save()
    item = Item.objects.get(pk=split.papers[0].pk)
    assert adjudication.decide(item, "label", "analysis", people["cora"]).method == "adjudicated"


def test_a_coder_or_viewer_cannot_decide(split, people):
    for name in ("cyril", "vera"):
        with pytest.raises(PermissionDenied):
            adjudication.decide(split.papers[0], "label", "analysis", people[name])


def test_an_automatic_decision_never_replaces_an_adjudicated_one(split, people):
    item = split.papers[1]
    adjudication.decide(item, "label", "rl_method", people["ada"], "Section 3 proposes a loss.")
    adjudication.settle_item(item)
    assert current(item, "label").method == "adjudicated"


def test_settling_twice_changes_nothing(split):
    count = Decision.objects.count()
    adjudication.settle_study(split)
    assert Decision.objects.count() == count


@pytest.fixture
def discussed(alpha, people):
    alpha.discussion_step = True
    alpha.save()
    code(alpha.papers[0], people["cora"], label="analysis")
    code(alpha.papers[0], people["cyril"], label="rl_method", scope="general")
    return alpha


def test_discussion_opens_when_all_codings_are_in_and_differ(discussed):
    item = Item.objects.get(pk=discussed.papers[0].pk)
    assert item.discussion_opened_at is not None


def test_coders_see_the_disagreement_and_revise_as_reconciliation(discussed, people, client_for):
    cora = client_for(people["cora"])
    mine = Assignment.objects.get(coder=people["cora"], item=discussed.papers[0])
    page = cora.get(f"/studies/{discussed.slug}/code/{mine.pk}/").content.decode()
    # The other coder by pseudonym: the study does not show coders names.
    assert "Discussion." in page and "rl_method" in page and "coder_" in page
    assert "cyril" not in page
    with after_commit(execute=True):
        cora.post(f"/studies/{discussed.slug}/code/{mine.pk}/", {
            "q-label": "rl_method", "q-scope": "general", "q-size_b": "7",
            "q-failures": "none", "q-code_released": "no"})
    revision = Coding.objects.get(assignment=mine, revision=2)
    assert revision.phase == Coding.Phase.RECONCILIATION
    independent = {c.assignment.coder.username: c.values["label"]
                   for c in independent_codings(discussed)}
    assert independent == {"cora": "analysis", "cyril": "rl_method"}
    assert current(discussed.papers[0], "label").method == Decision.Method.CONSENSUS


def test_without_the_discussion_step_coders_never_see_each_other(split, people, client_for):
    mine = Assignment.objects.get(coder=people["cora"], item=split.papers[0])
    page = client_for(people["cora"]).get(f"/studies/{split.slug}/code/{mine.pk}/").content.decode()
    assert "Discussion." not in page and "rl_method" not in page.split("coding-form")[0]


def test_the_queue_filters_by_question_coders_and_category(split, people):
    assert [r.question.key for r in adjudication.disagreements(split, question="scope")] == ["scope"]
    assert len(adjudication.disagreements(split, coders=["cora", "cyril"])) == 2
    assert adjudication.disagreements(split, coders=["cora", "olive"]) == []
    assert [r.question.key for r in adjudication.disagreements(split, category="general")] == ["scope"]


def test_the_queue_orders_by_the_chosen_priority(alpha, people):
    from coding.models import Role

    factories.member(alpha, people["otto"], Role.CODER)
    alpha.overlap = 3
    alpha.save()
    queue.sync_targets(alpha)
    item = alpha.papers[0]
    code(item, people["cora"], label="analysis", code_released="yes")
    code(item, people["cyril"], label="rl_method", scope="general", code_released="no")
    code(item, people["otto"], label="analysis", code_released="no", size_b=70)
    # label: 2 answers; scope: general / n/a; size_b: 7 / 70; code_released: yes / no.
    code(alpha.papers[1], people["cora"], label="analysis", failures=["entropy_collapse"])
    code(alpha.papers[1], people["cyril"], label="analysis", failures=["none"])
    code(alpha.papers[1], people["otto"], label="analysis",
         failures=["entropy_collapse", "none"])
    most = [(r.item.pk, r.question.key) for r in adjudication.disagreements(alpha, order="most")]
    by_question = [r.question.key for r in adjudication.disagreements(alpha, order="question")]
    assert most[0] == (alpha.papers[1].pk, "failures")  # three different answers
    assert by_question == ["label", "scope", "size_b", "failures", "code_released"]


def test_coders_see_feedback_only_when_the_study_allows(split, people, client_for):
    adjudication.decide(split.papers[0], "label", "rl_method", people["ada"])
    cora = client_for(people["cora"])
    assert cora.get(f"/api/studies/{split.slug}/feedback/").json()["results"] == []
    split.show_feedback = True
    split.save()
    rows = cora.get(f"/api/studies/{split.slug}/feedback/").json()["results"]
    assert [(r["question"], r["yours"], r["decision"]["value"]) for r in rows] == [
        ("label", "analysis", "rl_method")]
    assert "rl_method" in cora.get(f"/studies/{split.slug}/feedback/").content.decode()


def test_review_page_records_a_decision_from_a_form_post(split, people, client_for):
    ada = client_for(people["ada"])
    url = f"/studies/{split.slug}/review/{split.papers[0].pk}/"
    page = ada.get(url)
    assert page.status_code == 200 and "Record decisions" in page.content.decode()
    response = ada.post(url, {"d-label": json.dumps("rl_method"), "d-scope": json.dumps("general")})
    assert response.status_code == 302
    assert current(split.papers[0], "label").value == "rl_method"
    assert current(split.papers[0], "scope").value == "general"


def test_review_page_takes_another_value_with_its_rationale(split, people, client_for):
    ada = client_for(people["ada"])
    url = f"/studies/{split.slug}/review/{split.papers[0].pk}/"
    refused = ada.post(url, {"d-scope": "other", "q-scope": "embedded"})
    assert refused.status_code == 400 and "needs a rationale" in refused.content.decode()
    ada.post(url, {"d-scope": "other", "q-scope": "embedded", "why-scope": "Only for code tasks.",
                   "partial": "1"})  # confirmed: label stays open
    decision = current(split.papers[0], "scope")
    assert (decision.value, decision.rationale) == ("embedded", "Only for code tasks.")


def test_api_lists_disagreements_and_records_decisions(split, people, client_for):
    ada = client_for(people["ada"])
    base = f"/api/studies/{split.slug}"
    listed = ada.get(f"{base}/disagreements/").json()
    assert listed["count"] == 2
    decided = ada.post(f"{base}/items/{split.papers[0].pk}/review/",
                       {"question": "label", "value": "analysis"}, content_type="application/json")
    assert decided.status_code == 201 and decided.json()["method"] == "adjudicated"
    decisions = ada.get(f"{base}/decisions/").json()["results"]
    assert {(d["item"], d["question_key"]) for d in decisions} >= {(split.papers[0].pk, "label")}
    review = ada.get(f"{base}/items/{split.papers[0].pk}/review/").json()
    assert set(review["coders"]) == {"cora", "cyril"}


@pytest.mark.parametrize("path", ["/studies/{slug}/review/", "/studies/{slug}/review/{item}/",
                                  "/api/studies/{slug}/disagreements/",
                                  "/api/studies/{slug}/items/{item}/review/"])
def test_coders_and_viewers_cannot_reach_the_review(split, people, client_for, path):
    url = path.format(slug=split.slug, item=split.papers[0].pk)
    for name in ("cora", "vera"):
        assert client_for(people[name]).get(url).status_code == 403


def test_blinded_fields_reach_adjudicators_only_when_the_study_says(alpha, people, client_for):
    alpha.blinded_fields = ["included_in"]
    alpha.save()
    document = factories.paper(70, included_in=["SECRET-FRAMEWORK"])
    item = queue.add_item(alpha, document, alpha.paper_codebook)
    code(item, people["cora"], label="analysis")
    code(item, people["cyril"], label="rl_method", scope="general")
    url = f"/studies/{alpha.slug}/review/{item.pk}/"
    ada = client_for(people["ada"])
    assert "SECRET-FRAMEWORK" not in ada.get(url).content.decode()
    alpha.adjudicators_see_blinded = True
    alpha.save()
    assert "SECRET-FRAMEWORK" in ada.get(url).content.decode()


def test_settling_an_item_costs_a_bounded_number_of_queries(split, people,
                                                            django_assert_max_num_queries):
    """It runs in every submission's transaction: not one query per question. Two of these
    keep the item's stored disagreements (delete and insert)."""
    from coding.models import Decision as D

    D.objects.filter(item=split.papers[1]).delete()
    with django_assert_max_num_queries(14):
        adjudication.settle_item(split.papers[1])
    assert split.papers[1].decisions.count() == 5

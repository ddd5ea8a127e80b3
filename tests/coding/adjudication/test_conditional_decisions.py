"""Adjudication follows the codebook's conditions (issue 35, finding 2).

Cora saw a failure observed and quoted where; Cyril found it only discussed, so the
follow-up question was never shown to him. Whatever the adjudicator decides for the
parent, the child must end decided, not applicable, or open with the reason, and the
review list's open set must be the export's undecided set.
"""

import pytest
from django.core.exceptions import ValidationError

from coding.actions.submit import record_coding
from coding.adjudication import decisions as adjudication
from coding.adjudication.decisions import decide
from coding.dataset import load
from coding.export.bundle import build_bundle
from coding.labeling import queue
from coding.models import Decision, StoredDisagreement
from tests import factories

CODEBOOK = {
    "name": "Failure codebook", "applies_to": "paper",
    "questions": [
        {"key": "failure", "kind": "single", "text": "Is the failure observed or discussed?",
         "options": [{"value": "observed", "label": "Observed"},
                     {"value": "discussed", "label": "Only discussed"}]},
        {"key": "where", "kind": "single", "text": "Where is it observed?",
         "show_if": {"question": "failure", "in": ["observed"]},
         "options": [{"value": "training", "label": "In training"},
                     {"value": "evaluation", "label": "In evaluation"}]},
        {"key": "how_bad", "kind": "yes_no", "text": "Does training diverge?",
         "show_if": {"question": "where", "in": ["training"]}},
    ],
}


@pytest.fixture
def split(people):
    """A fresh study: one paper, cora and cyril disagree on whether the child applies."""
    study = factories.study("A first study", owner=people["olive"], overlap=2)
    for name in ("olive", "cora", "cyril", "ada"):
        factories.member(study, people[name], people["names"][name])
    codebook = factories.codebook(study, CODEBOOK)
    item = factories.paper_item(study, codebook, 1)
    record_coding(queue.assign(item, people["cora"]),
                  {"failure": "observed", "where": "training", "how_bad": "yes"})
    record_coding(queue.assign(item, people["cyril"]), {"failure": "discussed"})
    study.item = item
    return study


def open_questions(study):
    return set(StoredDisagreement.objects.filter(study=study, decided=False)
               .values_list("question_key", flat=True))


def final_row(study, tmp_path):
    path = tmp_path / f"export-{len(list(tmp_path.iterdir()))}.zip"
    build_bundle(study, path, shapes=["wide", "decisions"], fmt="csv")
    return load(path)["wide-failure-codebook"].iloc[0]


def undecided_in_export(study, tmp_path):
    wide = final_row(study, tmp_path)
    return {key for key in ("failure", "where", "how_bad")
            if wide[f"{key}__status"] == "undecided"}


def test_both_coders_disagree_on_the_parent_and_on_what_follows(split):
    assert open_questions(split) == {"failure", "where", "how_bad"}


def test_deciding_the_parent_as_ruling_the_child_out_closes_it_as_not_applicable(
        split, people, tmp_path):
    decide(split.item, "failure", "discussed", people["ada"])
    assert open_questions(split) == set() == undecided_in_export(split, tmp_path)
    for key in ("where", "how_bad"):
        consequence = Decision.objects.current().get(item=split.item, question_key=key)
        assert (consequence.method, consequence.value) == ("not_applicable", None)
        assert consequence.decided_by == people["ada"]
    wide = final_row(split, tmp_path)
    assert wide["where__status"] == "not_applicable" == wide["how_bad__status"]
    assert wide["where__method"] == "not_applicable"


def test_a_parent_value_that_requires_the_child_keeps_it_open(split, people, tmp_path):
    decide(split.item, "failure", "observed", people["ada"])
    assert open_questions(split) == {"where", "how_bad"} == undecided_in_export(split, tmp_path)
    decide(split.item, "where", "evaluation", people["ada"], rationale="Section 5 says so.")
    # where = evaluation rules out how_bad, which only follows training.
    assert open_questions(split) == set() == undecided_in_export(split, tmp_path)


def test_deciding_the_parent_again_reopens_what_it_had_ruled_out(split, people, tmp_path):
    decide(split.item, "failure", "discussed", people["ada"])
    decide(split.item, "failure", "observed", people["ada"])
    assert open_questions(split) == {"where", "how_bad"} == undecided_in_export(split, tmp_path)
    history = list(Decision.objects.filter(item=split.item, question_key="where")
                   .order_by("revision").values_list("method", flat=True))
    assert history == ["not_applicable", "reopened"]
    decide(split.item, "where", "training", people["ada"])
    decide(split.item, "how_bad", "yes", people["ada"])
    assert open_questions(split) == set() == undecided_in_export(split, tmp_path)


def test_deciding_a_question_its_parent_rules_out_is_refused_with_the_reason(split, people):
    decide(split.item, "failure", "discussed", people["ada"])
    with pytest.raises(ValidationError) as refused:
        decide(split.item, "where", "training", people["ada"])
    assert "failure was decided as 'discussed'" in str(refused.value)


def test_every_open_disagreement_can_be_closed_through_the_api(split, people, client_for):
    client = client_for(people["ada"])
    url = f"/api/studies/{split.slug}/items/{split.item.pk}/review/"
    listed = client.get(f"/api/studies/{split.slug}/disagreements/").json()
    assert {row["question"] for row in listed["results"]} == {"failure", "where", "how_bad"}
    answer = client.post(url, {"question": "failure", "value": "discussed"},
                         content_type="application/json")
    assert answer.status_code in (200, 201), answer.content
    listed = client.get(f"/api/studies/{split.slug}/disagreements/").json()
    assert listed["results"] == []


def test_the_review_page_takes_another_value_for_the_child_with_a_rationale(
        split, people, client_for):
    decide(split.item, "failure", "observed", people["ada"])
    page = client_for(people["ada"]).post(
        f"/studies/{split.slug}/review/{split.item.pk}/",
        {"d-where": "other", "q-where": "evaluation", "why-where": "Table 2 shows it."})
    assert page.status_code == 302, page.content.decode()[:2000]
    assert Decision.objects.current().get(item=split.item, question_key="where").value == \
        "evaluation"
    assert adjudication.current_decision(split.item, "how_bad").method == "not_applicable"


def test_the_review_page_says_which_question_waits_on_its_parents_decision(
        split, people, client_for):
    decide(split.item, "failure", "observed", people["ada"])
    page = client_for(people["ada"]).get(
        f"/studies/{split.slug}/review/{split.item.pk}/").content.decode()
    assert page.count("Waits for a decision") == 1  # where; how_bad waits on where, undecided
    assert "was decided as <span title=\"observed\">Observed</span>" in page


def test_recording_a_partial_decision_asks_first_and_records_on_confirming(
        split, people, client_for):
    """Enter recorded the parent alone, without a word, and the child stayed open."""
    ada = client_for(people["ada"])
    url = f"/studies/{split.slug}/review/{split.item.pk}/"
    asked = ada.post(url, {"d-failure": '"observed"'})
    page = asked.content.decode()
    assert asked.status_code == 200 and 'id="partial-confirm"' in page
    box = page[page.index('id="partial-confirm"'):].split("</div>")[0]
    assert "these 2 questions would stay open" in box
    assert "Where is it observed?" in box and "Does training diverge?" in box
    assert 'value="&quot;observed&quot;" checked' in page  # the choice is kept
    assert not Decision.objects.filter(item=split.item).exists()  # nothing yet
    assert open_questions(split) == {"failure", "where", "how_bad"}

    confirmed = ada.post(url, {"d-failure": '"observed"', "partial": "1"})
    assert confirmed.status_code == 302
    assert open_questions(split) == {"where", "how_bad"}


def test_a_decision_that_closes_every_question_needs_no_asking(split, people, client_for):
    """Deciding the parent as ruling the children out leaves nothing open: no question."""
    decided = client_for(people["ada"]).post(f"/studies/{split.slug}/review/{split.item.pk}/",
                                             {"d-failure": '"discussed"'})
    assert decided.status_code == 302 and open_questions(split) == set()


@pytest.fixture
def nobody_saw_the_grandchild(people):
    """Cora: observed, in evaluation (so how_bad was never hers); Cyril: only discussed.
    No coder was shown how_bad, yet a decision on where can make it apply."""
    study = factories.study("A second study", owner=people["olive"], overlap=2)
    for name in ("olive", "cora", "cyril", "ada"):
        factories.member(study, people[name], people["names"][name])
    item = factories.paper_item(study, factories.codebook(study, CODEBOOK), 1)
    record_coding(queue.assign(item, people["cora"]),
                  {"failure": "observed", "where": "evaluation"})
    record_coding(queue.assign(item, people["cyril"]), {"failure": "discussed"})
    study.item = item
    return study


def test_a_question_no_coder_saw_waits_in_the_list_until_its_condition_is_decided(
        nobody_saw_the_grandchild, people, tmp_path, client_for):
    """Found by the workflow property test: how_bad, shown to nobody, stayed undecided in
    the export for ever once where was decided as training, and was never in the list."""
    study = nobody_saw_the_grandchild
    assert open_questions(study) == {"failure", "where", "how_bad"} == \
        undecided_in_export(study, tmp_path)
    decide(study.item, "failure", "observed", people["ada"])
    decide(study.item, "where", "training", people["ada"], rationale="Figure 3.")
    assert open_questions(study) == {"how_bad"} == undecided_in_export(study, tmp_path)
    page = client_for(people["ada"]).get(f"/studies/{study.slug}/review/{study.item.pk}/")
    form = page.content.decode().split('id="review-form"')[1]
    assert 'id="question-how_bad"' in form and "Waits for a decision" in form
    decide(study.item, "how_bad", "no", people["ada"], rationale="Training is stable.")
    assert open_questions(study) == set() == undecided_in_export(study, tmp_path)


def test_a_question_no_coder_saw_closes_when_its_condition_rules_it_out(
        nobody_saw_the_grandchild, people, tmp_path):
    study = nobody_saw_the_grandchild
    decide(study.item, "failure", "observed", people["ada"])
    decide(study.item, "where", "evaluation", people["ada"])
    assert open_questions(study) == set() == undecided_in_export(study, tmp_path)
    assert final_row(study, tmp_path)["how_bad__status"] == "not_applicable"

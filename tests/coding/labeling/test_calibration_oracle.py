"""The calibration score teaches without leaking the reference answers (issue 36, 1).

A coder who submitted wrong answers saw "matched 0%"; each revision moved the percentage
exactly when an answer matched, and about twelve revisions recovered every reference
answer, passed the coder and opened the main round, each revision recorded independent.
Now the score counts first submissions, showing it is an exposure, and a revision made
after it is informed, whatever the study shows later.
"""

import pytest

from coding.labeling import queue
from coding.models import Coding, Exposure, Item
from tests import factories

REFERENCE = {"label": "rl_method", "code_released": "yes"}


@pytest.fixture
def calibrated(alpha, people):
    for n in (50, 51):
        factories.paper_item(alpha, alpha.paper_codebook, n, round=Item.Round.CALIBRATION,
                             reference_values=REFERENCE)
    return alpha


def wrong_first(study, coder):
    for _ in range(2):
        assignment = queue.next_item(study, coder)
        factories.code(assignment.item, coder, label="analysis", code_released="no")


def test_revisions_after_the_score_was_shown_neither_move_it_nor_pass(calibrated, people,
                                                                      client_for):
    cora = people["cora"]
    wrong_first(calibrated, cora)
    page = client_for(cora).get(f"/studies/{calibrated.slug}/code/").content.decode()
    assert "matched the reference answers 0% of the time" in page
    scores = []
    for answers in ({"label": "rl_method", "scope": "general"}, {"code_released": "yes"},
                    {**REFERENCE, "scope": "general"}):
        for item in Item.objects.filter(study=calibrated, round=Item.Round.CALIBRATION):
            factories.code(item, cora, **{"label": "analysis", "code_released": "no",
                                          **answers})
        page = client_for(cora).get(f"/studies/{calibrated.slug}/code/").content.decode()
        scores.append("matched the reference answers 0% of the time" in page)
    assert scores == [True, True, True]  # the oracle is gone: nothing moves
    assert queue.calibration_score(calibrated, cora) == 0.0
    assert queue.next_item(calibrated, cora) is None  # still waiting for the owner
    owner = client_for(people["olive"]).get(f"/api/studies/{calibrated.slug}/calibration/")
    [row] = [r for r in owner.json()["coders"] if r["username"] == "cora"]
    assert (row["score"], row["status"]) == (0.0, "below_threshold")
    revisions = Coding.objects.filter(assignment__coder=cora, revision__gt=1)
    assert revisions.count() == 6
    assert set(revisions.values_list("phase", flat=True)) == {"informed"}
    assert Exposure.objects.filter(assignment__coder=cora, kind="calibration").count() == 2


def test_a_revision_is_never_less_informed_than_the_one_before(alpha, people):
    """Feedback switched off after a coder saw it must not make them independent again."""
    from coding.actions.submit import record_coding
    from coding.adjudication.decisions import decide

    cora, item = people["cora"], alpha.papers[0]
    assignment = queue.assign(item, cora)
    record_coding(assignment, {"label": "analysis", "size_b": 7, "failures": ["none"],
                               "code_released": "no"})
    alpha.show_feedback = True
    alpha.save()
    decide(item, "label", "rl_method", people["ada"], rationale="Section 3.")
    informed = record_coding(assignment, {"label": "rl_method", "scope": "general", "size_b": 7,
                                          "failures": ["none"], "code_released": "no"})
    alpha.show_feedback = False
    alpha.save()
    later = record_coding(assignment, {"label": "rl_method", "scope": "general", "size_b": 8,
                                       "failures": ["none"], "code_released": "no"})
    assert (informed.phase, later.phase) == ("informed", "informed")


def test_a_calibration_coding_made_after_reading_another_coders_does_not_count(
        calibrated, people, client_for):
    """A coder who may also adjudicate read another coder's calibration answers on the
    review page, then coded the item: informed, and not in the score."""
    calibrated.coders_hold_other_roles = True
    calibrated.save()
    from coding.models import Membership, Role

    Membership.objects.create(study=calibrated, user=people["cora"], role=Role.ADJUDICATOR)
    item = Item.objects.filter(study=calibrated, round=Item.Round.CALIBRATION).first()
    factories.code(item, people["cyril"], label="rl_method", scope="general",
                   code_released="yes")
    assert client_for(people["cora"]).get(
        f"/studies/{calibrated.slug}/review/{item.pk}/").status_code == 200
    coding = factories.code(item, people["cora"], label="rl_method", scope="general",
                            code_released="yes")
    assert coding.phase == "informed"
    assert queue.calibration_score(calibrated, people["cora"]) is None  # nothing counted

"""Nothing is lost (rule 4): codings and decisions are append-only revisions."""

import pytest

from coding.models import Coding, Decision
from tests import factories


def test_revising_a_coding_keeps_the_earlier_revision(alpha, people):
    item = alpha.papers[0]
    first = factories.code(item, people["cora"], label="analysis")
    second = factories.code(item, people["cora"], label="rl_method", scope="embedded")
    revisions = list(item.assignments.get().codings.order_by("revision"))
    assert [(c.revision, c.values["label"]) for c in revisions] == [
        (1, "analysis"), (2, "rl_method")]
    assert (first.pk, second.pk) == (revisions[0].pk, revisions[1].pk)


def test_a_stored_coding_cannot_be_overwritten(alpha, people):
    coding = factories.code(alpha.papers[0], people["cora"])
    coding.values = {"label": "rl_method"}
    with pytest.raises(ValueError, match="never changed"):
        coding.save()
    assert Coding.objects.get(pk=coding.pk).values["label"] == "analysis"


def test_an_invalid_submission_writes_nothing(alpha, people):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        factories.code(alpha.papers[0], people["cora"], label="poetry")
    assert not Coding.objects.exists()


def test_a_decision_revision_cannot_be_overwritten(alpha, people):
    decision = Decision.objects.create(
        item=alpha.papers[0], question_key="label", revision=1, value="analysis",
        method=Decision.Method.ADJUDICATED, decided_by=people["ada"], rationale="Reads as a study.",
    )
    decision.value = "rl_method"
    with pytest.raises(ValueError):
        decision.save()
    assert Decision.objects.get(pk=decision.pk).value == "analysis"


def test_independent_codings_are_each_coders_last_revision_before_discussion(alpha, people):
    from django.utils import timezone

    from coding.actions.submit import submit
    from coding.labeling.codings import independent_codings
    from coding.models import Assignment, Item

    item = alpha.papers[0]
    factories.code(item, people["cora"], label="analysis")
    second = factories.code(item, people["cora"], label="rl_method", scope="general")
    cyril = factories.code(item, people["cyril"], label="analysis")
    Item.objects.filter(pk=item.pk).update(discussion_opened_at=timezone.now())
    reconciled = submit(Assignment.objects.get(pk=second.assignment_id), {"label": "analysis", "size_b": 7,
                                            "failures": ["none"], "code_released": "no"})
    assert reconciled.phase == Coding.Phase.RECONCILIATION
    assert set(independent_codings(alpha)) == {second, cyril}

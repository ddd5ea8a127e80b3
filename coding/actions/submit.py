"""A coder's submission: record the revision, settle the item, schedule agreement.

The act spans three capabilities, so it lives above them: labeling appends the revision
(coding.labeling.codings.append_revision, under the assignment's row lock), adjudication
settles the item in the same transaction (automatic decisions and stored disagreements
change with the coding or not at all), and agreement is scheduled once it commits, as is
a screener's retrain in a study that screens. The
coding page, the coder API, the demo and the tests all submit through here.
"""

from django.db import transaction
from django.utils import timezone

from coding.access.archive import check_open
from coding.adjudication.decisions import settle_locked
from coding.agreement.snapshots import schedule_agreement
from coding.codebooks.versions import (
    prune_not_applicable, published_version, questions_with_options,
)
from coding.labeling.codings import NotHeld, append_revision, locate_evidence, seconds_since
from coding.models import Assignment, Coding, Item
from coding.screening import rankings


@transaction.atomic
def record_coding(assignment, values, *, version=None, notes="", evidence=(),
                  unsure=False, seconds_spent=None, phase=Coding.Phase.INDEPENDENT,
                  submission=""):
    """Append the assignment's next revision (append_revision: checked, under its row lock)
    and settle its item in the same transaction. Costs what the item holds, not what the
    study holds."""
    version = version or published_version(assignment.item.codebook_id)
    coding = append_revision(assignment, values, version=version, notes=notes,
                             evidence=evidence, unsure=unsure, seconds_spent=seconds_spent,
                             phase=phase, submission=submission)
    if not getattr(coding, "repeated", False):
        settle_locked(assignment.item, questions_with_options(version))
    return coding


def submit(assignment, values, *, notes="", evidence=(), unsure=False, started_at=None,
           submission=""):
    """A coder's submission from the coding page or the API.

    Answers to questions whose condition is not met are dropped; evidence quotes
    are located in the frozen snapshot. An item that went back to the pool (lease
    lapsed, or skipped) is taken again first, if it still has room; otherwise
    NotHeld, with the answers kept as a draft. An archived study takes none (StudyArchived).
    A `submission` key already recorded on the assignment returns its coding, marked
    `repeated`, and records nothing (coding.labeling.codings.append_revision).
    """
    check_open(assignment.item.study)
    version = published_version(assignment.item.codebook_id)
    values = prune_not_applicable(version, values)
    located = locate_evidence(assignment, evidence, values)
    try:
        coding = record_coding(assignment, values, version=version, notes=notes.strip(),
                               evidence=located, unsure=unsure,
                               seconds_spent=seconds_since(started_at or assignment.opened_at),
                               submission=submission)
    except NotHeld as refused:
        Assignment.objects.filter(pk=assignment.pk).update(
            draft=refused.work, draft_saved_at=timezone.now())
        raise
    if getattr(coding, "repeated", False):
        return coding
    # Cheap and debounced (coding.agreement.snapshots.schedule_agreement).
    transaction.on_commit(lambda: schedule_agreement(assignment.item.study))
    # A screener's label retrains their own ranking, in the background (coding.screening).
    if assignment.item.round == Item.Round.MAIN and assignment.item.study.screening:
        transaction.on_commit(lambda: rankings.schedule(assignment.item.study, assignment.coder))
    return coding

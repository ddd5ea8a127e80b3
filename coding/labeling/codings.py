"""Recording codings. Every submission appends a revision; nothing is overwritten."""

import re
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext

from coding.access import limits
from coding.access.blinding import coder_view, quote_source
from coding.codebooks.versions import (
    check_values, published_version, questions_with_options, shown_key, unstorable_text,
)
from coding.labeling import queue
from coding.models import Assignment, Coding, Decision, Exposure, Item, OthersWorkRead, Role
from workbench.prepared import Insert, Slot, Statement, Update

# A session left open overnight is not eight hours of coding.
MAX_SECONDS = 4 * 60 * 60


class NotHeld(Exception):
    """The coder no longer holds the item (its lease lapsed and the slot went to another
    coder, or they skipped it and it filled up): nothing was recorded, and the answers
    were kept as the assignment's draft."""

    def __init__(self, assignment, work, excluded=False):
        super().__init__(gettext(
            "The study's owners excluded this item, so your answers were not recorded as a "
            "coding. They are kept as a draft of this item; nothing was lost.") if excluded
            else gettext("This item went back to the pool and has since been taken "
                         "by enough coders, so your answers were not recorded as a "
                         "coding. They are kept as a draft of this item; nothing was "
                         "lost."))
        self.assignment, self.work = assignment, work


def append_revision(assignment, values, *, version=None, notes="", evidence=(),
                    unsure=False, seconds_spent=None, phase=Coding.Phase.INDEPENDENT,
                    submission=""):
    """Validate the answers and append them as the assignment's next revision.

    Under the assignment's row lock: the coder must still hold it (active, or submitted
    for a revision); a lapsed or skipped one is taken again only if the item has room,
    else NotHeld. The lock also keeps two submissions from taking one revision number,
    and a lease release from handing the slot away while this one is recorded.
    The phase asked for is raised to what the coder could have seen (`phase_for`).
    The item is settled in the same transaction (coding.adjudication.decisions.settle_item).

    `submission`, the client's idempotency key: a key this assignment already recorded is
    the same submission sent again (a retry, a double click, a replayed request), and its
    coding comes back marked `repeated`, nothing written; the row lock makes parallel ones
    wait and find it. The database holds it too (coding_submission_once).
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("append_revision runs inside the submission's transaction")
    version = version or published_version(assignment.item.codebook_id)
    cleaned = check_values(version, values, complete=True)
    check_work(version, notes, evidence)
    # Lock this row only (of=self): a join to the item and study would lock the study
    # row too, and every submission in the study would wait on it.
    status = _LOCK_ASSIGNMENT.first(assignment=assignment.pk)
    if status is None:
        raise Assignment.DoesNotExist(f"assignment {assignment.pk} no longer exists")
    if status[0] in (Assignment.Status.RELEASED, Assignment.Status.SKIPPED):
        work = {"values": values, "notes": notes, "evidence": list(evidence), "unsure": unsure}
        # An item the owners excluded (coding.items.curate) released its holder: a page
        # left open must not record a coding on it.
        if Item.objects.filter(pk=assignment.item_id, deleted_at__isnull=False).exists():
            raise NotHeld(assignment, work, excluded=True)
        if not queue.retake(Assignment.objects.get(pk=assignment.pk),
                            status=Assignment.Status.SUBMITTED):
            raise NotHeld(assignment, work)
    if submission:
        earlier = Coding.objects.filter(assignment_id=assignment.pk,
                                        submission=submission).first()
        if earlier is not None:
            earlier.repeated = True
            return earlier
    # Read after the lock, in a statement of its own: one that waited for the lock sees
    # the revision the other submission committed meanwhile; with it, whether the coder
    # was served a model's suggestion on the item (suggestions.was_assisted's question).
    last, last_phase, assisted, read_others = _AFTER_LOCK.first(assignment=assignment.pk)
    last = last or 0
    if last:
        # Never less informed than the revision before it: what a coder saw stays seen,
        # even if the study stops showing it (issue 36).
        phase = max(phase, phase_for(assignment), last_phase, key=PHASE_RANK.index)
    if read_others:  # the coder read others' work on the item through another role
        phase = max(phase, Coding.Phase.INFORMED, key=PHASE_RANK.index)
    # Built once per process (workbench.prepared): the ORM's INSERT and UPDATE, not rebuilt on
    # every submission. Coding.save() is not called: study_id is set here as it would be.
    coding = _INSERT_CODING.create(Coding(
        assignment=assignment, study_id=assignment.study_id, revision=last + 1,
        codebook_version=version, phase=phase, values=cleaned, notes=notes,
        evidence=list(evidence), unsure=unsure, seconds_spent=seconds_spent, assisted=assisted,
        submission=submission,
    ))
    # The queue page's time statistics read the first revision's seconds from the assignment.
    (_SUBMITTED_FIRST if coding.revision == 1 else _SUBMITTED).run(
        assignment=assignment.pk, now=timezone.now(), seconds=seconds_spent)
    assignment.status = Assignment.Status.SUBMITTED
    return coding


_LOCK_ASSIGNMENT = Statement(Assignment, lambda assignment: (
    Assignment.objects.select_for_update(of=("self",)).filter(pk=assignment)
    .order_by().values_list("status")), Slot("assignment"))
# What append_revision reads once it holds the lock, in one statement: the assignment's last
# revision (None before the first) and its phase, whether its coder was served a
# suggestion, and whether they read others' work on the item (OthersWorkRead: of the item,
# or of the whole study after the item was added).
_AFTER_LOCK = Statement(Assignment, lambda assignment: (
    Assignment.objects.filter(pk=assignment).order_by()
    .annotate(last=Subquery(Coding.objects.filter(assignment_id=OuterRef("pk"))
                            .order_by("-revision").values("revision")[:1]),
              last_phase=Subquery(Coding.objects.filter(assignment_id=OuterRef("pk"))
                                  .order_by("-revision").values("phase")[:1]),
              assisted=Exists(Exposure.objects.filter(assignment_id=OuterRef("pk"),
                                                      kind=Exposure.Kind.SUGGESTION)),
              read_others=Exists(OthersWorkRead.objects.filter(
                  Q(item_id=OuterRef("item_id"))
                  | Q(item__isnull=True, read_at__gte=OuterRef("item__added_at")),
                  coder_id=OuterRef("coder_id"), study_id=OuterRef("item__study_id"))))
    .values_list("last", "last_phase", "assisted", "read_others")), Slot("assignment"))
_INSERT_CODING = Insert(Coding)


def _submitted(first):
    """The assignment's UPDATE once a revision is in: submitted, its lease and draft gone,
    and the first revision's seconds copied when it is the first."""
    def build(assignment, now, seconds=None):
        changes = {"status": Assignment.Status.SUBMITTED, "finished_at": now,
                   "leased_until": None, "draft": None, "draft_saved_at": None}
        if first:
            changes["first_seconds_spent"] = seconds
        return Assignment.objects.filter(pk=assignment), changes
    return Update(Assignment, build, Slot("assignment"), Slot("now", datetime),
                  *([Slot("seconds")] if first else []))


_SUBMITTED_FIRST, _SUBMITTED = _submitted(True), _submitted(False)


# From least to most informed: a revision is never recorded as less informed than it is.
PHASE_RANK = [Coding.Phase.INDEPENDENT, Coding.Phase.INFORMED, Coding.Phase.RECONCILIATION]


def phase_for(assignment):
    """The phase of a new revision of this assignment, from what its coder could see (rule 8).

    After the item's discussion opened: reconciliation. After the coder was shown a
    decision or another coder's answer on it (an Exposure), or while the study shows
    feedback and the item has a decision they could look up: informed.
    """
    item = _item_now(assignment)
    if item.discussion_opened_at:
        return Coding.Phase.RECONCILIATION
    # A model's suggestion makes a coding assisted (append_revision), not informed.
    if Exposure.objects.filter(assignment=assignment).exclude(
            kind=Exposure.Kind.SUGGESTION).exists():
        return Coding.Phase.INFORMED
    if item.study.show_feedback and Decision.objects.filter(item_id=item.pk).exists():
        return Coding.Phase.INFORMED
    return Coding.Phase.INDEPENDENT


# Roles through which a person who codes can read the other coders' work.
READS_OTHERS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


def record_reads(study, user, kind, items=None):
    """Note that a person who codes in the study read others' work through another role:
    of these items (ids), or of the whole study (`items` None, an export). Nothing for
    anyone who does not code here. Their later revisions of those items are informed."""
    roles = study.my_roles if hasattr(study, "my_roles") else study.roles_of(user)
    if Role.CODER not in roles or not roles & READS_OTHERS:
        return
    if items is None:
        OthersWorkRead.objects.create(study=study, coder=user, kind=kind)
        return
    OthersWorkRead.objects.bulk_create(
        [OthersWorkRead(study=study, coder=user, item_id=item, kind=kind) for item in set(items)],
        ignore_conflicts=True)


def record_exposures(kind, rows):
    """Note that a coder was shown (assignment id, question key, what) — once each, the first
    time kept. A later revision of those items is then not independent (rule 8)."""
    Exposure.objects.bulk_create(
        [Exposure(assignment_id=pk, kind=kind, question_key=key, shown=shown)
         for pk, key, shown in rows], ignore_conflicts=True)


def _item_now(assignment):
    # The item as it is now: discussion_opened_at may have changed since it was read.
    return Item.objects.select_related("study").get(pk=assignment.item_id)


def check_work(version, notes, evidence):
    """Refuse, field by field, what the limits (coding.access.limits) or the database cannot keep."""
    errors = unstorable_parts({"notes": notes, "evidence": evidence})
    if problem := limits.check_notes(notes):
        errors["notes"] = problem
    evidence = list(evidence)
    if problem := limits.check_quote_count(evidence):
        errors["evidence"] = problem
    keys = {question.key for question in questions_with_options(version)}
    for n, quote in enumerate(evidence, start=1):
        key = quote.get("question", "") if isinstance(quote, dict) else ""
        if key and key not in keys:
            errors.setdefault("evidence", gettext("quote %(n)s names %(key)r, which is not a "
                                                  "question of %(version)s")
                              % {"n": n, "key": shown_key(key), "version": version})
    if errors:
        raise ValidationError(errors)


def independent_codings(study, upto=None):
    """Each coder's last independent revision of each item: what reliability uses (rule 3).
    With `upto`, as they stood when the newest coding was that id: codings above it are
    neither read nor hide an older revision (a snapshot's codings, for its estimates).

    Revisions made after the item's discussion opened (reconciliation), after the
    coder could see a decision (informed) or a model's suggestion (assisted) are left
    out; so are skipped and released assignments, which hold no coding.

    An unassisted independent revision with no newer one of its assignment: an anti-join
    the database can run as one pass over a study's codings (the report and the export
    read them all), where "the pk of the newest" was a subquery per coding (2.0 of 2.3 s
    of server time at 100,000 items). The same rows: an assignment's revision numbers are
    unique.
    """
    newer = Coding.objects.filter(assignment=OuterRef("assignment"),
                                  phase=Coding.Phase.INDEPENDENT, assisted=False,
                                  revision__gt=OuterRef("revision"))
    rows = Coding.objects.filter(assignment__item__study=study,
                                 assignment__item__deleted_at__isnull=True,
                                 phase=Coding.Phase.INDEPENDENT, assisted=False)
    if upto is not None:
        newer, rows = newer.filter(pk__lte=upto), rows.filter(pk__lte=upto)
    return rows.filter(~Exists(newer))


def seconds_since(start):
    if start is None:
        return None
    if timezone.is_naive(start):
        raise ValidationError({"opened": gettext("give a date and time with its time zone")})
    return max(0, min(MAX_SECONDS, int((timezone.now() - start).total_seconds())))


def locate_evidence(assignment, evidence, values):
    """Each quote with its offsets in the snapshot field it came from, or a named error."""
    content = coder_view(assignment.item.study, assignment.item.snapshot.content)
    located = []
    if problem := limits.check_quote_count(list(evidence)):
        raise ValidationError({"evidence": problem})
    for n, quote in enumerate(evidence, start=1):
        if not isinstance(quote, dict):
            raise ValidationError({"evidence": gettext("quote %(n)s is not an object")
                                   % {"n": n}})
        field, text = str(quote.get("field", "")), str(quote.get("quote", "")).strip()
        if problem := limits.too_long(text, limits.QUOTE_MAX_CHARS,
                                      gettext("quote %(n)s") % {"n": n}):
            raise ValidationError({"evidence": problem})
        span = find_quote(quote_source(content, field), text)
        if span is None:
            raise ValidationError({"evidence": gettext("quote %(n)s (%(quote)r) is not in "
                                                       "%(field)s")
                                   % {"n": n, "quote": text[:40],
                                      "field": field or gettext("the item")}})
        located.append({"question": str(quote.get("question", "")), "field": field,
                        "quote": text, "start": span[0], "end": span[1]})
    return located


def find_quote(source, quote):
    """Offsets of a quote in the raw field text, tolerating the whitespace and markdown
    markers (*, _, `) that the rendered page shows differently from the source."""
    words = quote.split()
    if not words:
        return None
    pattern = r"[*_`~]*\s+[*_`~]*".join(re.escape(word) for word in words)
    match = re.search(pattern, source)
    return match.span() if match else None


def unstorable_parts(parts):
    """{part: why} for the parts (of a dict) whose text the database could not keep."""
    return {name: problem for name, value in parts.items() if (problem := unstorable_text(value))}


def check_storable(parts):
    """ValidationError naming the part (of a dict) whose text the database could not keep."""
    if errors := unstorable_parts(parts):
        raise ValidationError(errors)


def save_draft(assignment, draft):
    """Keep the coder's unsent work; nothing counts until submitted.

    Answers are not checked (a draft may be half done); what the database could not
    keep and what is over the limits of coding.access.limits is refused (ValidationError).
    """
    errors = unstorable_parts(draft if isinstance(draft, dict) else {"draft": draft})
    errors.update(limits.check_draft(draft))
    if errors:
        raise ValidationError(errors)
    Assignment.objects.filter(pk=assignment.pk).update(draft=draft, draft_saved_at=timezone.now())
    queue.extend_lease(assignment)


def latest_coding(assignment):
    return assignment.codings.order_by("-revision").first()

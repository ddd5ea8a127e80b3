"""Recording codings. Every submission appends a revision; nothing is overwritten."""

import re

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from . import queue
from .blinding import coder_view, quote_source
from .codebooks import check_values, prune_not_applicable, unstorable_text
from .models import Assignment, Coding

# A session left open overnight is not eight hours of coding.
MAX_SECONDS = 4 * 60 * 60


@transaction.atomic
def record_coding(assignment, values, *, version=None, notes="", evidence=(),
                  unsure=False, seconds_spent=None, phase=Coding.Phase.INDEPENDENT):
    """Validate the answers and append them as the assignment's next revision.

    The assignment row is locked so two submissions of the same coder cannot
    take the same revision number.
    """
    version = version or assignment.item.codebook.current_version()
    cleaned = check_values(version, values, complete=True)
    check_storable({"notes": notes, "evidence": evidence})
    # Lock this row only (of=self): a join to the item and study would lock the study
    # row too, and every submission in the study would wait on it.
    Assignment.objects.select_for_update(of=("self",)).get(pk=assignment.pk)
    last = assignment.codings.aggregate(n=Max("revision"))["n"] or 0
    coding = Coding.objects.create(
        assignment=assignment, revision=last + 1, codebook_version=version, phase=phase,
        values=cleaned, notes=notes, evidence=list(evidence), unsure=unsure,
        seconds_spent=seconds_spent,
    )
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.Status.SUBMITTED, finished_at=timezone.now(), leased_until=None,
        draft=None, draft_saved_at=None,
    )
    return coding


def independent_codings(study):
    """Each coder's last independent revision of each item: what reliability uses (rule 3).

    Revisions made after the item's discussion opened are reconciliation and are
    left out; so are skipped and released assignments, which hold no coding.
    """
    latest = (Coding.objects.filter(assignment=OuterRef("assignment"),
                                    phase=Coding.Phase.INDEPENDENT)
              .order_by("-revision").values("pk")[:1])
    return Coding.objects.filter(assignment__item__study=study,
                                 assignment__item__deleted_at__isnull=True,
                                 pk=Subquery(latest))


def submit(assignment, values, *, notes="", evidence=(), unsure=False, started_at=None):
    """A coder's submission from the coding page or the API.

    Answers to questions whose condition is not met are dropped; evidence quotes
    are located in the frozen snapshot. An item that went back to the pool (lease
    lapsed, or skipped) is taken again first, if it still has room.
    """
    if assignment.status in (Assignment.Status.RELEASED, Assignment.Status.SKIPPED):
        if not queue.retake(assignment):
            raise ValidationError("This item went back to the pool and has since been "
                                  "taken by enough coders; your answers were not saved.")
    version = assignment.item.codebook.current_version()
    values = prune_not_applicable(version, values)
    located = locate_evidence(assignment, evidence, values)
    # Once the coders have seen their disagreement, a revision is reconciliation.
    phase = (Coding.Phase.RECONCILIATION if assignment.item.discussion_opened_at
             else Coding.Phase.INDEPENDENT)
    coding = record_coding(assignment, values, version=version, notes=notes.strip(),
                           evidence=located, unsure=unsure, phase=phase,
                           seconds_spent=seconds_since(started_at or assignment.opened_at))
    transaction.on_commit(lambda: settle_after_submit(assignment.item))
    from .snapshots import schedule_agreement  # imports this module; cheap, debounced
    transaction.on_commit(lambda: schedule_agreement(assignment.item.study))
    return coding


def settle_after_submit(item):
    """Decide what the new coding settles (unanimous, single, consensus), after it commits."""
    from .adjudication import settle_item  # adjudication builds on this module

    settle_item(item)


def seconds_since(start):
    if start is None:
        return None
    return max(0, min(MAX_SECONDS, int((timezone.now() - start).total_seconds())))


def locate_evidence(assignment, evidence, values):
    """Each quote with its offsets in the snapshot field it came from, or a named error."""
    content = coder_view(assignment.item.study, assignment.item.snapshot.content)
    located = []
    for n, quote in enumerate(evidence, start=1):
        if not isinstance(quote, dict):
            raise ValidationError({"evidence": f"quote {n} is not an object"})
        field, text = str(quote.get("field", "")), str(quote.get("quote", "")).strip()
        span = find_quote(quote_source(content, field), text)
        if span is None:
            raise ValidationError({"evidence": f"quote {n} ({text[:40]!r}) is not in {field or 'the item'}"})
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


def check_storable(parts):
    """ValidationError naming the part (of a dict) whose text the database could not keep."""
    errors = {name: problem for name, value in parts.items()
              if (problem := unstorable_text(value))}
    if errors:
        raise ValidationError(errors)


def save_draft(assignment, draft):
    """Keep the coder's unsent work; nothing counts until submitted.

    Nothing is checked but what the database could not keep (ValidationError).
    """
    check_storable(draft if isinstance(draft, dict) else {"draft": draft})
    Assignment.objects.filter(pk=assignment.pk).update(draft=draft, draft_saved_at=timezone.now())
    queue.extend_lease(assignment)


def latest_coding(assignment):
    return assignment.codings.order_by("-revision").first()

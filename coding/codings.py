"""Recording codings. Every submission appends a revision; nothing is overwritten."""

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from .codebooks import check_values
from .models import Assignment, Coding


@transaction.atomic
def record_coding(assignment, values, *, version=None, notes="", evidence=(),
                  unsure=False, seconds_spent=None, phase=Coding.Phase.INDEPENDENT):
    """Validate the answers and append them as the assignment's next revision.

    The assignment row is locked so two submissions of the same coder cannot
    take the same revision number.
    """
    version = version or assignment.item.codebook.current_version()
    cleaned = check_values(version, values, complete=True)
    Assignment.objects.select_for_update().filter(pk=assignment.pk).first()
    last = assignment.codings.aggregate(n=Max("revision"))["n"] or 0
    coding = Coding.objects.create(
        assignment=assignment, revision=last + 1, codebook_version=version, phase=phase,
        values=cleaned, notes=notes, evidence=list(evidence), unsure=unsure,
        seconds_spent=seconds_spent,
    )
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.Status.SUBMITTED, finished_at=timezone.now(), leased_until=None
    )
    return coding

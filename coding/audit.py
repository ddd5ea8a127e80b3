"""The study setup's audit trail: one call writes who did what to what.

Call `record` inside the transaction that makes the change, so a change and its entry
land together or not at all. Pages and the API show a study's entries to its owners
(`entries_for`)."""

from .models import AuditEntry


def record(actor, study, action, target="", **details):
    """Write one entry: `action` is a dotted verb ("member.add"), `target` the words a
    person reads ("coder cora"), `details` what changed ({"from": …, "to": …})."""
    return AuditEntry.objects.create(
        study=study, actor=actor if getattr(actor, "is_authenticated", False) else None,
        action=action, target=str(target)[:300], details=details,
    )


def entries_for(study):
    """A study's entries, newest first, with who made them (for keyset paging on -at, -id)."""
    return AuditEntry.objects.filter(study=study).select_related("actor")

"""Assignments (who codes which item) and codings (each submitted revision, kept).

What a coder may see of these rows is decided in one place: the
`visible_to` querysets below, which every page and API view goes through.
"""

from django.conf import settings
from django.db import models

from .codebooks import CodebookVersion
from .items import Item
from .studies import Role


def _can_see_all_codings(study, user):
    return bool(study.roles_of(user) & {Role.OWNER, Role.ADJUDICATOR})


class AssignmentQuerySet(models.QuerySet):
    def visible_to(self, user, study):
        """Owners and adjudicators see every assignment; a coder only their own."""
        rows = self.filter(item__study=study)
        if _can_see_all_codings(study, user):
            return rows
        if Role.CODER in study.roles_of(user):
            return rows.filter(coder=user)
        return rows.none()


class Assignment(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"  # reserved for the coder, lease running
        SUBMITTED = "submitted"
        SKIPPED = "skipped"
        RELEASED = "released"  # lease lapsed; the item went back to the pool

    item = models.ForeignKey(Item, related_name="assignments", on_delete=models.CASCADE)
    coder = models.ForeignKey(
        settings.AUTH_USER_MODEL, related_name="assignments", on_delete=models.PROTECT
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    leased_until = models.DateTimeField(null=True, blank=True)
    skip_reason = models.TextField(blank=True)
    # The coder's unsent work: {"values": {...}, "notes": "", "evidence": [], "unsure": false}.
    draft = models.JSONField(null=True, blank=True)
    draft_saved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the coder last opened the item: the start of the time spent on it.
    opened_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["item", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "coder"], name="assignment_once_per_coder")
        ]
        indexes = [
            models.Index(fields=["coder", "status"]),
            # coding.queue.release_expired looks for lapsed leases on every next_item;
            # only active assignments (a few per coder) are in this index.
            models.Index(fields=["leased_until"], condition=models.Q(status="active"),
                         name="assignment_active_lease"),
        ]

    def __str__(self):
        return f"{self.item} → {self.coder} ({self.status})"


class CodingQuerySet(models.QuerySet):
    def visible_to(self, user, study):
        """Owners and adjudicators see every coding; a coder only their own (rule 1)."""
        rows = self.filter(assignment__item__study=study)
        if _can_see_all_codings(study, user):
            return rows
        if Role.CODER in study.roles_of(user):
            return rows.filter(assignment__coder=user)
        return rows.none()

    def independent(self):
        return self.filter(phase=Coding.Phase.INDEPENDENT)


class Coding(models.Model):
    """One submitted revision of a coder's answers to an item. Never updated in place.

    Revision 1 is the first submission. A coder's revisions made before any
    discussion of the item are `independent` and feed reliability (rule 3); those
    made after seeing a disagreement are `reconciliation` and never do.
    """

    class Phase(models.TextChoices):
        INDEPENDENT = "independent"
        RECONCILIATION = "reconciliation"

    assignment = models.ForeignKey(Assignment, related_name="codings", on_delete=models.PROTECT)
    revision = models.PositiveIntegerField()
    codebook_version = models.ForeignKey(
        CodebookVersion, related_name="codings", on_delete=models.PROTECT
    )
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.INDEPENDENT)
    # {question key: value}; a missing key is "not answered".
    values = models.JSONField(default=dict)
    notes = models.TextField(blank=True)
    # [{"question": key, "quote": text, "start": int, "end": int, "field": "abstract"}]
    evidence = models.JSONField(default=list, blank=True)
    unsure = models.BooleanField(default=False)
    seconds_spent = models.PositiveIntegerField(null=True, blank=True)
    submitted_at = models.DateTimeField(auto_now_add=True)

    objects = CodingQuerySet.as_manager()

    class Meta:
        ordering = ["assignment", "revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "revision"], name="coding_revision_number"
            )
        ]

    def __str__(self):
        return f"{self.assignment} r{self.revision}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("a coding revision is never changed; submit a new revision")
        super().save(*args, **kwargs)

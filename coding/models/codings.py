"""Assignments (who codes which item) and codings (each submitted revision, kept).

What a coder may see of these rows is decided in one place: the
`visible_to` querysets below, which every page and API view goes through.
"""

from django.conf import settings
from django.db import models

from coding.models.codebooks import CodebookVersion
from coding.models.items import Item
from coding.models.studies import Role


def _can_see_all_codings(study, user):
    return bool(study.roles_of(user) & {Role.OWNER, Role.ADJUDICATOR})


class AssignmentQuerySet(models.QuerySet):
    def visible_to(self, user, study):
        """Owners and adjudicators see every assignment; a coder only their own."""
        rows = self.filter(study=study)
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
    # The item's study, copied here so the database can hold "one active item per coder
    # per study" (rule 9) as a partial unique index; set from the item on save.
    study = models.ForeignKey("coding.Study", related_name="+", on_delete=models.CASCADE)
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
    # The seconds its first submitted revision spent, copied from that coding in the
    # transaction that records it (coding.labeling.codings.append_revision): the queue page's
    # median times per coder read assignments alone, not every coding (issue 13).
    first_seconds_spent = models.PositiveIntegerField(null=True, blank=True)
    # How a screening study's queue chose the item (coding.screening): by the screener's
    # model ("ranked", with its place in the ranking), at random for the recall estimate
    # ("random"), or in random order before the model could rank ("unranked"). Blank
    # outside screening.
    served = models.CharField(max_length=8, blank=True, default="")
    served_rank = models.PositiveIntegerField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["item", "created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "coder"], name="assignment_once_per_coder"),
            # A coder holds at most one active item per study (and so per round): twenty
            # parallel "next item" requests reserve one item, not twenty.
            models.UniqueConstraint(fields=["study", "coder"], condition=models.Q(status="active"),
                                    name="assignment_one_active_per_coder"),
        ]
        indexes = [
            models.Index(fields=["coder", "status"]),
            # coding.labeling.queue.release_expired looks for lapsed leases on every next_item;
            # only active assignments (a few per coder) are in this index.
            models.Index(fields=["leased_until"], condition=models.Q(status="active"),
                         name="assignment_active_lease"),
            # coding.labeling.queue.coder_work: a study's assignments grouped by coder, status and
            # first seconds, read from the index alone.
            models.Index(fields=["study", "coder", "status", "first_seconds_spent"],
                         name="assignment_work"),
            # The assignments API: a study's assignments by id, paged by keyset.
            models.Index(fields=["study", "id"], name="assignment_study_order"),
        ]

    def __str__(self):
        return f"{self.item} → {self.coder} ({self.status})"

    def save(self, *args, **kwargs):
        if self.study_id is None and self.item_id is not None:
            self.study_id = Item.objects.values_list("study_id", flat=True).get(pk=self.item_id)
        super().save(*args, **kwargs)


class CodingQuerySet(models.QuerySet):
    def visible_to(self, user, study):
        """Owners and adjudicators see every coding; a coder only their own (rule 1)."""
        rows = self.filter(study=study)
        if _can_see_all_codings(study, user):
            return rows
        if Role.CODER in study.roles_of(user):
            return rows.filter(assignment__coder=user)
        return rows.none()

    def independent(self):
        return self.filter(phase=Coding.Phase.INDEPENDENT)

    def bulk_create(self, objs, *args, **kwargs):
        """As QuerySet.bulk_create, with each coding's study filled from its assignment
        (one query for all), as save() does."""
        objs = list(objs)
        missing = {o.assignment_id for o in objs if o.study_id is None}
        if missing:
            studies = dict(Assignment.objects.filter(pk__in=missing)
                           .values_list("pk", "study_id"))
            for o in objs:
                if o.study_id is None:
                    o.study_id = studies.get(o.assignment_id)
        return super().bulk_create(objs, *args, **kwargs)


class Coding(models.Model):
    """One submitted revision of a coder's answers to an item. Never updated in place.

    Revision 1 is the first submission. A coder's revisions made before any
    discussion of the item are `independent` and feed reliability (rule 3); those
    made after seeing a disagreement are `reconciliation`, those made after the coder
    could see a decision on the item are `informed`, and neither ever does (rule 8).
    """

    class Phase(models.TextChoices):
        INDEPENDENT = "independent"
        RECONCILIATION = "reconciliation"  # after the item's discussion opened
        INFORMED = "informed"  # after its author could see a decision or feedback (rule 8)

    assignment = models.ForeignKey(Assignment, related_name="codings", on_delete=models.PROTECT)
    # The assignment's study, copied here (set on save and bulk_create) so a study's
    # codings are one index range: the codings page and API page through them newest or
    # oldest first without walking other studies' codings (issue 13).
    study = models.ForeignKey("coding.Study", related_name="+", on_delete=models.PROTECT,
                              db_index=False)  # coding_study_order serves its lookups
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
    # Made after its coder was shown a model's suggestion on the item (an Exposure of kind
    # suggestion, written when the server served it): never feeds reliability (rule 8).
    assisted = models.BooleanField(default=False)
    submitted_at = models.DateTimeField(auto_now_add=True)
    # The submission's idempotency key (the coding page's form, the API's Idempotency-Key
    # header): the same key again on the assignment is the same submission, never a new
    # revision (issue 43). Empty when the client sent none.
    submission = models.CharField(max_length=100, blank=True, default="")

    objects = CodingQuerySet.as_manager()

    class Meta:
        ordering = ["assignment", "revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "revision"], name="coding_revision_number"
            ),
            models.UniqueConstraint(
                fields=["assignment", "submission"], name="coding_submission_once",
                condition=~models.Q(submission=""),
            ),
        ]
        indexes = [
            # The codings page and API: a study's codings by id, paged by keyset.
            models.Index(fields=["study", "id"], name="coding_study_order"),
        ]

    def __str__(self):
        return f"{self.assignment} r{self.revision}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("a coding revision is never changed; submit a new revision")
        if self.study_id is None and self.assignment_id is not None:
            self.study_id = self.assignment.study_id
        super().save(*args, **kwargs)


class Exposure(models.Model):
    """What a coder was shown of others' work on an item they coded, and when.

    Written whenever a page or API response shows a coder a decision (feedback) or
    other coders' answers (the discussion step); a later revision of that item is
    then `informed` or `reconciliation`, never independent. Kept as evidence.
    """

    class Kind(models.TextChoices):
        FEEDBACK = "feedback"  # the final decision, through the feedback page or API
        DISCUSSION = "discussion"  # the other coders' differing answers
        SUGGESTION = "suggestion"  # a model rater's answer, in an assisted round
        CALIBRATION = "calibration"  # the calibration score against the reference answers

    assignment = models.ForeignKey(Assignment, related_name="exposures", on_delete=models.PROTECT)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    question_key = models.SlugField(max_length=64)
    # What was shown: {"value": …, "method": …} for feedback; {"answers": [...]} for discussion.
    shown = models.JSONField(default=dict)
    first_shown_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "kind", "question_key"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "kind", "question_key"],
                                    name="exposure_once")
        ]

    def __str__(self):
        return f"{self.assignment} saw {self.kind} of {self.question_key}"


class OthersWorkRead(models.Model):
    """A person who codes in a study read other coders' work there through another role
    (adjudicator, viewer, owner): the review page or API of an item, the codings or
    decisions lists, the item browser, an export, the inclusion report, a rater comparison
    or the screening progress. `item` is the item read, or null for a read of the whole
    study as it was at `read_at` (an export, the screening progress).
    Their revisions of those items after it are informed, never independent (issue 36):
    coding.labeling.codings.append_revision reads these in the statement it runs anyway."""

    class Kind(models.TextChoices):
        REVIEW = "review"
        CODINGS = "codings"
        DECISIONS = "decisions"
        EXPORT = "export"
        INCLUSION = "inclusion"
        COMPARISONS = "comparisons"
        ITEMS = "items"
        SCREENING = "screening"

    study = models.ForeignKey("coding.Study", related_name="+", on_delete=models.CASCADE)
    coder = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="+",
                              on_delete=models.CASCADE)
    item = models.ForeignKey(Item, null=True, blank=True, related_name="+",
                             on_delete=models.CASCADE)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    read_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["coder", "study", "item"])]
        constraints = [models.UniqueConstraint(fields=["coder", "item", "kind"],
                                               name="others_work_read_once")]

    def __str__(self):
        return f"{self.coder_id} read {self.kind} of {self.item_id or 'the study'}"

from django.db import models

from coding.models.codebooks import Codebook
from coding.models.studies import Study
from ingest.models import Document, Snapshot


class ItemQuerySet(models.QuerySet):
    def alive(self):
        return self.filter(deleted_at__isnull=True)


class Item(models.Model):
    """A document in a study's pool, pinned to the snapshot that coders code."""

    class Round(models.TextChoices):
        CALIBRATION = "calibration"
        MAIN = "main"

    study = models.ForeignKey(Study, related_name="items", on_delete=models.CASCADE)
    document = models.ForeignKey(Document, related_name="items", on_delete=models.PROTECT)
    snapshot = models.ForeignKey(Snapshot, related_name="items", on_delete=models.PROTECT)
    codebook = models.ForeignKey(Codebook, related_name="items", on_delete=models.PROTECT)
    round = models.CharField(max_length=16, choices=Round.choices, default=Round.MAIN)
    priority = models.IntegerField(default=0, help_text="Higher comes first in the queue.")
    # How many coders should code this item: the study's overlap for items in the
    # reliability sample, 1 for the rest; every coder for calibration items.
    target = models.PositiveSmallIntegerField(default=2)
    # Active plus submitted assignments, kept in step by coding.labeling.queue under the
    # item's row lock, so "never more than target" is one indexed comparison.
    taken = models.PositiveSmallIntegerField(default=0)
    in_reliability_sample = models.BooleanField(default=True)
    # Position in the study's random permutation (from Study.queue_seed); each
    # coder walks it from their own starting point.
    random_key = models.FloatField(default=0.0)
    # When the item's coders were shown their disagreement (the discussion step);
    # codings submitted after it are reconciliation, not independent.
    discussion_opened_at = models.DateTimeField(null=True, blank=True)
    # For calibration items: the answers a coder is compared with.
    reference_values = models.JSONField(null=True, blank=True)
    added_at = models.DateTimeField(auto_now_add=True)
    # The import run that added the item (null for items added another way, or before
    # runs were linked): the item browser filters by it.
    import_run = models.ForeignKey("coding.ImportRun", null=True, blank=True, related_name="+",
                                   on_delete=models.SET_NULL)
    # Soft deletion (rule 4): an owner's exclusion from the study, with its reason; every
    # count, queue, report and export reads alive() items only. Restoring clears both.
    deleted_at = models.DateTimeField(null=True, blank=True)
    excluded_reason = models.TextField(blank=True)

    objects = ItemQuerySet.as_manager()

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "document"], name="item_once_per_study")
        ]
        indexes = [
            # The item browser (coding.items.browse): a study's items by id, keyset paged.
            models.Index(fields=["study", "id"], name="item_study_order"),
            models.Index(fields=["study", "round", "-priority", "random_key"],
                         name="item_queue_order"),
            # The same order holding only items with room left, so a coder's walk
            # does not step over the filled items in front of it: late in a study
            # those are most of the index.
            models.Index(fields=["study", "round", "-priority", "random_key"],
                         condition=models.Q(deleted_at__isnull=True, taken__lt=models.F("target")),
                         name="item_queue_open"),
        ]

    def __str__(self):
        return f"{self.study.slug}: {self.document.key}"


class ItemChange(models.Model):
    """An owner's action on an item from the item browser (coding.items.curate): the item's
    own line of its history page. The study's audit entry lists the whole batch."""

    item = models.ForeignKey(Item, related_name="changes", on_delete=models.CASCADE)
    action = models.CharField(max_length=32)  # the audit action, e.g. "items.exclude"
    actor = models.ForeignKey("auth.User", null=True, blank=True, related_name="+",
                              on_delete=models.SET_NULL)
    reason = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "at", "id"]

    def __str__(self):
        return f"{self.action} of {self.item_id}"

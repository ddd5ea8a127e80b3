from django.db import models

from ingest.models import Document, Snapshot

from .codebooks import Codebook
from .studies import Study


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
    added_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = ItemQuerySet.as_manager()

    class Meta:
        ordering = ["study", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "document"], name="item_once_per_study")
        ]

    def __str__(self):
        return f"{self.study.slug}: {self.document.key}"

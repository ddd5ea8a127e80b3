from django.conf import settings
from django.db import models

from .items import Item


class Decision(models.Model):
    """One revision of the final value of one question for one item. Never updated in place.

    The current decision is the highest revision for (item, question). Revising a
    decision adds a row, so who decided what, when and why stays on record (rule 4).
    """

    class Method(models.TextChoices):
        UNANIMOUS = "unanimous"
        SINGLE = "single"
        ADJUDICATED = "adjudicated"

    item = models.ForeignKey(Item, related_name="decisions", on_delete=models.CASCADE)
    question_key = models.SlugField(max_length=64)
    revision = models.PositiveIntegerField()
    value = models.JSONField(null=True)
    method = models.CharField(max_length=16, choices=Method.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
        related_name="+",
    )
    rationale = models.TextField(blank=True)
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item", "question_key", "revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "question_key", "revision"], name="decision_revision_number"
            )
        ]

    def __str__(self):
        return f"{self.item} {self.question_key} r{self.revision}: {self.value!r}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("a decision revision is never changed; record a new revision")
        super().save(*args, **kwargs)

from django.conf import settings
from django.db import models

from coding.models.items import Item


class DecisionQuerySet(models.QuerySet):
    def current(self):
        """The highest revision of each (item, question): the final values."""
        newest = (Decision.objects.filter(item=models.OuterRef("item"),
                                          question_key=models.OuterRef("question_key"))
                  .order_by("-revision").values("pk")[:1])
        return self.filter(pk=models.Subquery(newest))


class Decision(models.Model):
    """One revision of the final value of one question for one item. Never updated in place.

    The current decision is the highest revision for (item, question). Revising a
    decision adds a row, so who decided what, when and why stays on record (rule 4).
    """

    class Method(models.TextChoices):
        UNANIMOUS = "unanimous"  # every coder's independent coding gave this value
        SINGLE = "single"  # the item was coded by one coder
        CONSENSUS = "consensus"  # the coders agreed after the discussion step
        ADJUDICATED = "adjudicated"  # an adjudicator chose it, with who and why
        # Consequences of the decision on the question a condition names (show_if): the
        # question does not apply; or it applies again after that decision changed, and
        # waits for a decision of its own (value null). Recorded by coding.adjudication.
        NOT_APPLICABLE = "not_applicable"
        REOPENED = "reopened"
        # A question the codebook does not send to the adjudicator (Question.adjudicated)
        # whose coders' answers differ: none is final; each stays in the codings.
        NOT_ADJUDICATED = "not_adjudicated"

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

    objects = DecisionQuerySet.as_manager()

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

from django.db import models

from coding.models.decisions import Decision
from coding.models.items import Item
from coding.models.studies import Study


class StoredDisagreement(models.Model):
    """One item × question whose independent codings differ: the review list's rows, kept.

    Written by coding.adjudication.decisions.sync_disagreements in the same transaction that
    settles an item or records a decision, so the review list and the disagreements API
    read this small table, paged, whatever the study's size; `rebuild_disagreements`
    recomputes it from codings and decisions.
    """

    study = models.ForeignKey(Study, related_name="+", on_delete=models.CASCADE)
    item = models.ForeignKey(Item, related_name="disagreements", on_delete=models.CASCADE)
    question_key = models.SlugField(max_length=64)
    position = models.PositiveIntegerField()  # the question's place in its codebook version
    # [[answer, [coder id, …]], …], largest group first, ties in coder-name order.
    groups = models.JSONField()
    group_count = models.PositiveSmallIntegerField()
    # ",3,7," and "|answer|other|": what the coder-pair and category filters match.
    coder_ids = models.TextField()
    answer_tokens = models.TextField()
    last_coded = models.DateTimeField()
    in_discussion = models.BooleanField(default=False)
    decision = models.ForeignKey(Decision, null=True, blank=True, related_name="+",
                                 on_delete=models.SET_NULL)
    decided = models.BooleanField(default=False)

    class Meta:
        ordering = ["study", "-group_count", "last_coded", "item", "position"]
        constraints = [
            models.UniqueConstraint(fields=["item", "question_key"], name="disagreement_once")
        ]
        indexes = [
            # One per order of the review list, after the status filter.
            models.Index(fields=["study", "decided", "-group_count", "last_coded", "item",
                                 "position"], name="disagreement_most"),
            models.Index(fields=["study", "decided", "last_coded", "item", "position"],
                         name="disagreement_oldest"),
            models.Index(fields=["study", "decided", "position", "last_coded", "item"],
                         name="disagreement_question"),
        ]

    def __str__(self):
        return f"{self.item_id} {self.question_key}: {self.group_count} answers"

"""A screener's ranking: the order in which the queue serves them unscreened records.

Written by coding.screening.rankings after a screener's labels change, read by the queue
(coding.labeling.queue) on every next record of a screening study. One row per screener and
study, replaced whole by each retrain, so the queue serves the last ranking while the next
one is computed. The order holds item ids as little-endian int64: `head` the first HEAD of
them (what the queue reads), `rest` the others (read only when the head is used up).
"""

from django.conf import settings
from django.db import models

HEAD = 1000


class ScreeningRanking(models.Model):
    study = models.ForeignKey("coding.Study", related_name="+", on_delete=models.CASCADE)
    coder = models.ForeignKey(settings.AUTH_USER_MODEL, related_name="+",
                              on_delete=models.CASCADE)
    model = models.CharField(max_length=32)
    # The screener's own labels it was trained on (priors included) and when.
    labels = models.PositiveIntegerField(default=0)
    includes = models.PositiveIntegerField(default=0)
    # The id of the screener's last coding it had read: a newer one makes it stale.
    last_coding_id = models.BigIntegerField(default=0)
    trained_at = models.DateTimeField()
    seconds = models.FloatField(default=0.0)
    ranked = models.PositiveIntegerField(default=0)
    head = models.BinaryField()
    rest = models.BinaryField(blank=True, default=b"")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "coder"], name="screening_ranking_once"),
        ]

    def __str__(self):
        return f"ranking of {self.coder_id} in {self.study_id} ({self.labels} labels)"

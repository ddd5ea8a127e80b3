from django.db import models

from .items import Item
from .studies import Study


class AgreementSnapshot(models.Model):
    """The reliability report of one round as it stood at one moment. Kept, never updated:
    the series of snapshots is how agreement over time is drawn.

    Taken by the "agreement" job after every few new independent codings and on demand
    (coding.snapshots). `report` is the round's part of coding.reliability.study_report;
    `summary` holds just alpha per question, so the lines over time read little.
    """

    study = models.ForeignKey(Study, related_name="agreement_snapshots", on_delete=models.CASCADE)
    round = models.CharField(max_length=16, choices=Item.Round.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    # Independent codings of this round the report was computed from.
    n_codings = models.PositiveIntegerField()
    # The newest independent coding (any round) seen: new codings are those above it.
    last_coding_id = models.PositiveBigIntegerField(default=0)
    report = models.JSONField()
    # {"<codebook id>:<question key>": {"alpha": .., "low": .., "high": .., "units": ..}}
    summary = models.JSONField(default=dict)

    class Meta:
        ordering = ["study", "round", "created_at", "id"]
        indexes = [models.Index(fields=["study", "round", "-created_at"],
                                name="agreement_snapshot_latest")]

    def __str__(self):
        return f"{self.study.slug} {self.round} agreement at {self.created_at:%Y-%m-%d %H:%M}"

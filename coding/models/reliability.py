from datetime import datetime

from django.db import models
from django.db.models.signals import post_save
from django.dispatch import receiver

from coding.models.items import Item
from coding.models.studies import Study


class AgreementSnapshot(models.Model):
    """The reliability report of one round as it stood at one moment. Kept, never updated:
    the series of snapshots is how agreement over time is drawn.

    Taken by the "agreement" job after every few new independent codings and on demand
    (coding.agreement.snapshots). `report` is the round's part of coding.agreement.reliability.study_report;
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
    # How long the report took to compute: the next automatic snapshot waits in proportion
    # (settings.AGREEMENT_JOB_SHARE).
    seconds = models.FloatField(default=0)
    # A full report keeps each measured question's coincidences (reliability.
    # coincidence_counts) under "<codebook id>:<question key>"; an estimate keeps none.
    counts = models.JSONField(default=dict, blank=True)
    # An estimate (coding.agreement.estimates): alpha's point values brought up to date
    # from the full report named in report["estimate"]; every other figure is that one's.
    estimate = models.BooleanField(default=False)

    class Meta:
        ordering = ["study", "round", "created_at", "id"]
        indexes = [models.Index(fields=["study", "round", "-created_at"],
                                name="agreement_snapshot_latest"),
                   # The newest snapshot, read on every submission (snapshots._due): by
                   # index, however many snapshots the study has.
                   models.Index(fields=["study", "-last_coding_id"],
                                name="agreement_snapshot_newest")]

    def __str__(self):
        return f"{self.study.slug} {self.round} agreement at {self.created_at:%Y-%m-%d %H:%M}"


class SampleDraw(models.Model):
    """One draw of the reliability sample, as made: kept, never updated, so an earlier
    draw stays readable after a redraw (Study.reliability_sample holds the newest only).

    Recorded wherever the study's sample is drawn (record_draw below, on the study's
    save of reliability_sample). `record` is that draw's whole description: share or
    count, stratification, seed, pool, size, how far coding had gone, who drew it, and
    the sample-size plan then, with the planner's inputs and each question's observed
    rarest share (coding.agreement.report.recorded_plan).
    """

    study = models.ForeignKey(Study, related_name="sample_draws", on_delete=models.CASCADE)
    drawn_at = models.DateTimeField()
    drawn_by = models.CharField(max_length=150, blank=True)
    size = models.PositiveIntegerField()
    pool = models.PositiveIntegerField()
    record = models.JSONField()

    class Meta:
        ordering = ["study", "drawn_at", "id"]
        indexes = [models.Index(fields=["study", "-drawn_at"], name="sample_draw_latest")]

    def __str__(self):
        return f"{self.study.slug} sample of {self.size} drawn {self.drawn_at:%Y-%m-%d %H:%M}"


@receiver(post_save, sender=Study, dispatch_uid="coding.record_draw")
def record_draw(sender, instance, update_fields=None, **kwargs):
    """Keep each new draw: on a save that writes reliability_sample (the draw's own save,
    coding.labeling.queue.draw_reliability_sample), unless the newest kept draw is the same one."""
    drawn = instance.reliability_sample
    if not drawn or update_fields is None or "reliability_sample" not in update_fields:
        return
    # The overlap then: how many coders each sampled item was to get.
    record = {"overlap": instance.overlap, **drawn}
    newest = SampleDraw.objects.filter(study=instance).order_by("-drawn_at", "-id").first()
    if newest is not None and newest.record == record:
        return
    SampleDraw.objects.create(study=instance, **draw_fields(record))


def draw_fields(drawn):
    """The columns of a SampleDraw from a draw's description (also the migration's)."""
    return {"drawn_at": datetime.fromisoformat(drawn["drawn_at"]),
            "drawn_by": drawn.get("drawn_by") or "", "size": drawn["size"],
            "pool": drawn["pool"], "record": drawn}

from django.db import models

from coding.models.studies import Study


class ImportRun(models.Model):
    """One import into a study's pool: what was read, how it was screened, and the counts
    for the screening flow; every record read is counted once (coding.labeling.pool.FLOW).
    A run that stopped (strict mode, a failed source, a cancel) keeps the counts of what
    it read before it stopped, and says why in `error`."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    study = models.ForeignKey(Study, related_name="import_runs", on_delete=models.CASCADE)
    job = models.ForeignKey("workbench.Job", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    params = models.JSONField(default=dict)
    screening = models.JSONField(default=dict)
    counts = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "created_at"]

    def __str__(self):
        return f"{self.study.slug} import {self.pk} ({self.params.get('format')})"

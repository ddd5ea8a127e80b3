from django.db import models

from coding.models.studies import Study


class ImportRun(models.Model):
    """One import into a study's pool: what was read, how it was screened, and the counts
    (read, duplicates, excluded by rule, failed, added to the pool) for the screening flow."""

    study = models.ForeignKey(Study, related_name="import_runs", on_delete=models.CASCADE)
    job = models.ForeignKey("workbench.Job", null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    params = models.JSONField(default=dict)
    screening = models.JSONField(default=dict)
    counts = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "created_at"]

    def __str__(self):
        return f"{self.study.slug} import {self.pk} ({self.params.get('format')})"

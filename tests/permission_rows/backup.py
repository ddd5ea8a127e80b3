"""Permission rows: a study's backup (coding.studies.backup) and the operator's endpoints.

A backup holds every coding and every blinded field: its owners only start and download
it. /metrics is the operator's, by token (tests/workbench/test_probes.py); without the setting it
does not exist for anyone."""

from django.core.files.base import ContentFile

from coding.studies.backup import backup_key
from workbench import storage
from workbench.models import Job

ROWS = {
    "studies/<slug:slug>/backup/": {"POST": "LNFFFFY"},
    "studies/<slug:slug>/backups/<int:backup_id>/download/": {"GET": "LNFFFFY"},
    "api/studies/<slug:slug>/backups/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/backups/<int:backup_id>/download/": {"GET": "LNFFFFY"},
    "metrics": {method: "NNNNNNN" for method in ("GET", "POST", "PUT", "PATCH", "DELETE")},
}


def values(world, alpha, people):
    job = Job.objects.create(kind="backup_study", status=Job.Status.DONE, created_by=people["olive"],
                             params={"study": alpha.pk, "study_slug": alpha.slug})
    storage.save_upload(backup_key(job), ContentFile(b"a backup", name="backup.zip"))
    return {"backup_id": job.pk}

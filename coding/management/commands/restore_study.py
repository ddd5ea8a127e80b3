"""restore_study: a backup zip (backup_study, or the backup page) onto this instance.

Runs as a job of this process (kind restore_study), so its progress and outcome are
kept with the instance's other jobs; the zip is stored first (restores/), as a worker
would read it.
"""

import uuid
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from workbench import jobs, storage
from workbench.models import Job


class Command(BaseCommand):
    help = ("Restore a study from a backup zip onto this instance (refused where the study "
            "or any of its rows exists already; nothing is half-written).")

    def add_arguments(self, parser):
        parser.add_argument("backup", help="the backup zip")

    def handle(self, *args, backup, **options):
        path = Path(backup)
        if not path.is_file():
            raise CommandError(f"No file {backup}.")
        key = f"restores/{uuid.uuid4().hex}/{storage.SAFE_NAME.sub('_', path.name)}"
        with open(path, "rb") as handle:
            storage.save_upload(key, handle)
        job = Job.objects.create(kind="restore_study", params={"stored": key})
        try:
            jobs.run(job.pk)
        finally:
            storage.delete_tree(key.rsplit("/", 1)[0])
        job.refresh_from_db()
        if job.status != Job.Status.DONE:
            raise CommandError(f"Not restored: {job.error}")
        self.stdout.write(f"Restored study {job.result['study']} (job {job.pk}).")

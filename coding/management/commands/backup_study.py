"""backup_study: a study's rows and stored files in one zip (coding.studies.backup)."""

from pathlib import Path

from django.core.management.base import BaseCommand

from coding.management.studies import study_or_error
from coding.studies.backup import back_up


class Command(BaseCommand):
    help = ("Back up a study: every row of it (and the documents it codes) and its stored "
            "files, in one zip that restore_study restores onto a fresh instance.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--out", help="the zip to write (default: STUDY-backup.zip here)")

    def handle(self, *args, study, out, **options):
        found = study_or_error(study)
        path = Path(out or f"{study}-backup.zip")

        def report(done, total=None, message=""):
            self.stderr.write(f"\r{done}/{total} {message[:60]:60}", ending="")

        summary = back_up(found, path, report)
        self.stderr.write("")
        for model, rows in summary["rows"].items():
            self.stdout.write(f"{model}: {rows} rows")
        self.stdout.write(f"Wrote {path} ({summary['files']} stored files, "
                          f"sha256 {summary['sha256']}).")

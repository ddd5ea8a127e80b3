"""Recompute a study's stored disagreements (the review list's rows) from its codings and
decisions: after bulk-loading data, or if a check finds them out of step."""

from django.core.management.base import BaseCommand, CommandError

from coding.adjudication.decisions import rebuild_disagreements
from coding.models import Study


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="?", help="The study's slug.")
        parser.add_argument("--all", action="store_true", help="Every study.")

    def handle(self, *args, study=None, all=False, **options):
        if bool(study) == all:
            raise CommandError("Name one study by its slug, or give --all.")
        studies = Study.objects.alive() if all else Study.objects.alive().filter(slug=study)
        if not all and not studies.exists():
            raise CommandError(f"No study {study!r}.")
        for found in studies.order_by("pk"):
            rows = rebuild_disagreements(found)
            self.stdout.write(f"{found.slug}: {rows} disagreement{'s' if rows != 1 else ''}")

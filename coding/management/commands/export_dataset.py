from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from coding.export.bundle import FORMATS, SHAPES, build_bundle
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = "Export a study's coded dataset as a reproducible zip bundle."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--shape", default=",".join(SHAPES),
                            help=f"comma-separated, from {', '.join(SHAPES)}")
        parser.add_argument("--out", help="the zip to write (default: STUDY-SHAPES.zip here)")
        parser.add_argument("--include-mapping", action="store_true",
                            help="add coders.csv (pseudonym to username)")

    def handle(self, *args, study, format, shape, out, include_mapping, **options):
        found = study_or_error(study)
        shapes = [s.strip() for s in shape.split(",") if s.strip()]
        path = Path(out or f"{study}-{'-'.join(shapes)}.zip")

        def report(done, total=None, message=""):
            self.stderr.write(f"\r{done}/{total} rows", ending="")

        try:
            summary = build_bundle(found, path, shapes=shapes, fmt=format,
                                   include_mapping=include_mapping, report=report)
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stderr.write("")
        for name, rows in summary["rows"].items():
            self.stdout.write(f"{name}: {rows} rows")
        self.stdout.write(f"Wrote {path} (sha256 {summary['sha256']}).")

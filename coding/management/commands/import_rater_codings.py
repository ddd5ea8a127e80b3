from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.raters.imports import FORMATS, RaterImportError, import_file, report_text


class Command(BaseCommand):
    help = ("Import raters' codings (CSV or JSON Lines: item, rater, question, value, "
            "evidence, coded_at) into a study; nothing is written if any row is bad.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("path", help="the file")
        parser.add_argument("--format", choices=FORMATS, default="",
                            help="default: csv for a .csv name, else jsonl")
        parser.add_argument("--dry-run", action="store_true",
                            help="check and report what would change; write nothing")

    def handle(self, *args, study, path, format, dry_run, **options):
        found = study_or_error(study)
        try:
            report = import_file(found, path, format, dry_run=dry_run).as_dict()
        except RaterImportError as error:
            raise CommandError(str(error)) from None
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write("\n".join(report_text(report)))
        if report["errors"]:
            raise CommandError(f"{len(report['errors'])} bad rows")

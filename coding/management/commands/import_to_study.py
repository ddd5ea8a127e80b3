import json

from django.core.management.base import BaseCommand, CommandError

from coding.access.archive import StudyArchived
from coding.labeling import pool
from coding.management.studies import study_or_error
from ingest.imports import FILE_FORMATS, LIVE_FORMATS


class Command(BaseCommand):
    help = ("Import documents into a study's pool, screened by date, category and query, "
            "and print the screening counts.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--format", required=True, choices=FILE_FORMATS + LIVE_FORMATS)
        parser.add_argument("--path", help="the file (file formats)")
        parser.add_argument("--mapping", help="JSON field mapping (csv_file, jsonl_file)")
        parser.add_argument("--search-query", help="arxiv_api")
        parser.add_argument("--repository", help="github: owner/name")
        parser.add_argument("--since", help="live sources: from this date")
        parser.add_argument("--date-from")
        parser.add_argument("--date-to")
        parser.add_argument("--category", action="append", default=[], dest="categories")
        parser.add_argument("--query", default="")
        parser.add_argument("--regex", action="store_true")
        parser.add_argument("--strict", action="store_true")
        parser.add_argument("--round", choices=["main", "calibration"], default="main",
                            help="the round new documents join (default main)")

    def handle(self, *args, **options):
        study = study_or_error(options["study"])
        source = {key: value for key, value in {
            "format": options["format"], "path": options["path"], "strict": options["strict"],
            "mapping": json.loads(options["mapping"]) if options["mapping"] else None,
            "search_query": options["search_query"], "repository": options["repository"],
            "since": options["since"], "from": options["since"]}.items() if value is not None}
        try:
            screening = pool.Screening.from_dict({
                "date_from": options["date_from"], "date_to": options["date_to"],
                "categories": options["categories"], "query": options["query"],
                "regex": options["regex"]})
            counts = pool.import_into_study(study, source, screening, round=options["round"])
        except (ValueError, StudyArchived) as error:
            raise CommandError(str(error)) from error
        for name, value in pool.flat_counts(counts).items():
            self.stdout.write(f"{name:<40} {value}")

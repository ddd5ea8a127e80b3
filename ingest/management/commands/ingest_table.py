import json

from django.core.management.base import CommandError

from ..base import IngestCommand


class Command(IngestCommand):
    help = ("Import a CSV or JSON Lines file with mapped columns, for sources with no "
            "parser of their own. The mapping is JSON, e.g. "
            '\'{"source": "openreview", "key": "id", "title": "title", '
            '"metadata": {"abstract": "abstract"}}\'.')

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--mapping", required=True, help="JSON, or @file.json")
        parser.add_argument("--encoding", default="utf-8")
        parser.add_argument("--delimiter", default=",")
        self.add_common_arguments(parser)

    def handle(self, *args, path, mapping, encoding, delimiter, **options):
        fmt = "jsonl_file" if path.endswith((".jsonl", ".jsonl.gz", ".ndjson")) else "csv_file"
        self.run({"format": fmt, "path": path, "mapping": _mapping(mapping),
                  "encoding": encoding, "delimiter": delimiter}, options)


def _mapping(value):
    try:
        if value.startswith("@"):
            with open(value[1:], encoding="utf-8") as file:
                return json.load(file)
        return json.loads(value)
    except (OSError, ValueError) as exc:
        raise CommandError(f"--mapping is not readable JSON: {exc}") from None

"""codebook_file: a codebook version to a file, or a file into a study, from the shell.

    manage.py codebook_file export SLUG CODEBOOK_ID [--version N] --format json|yaml|qdc [-o FILE]
    manage.py codebook_file import SLUG FILE [--codebook ID] [--name NAME] [--dry-run]

The same reading, checks and transaction as the import page and API; a bad file exits
non-zero with each problem located (line, or path such as questions[2].options[0].value).
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from coding.codebooks.files import FORMATS, InvalidSpec, dump, import_file
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = "Export a codebook version as JSON, YAML or REFI-QDA (.qdc), or import such a file."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        export = actions.add_parser("export", help="write one version as a file")
        export.add_argument("study", help="the study's slug")
        export.add_argument("codebook", type=int, help="the codebook's id")
        export.add_argument("--version", type=int, dest="number",
                            help="the version number (default: the newest)")
        export.add_argument("--format", choices=FORMATS, required=True)
        export.add_argument("-o", "--output", help="the file to write (default: standard output)")
        read = actions.add_parser("import", help="read a file as a new codebook or draft version")
        read.add_argument("study", help="the study's slug")
        read.add_argument("file", help="a .json, .yaml/.yml or .qdc file")
        read.add_argument("--codebook", type=int,
                          help="import as a new draft version of this codebook (its id)")
        read.add_argument("--format", choices=FORMATS, help="default: from the file's name")
        read.add_argument("--name", default="", help="the codebook's name instead of the file's")
        read.add_argument("--applies-to", choices=["paper", "thread"], default="",
                          help="what a new codebook from a .qdc codes (default paper)")
        read.add_argument("--dry-run", action="store_true",
                          help="check and say what would be written; write nothing")

    def handle(self, *args, action, study, **options):
        study = study_or_error(study)
        if action == "export":
            self.export(study, **options)
        else:
            self.read(study, **options)

    def codebook(self, study, pk):
        codebook = study.codebooks.filter(pk=pk).first()
        if codebook is None:
            raise CommandError(f"No codebook {pk} in {study.slug}.")
        return codebook

    def export(self, study, *, codebook, number, format, output, **options):
        codebook = self.codebook(study, codebook)
        versions = codebook.versions.select_related("codebook")
        version = (versions.filter(number=number) if number
                   else versions.order_by("-number")).first()
        if version is None:
            raise CommandError(f"{codebook.name} has no version {number}.")
        try:
            data = dump(version, format)
        except ValueError as error:
            raise CommandError(str(error)) from None
        if output:
            Path(output).write_bytes(data)
            self.stderr.write(f"Wrote {codebook.name} v{version.number} to {output}.")
        else:
            self.stdout.write(data.decode("utf-8"), ending="")  # every format is UTF-8 text

    def read(self, study, *, file, codebook, format, name, applies_to, dry_run, **options):
        target = self.codebook(study, codebook) if codebook else None
        try:
            data = Path(file).read_bytes()
        except OSError as error:
            raise CommandError(f"{file}: {error.strerror}") from None
        try:
            result = import_file(study, None, data, filename=file, fmt=format, codebook=target,
                                 name=name, applies_to=applies_to, dry_run=dry_run)
        except InvalidSpec as error:
            lines = "\n".join(f"  {e}" for e in error.errors)
            raise CommandError(f"{file}: nothing imported:\n{lines}") from None
        what = "Would write" if dry_run else "Wrote"
        self.stdout.write(f"{what} {result['codebook']} v{result['version']} (draft): "
                          f"{result['questions']} questions, {result['options']} options.")

"""qdpx: exchange a study with the QDA tools as a REFI-QDA project (docs/qda-exchange.md).

    manage.py qdpx export STUDY [--out F.qdpx] [--scope study|main|calibration|sample]
                                [--names] [--as-user USER]
    manage.py qdpx import STUDY F.qdpx [--dry-run]

The export is at owner level unless --as-user names whose view to write (as
export_dataset); the import runs as an operator, its draft codebook and raters made by
no one.
"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from coding.access.blinding import OWNER_LEVEL
from coding.export.qdpx import SCOPES, build_qdpx
from coding.management.commands.export_dataset import roles_of
from coding.management.studies import study_or_error
from coding.models import Role
from coding.raters.imports import RaterImportError
from coding.raters.qdpx import QdpxImportError, flat_counts, import_qdpx
from workbench.templatetags.workbench_jobs import counter_label


class Command(BaseCommand):
    help = "Export a study as a REFI-QDA project (.qdpx), or import one into a study."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        out = actions.add_parser("export", help="write the study as a .qdpx")
        out.add_argument("study", help="the study's slug")
        out.add_argument("--out", help="the file to write (default: STUDY-SCOPE.qdpx here)")
        out.add_argument("--scope", choices=SCOPES, default="study")
        out.add_argument("--names", action="store_true",
                         help="users by their user names instead of coder_1, coder_2 …")
        out.add_argument("--as-user", metavar="USER",
                         help="write what this user's roles let them receive")
        into = actions.add_parser("import", help="import a .qdpx into the study")
        into.add_argument("study", help="the study's slug")
        into.add_argument("path", help="the .qdpx")
        into.add_argument("--dry-run", action="store_true",
                          help="check the whole file and report; write nothing")

    def handle(self, *args, action, study, **options):
        found = study_or_error(study)
        if action == "export":
            return self.export(found, **options)
        return self.import_(found, **options)

    def export(self, study, *, out, scope, names, as_user, **options):
        roles = OWNER_LEVEL if as_user is None else roles_of(study, as_user)
        if names and Role.OWNER not in roles:
            raise CommandError(f"{as_user} is not an owner of {study.slug}: only owners may "
                               "export the coders' names.")
        path = Path(out or f"{study.slug}-{scope}.qdpx")

        def report(done, total=None, message=""):
            self.stderr.write(f"\r{done}/{total} sources", ending="")

        summary = build_qdpx(study, path, scope=scope, roles=roles, names=names, report=report)
        self.stderr.write("")
        self.stdout.write(f"{summary['sources']} sources, {summary['codings']} codings on "
                          f"{summary['selections']} selections, {summary['notes']} notes, "
                          f"{summary['users']} users.")
        self.stdout.write(f"Wrote {path} ({summary['bytes']:,} bytes).")

    def import_(self, study, *, path, dry_run, **options):
        if not Path(path).is_file():
            raise CommandError(f"No file {path}.")
        try:
            summary = import_qdpx(study, None, path, dry_run=dry_run)
        except QdpxImportError as error:
            raise CommandError(str(error)) from None
        except RaterImportError as error:
            raise CommandError(str(error)) from None
        for name, count in flat_counts(summary).items():
            self.stdout.write(f"{counter_label(name)}: {count:,}")
        book = summary["codebook"]
        if book["action"] == "draft":
            self.stdout.write(f"Codebook {book['codebook']!r} v{book['version']} is a draft: "
                              "review and publish it, then import the file again to bring "
                              "the codings of its new codes.")
        elif book["action"] == "matches":
            self.stdout.write(f"The codes match {book['codebook']!r} v{book['version']}.")
        for what, count in sorted(summary["unread"].items()):
            self.stdout.write(f"Not read: {count:,} {what}.")
        for skipped in summary["skipped"]:
            self.stdout.write(f"Skipped {skipped['where']}: {skipped['why']}")
        if summary.get("raters"):
            self.stdout.write(f"Raters: {', '.join(summary['raters'])}.")

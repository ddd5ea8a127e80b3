"""export_dataset: an operator's tool, at owner level unless --as-user.

Without --as-user the bundle holds every field, blinded ones included, as an
owner's export does: whoever can run manage.py can read the database anyway.
With --as-user USER it is exactly what USER would get from the export page or
the API (coding.access.blinding: their roles in the study decide what is withheld).
"""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from coding.access.blinding import OWNER_LEVEL
from coding.export.bundle import FORMATS, SHAPES, build_bundle
from coding.export.jobs import EXPORTERS
from coding.management.studies import study_or_error
from coding.models import Role


class Command(BaseCommand):
    help = ("Export a study's coded dataset as a reproducible zip bundle. Exports every field, "
            "blinded ones included (owner level), unless --as-user names whose view to export.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("--shape", default=",".join(SHAPES),
                            help=f"comma-separated, from {', '.join(SHAPES)}")
        parser.add_argument("--out", help="the zip to write (default: STUDY-SHAPES.zip here)")
        parser.add_argument("--include-mapping", action="store_true",
                            help="add coders.csv (pseudonym to username)")
        parser.add_argument("--as-user", metavar="USER",
                            help="export what this user's roles in the study let them receive "
                                 "(blinded fields withheld as on the export page); default: "
                                 "everything, as an owner")

    def handle(self, *args, study, format, shape, out, include_mapping, as_user, **options):
        found = study_or_error(study)
        shapes = [s.strip() for s in shape.split(",") if s.strip()]
        path = Path(out or f"{study}-{'-'.join(shapes)}.zip")
        roles = OWNER_LEVEL if as_user is None else roles_of(found, as_user)
        if include_mapping and Role.OWNER not in roles:
            raise CommandError(f"{as_user} is not an owner of {study}: only owners may export "
                               "the coder mapping.")

        def report(done, total=None, message=""):
            self.stderr.write(f"\r{done}/{total} rows", ending="")

        try:
            summary = build_bundle(found, path, shapes=shapes, fmt=format,
                                   include_mapping=include_mapping, report=report, roles=roles)
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stderr.write("")
        for name, rows in summary["rows"].items():
            self.stdout.write(f"{name}: {rows} rows")
        if summary["withheld"]:
            self.stdout.write(f"Withheld (blinded for {as_user}): {', '.join(summary['withheld'])}.")
        self.stdout.write(f"Wrote {path} (sha256 {summary['sha256']}).")


def roles_of(study, username):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"No user {username!r}.")
    roles = study.roles_of(user)
    if not roles & EXPORTERS:
        raise CommandError(f"{username} may not export {study.slug}: that needs the role "
                           f"{' or '.join(sorted(EXPORTERS))}.")
    return roles

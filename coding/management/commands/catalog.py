"""catalog: a study's frameworks, methods and option names as a JSON file, out and in.

Export writes the catalog as data (`coding.catalog.data`, the same bytes for
the same catalog). Import adds and updates by name and never removes, so importing a file
twice changes nothing; every error names where it is ("methods[2].first_public") and
nothing is written until all are fixed. Changes are audited, naming --user if given.
"""

import json
import sys

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.catalog import data as catalog_data
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Export a study's method catalog and frameworks as JSON, or import one: adds and "
            "updates by name, never removes; --dry-run says what would change.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        way = parser.add_mutually_exclusive_group(required=True)
        way.add_argument("--export", metavar="FILE", help="write the catalog here ('-': stdout)")
        way.add_argument("--import", dest="import_", metavar="FILE", help="read a catalog file")
        parser.add_argument("--dry-run", action="store_true",
                            help="with --import: check and count the changes, write nothing")
        parser.add_argument("--user", help="the username the audit trail names for an import")

    def handle(self, *args, study, export, import_, dry_run, user, **options):
        found = study_or_error(study)
        if export:
            text = json.dumps(catalog_data.catalog_data(found), indent=2, ensure_ascii=False) + "\n"
            if export == "-":
                sys.stdout.write(text)
            else:
                with open(export, "w", encoding="utf-8") as out:
                    out.write(text)
                self.stdout.write(f"Wrote the catalog of {found.slug} to {export}.")
            return
        actor = self.actor(user)
        data = self.read(import_)
        try:
            counts = catalog_data.load_catalog(found, data, actor, dry_run=dry_run)
        except ValidationError as error:
            lines = [f"  {where}: {message}" for where, messages in error.message_dict.items()
                     for message in messages]
            raise CommandError(f"{import_}: nothing imported.\n" + "\n".join(lines)) from None
        summary = ", ".join(f"{n} {what.replace('_', ' ')}" for what, n in counts.items())
        self.stdout.write(f"{'Would change' if dry_run else 'Imported'}: {summary}.")

    def read(self, name):
        try:
            with open(name, encoding="utf-8") as source:
                return json.load(source)
        except OSError as error:
            raise CommandError(f"{name}: {error.strerror}") from None
        except (ValueError, UnicodeDecodeError) as error:
            raise CommandError(f"{name}: not JSON ({error})") from None

    def actor(self, username):
        if not username:
            return None
        found = get_user_model().objects.filter(username=username).first()
        if found is None:
            raise CommandError(f"No user {username!r}.")
        return found

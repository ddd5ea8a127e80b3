"""inclusion_list: import a list of the papers a team already knows to be included in
frameworks (coding.inclusion.lists), or show the study's lists.

    manage.py inclusion_list STUDY FILE --name NAME [--user USERNAME]
    manage.py inclusion_list STUDY
"""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from coding.inclusion.lists import COLUMNS, InclusionListError, import_list, lists_payload
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Import an inclusion list from CSV (columns: " + ", ".join(COLUMNS) + "; paper "
            "and framework required) as an inclusion source beside the method tracker, "
            "replacing a list of the same name; all rows or none. Without a file, show the "
            "study's lists.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("file", nargs="?", help="the CSV file")
        parser.add_argument("--name", help="the list's name (default: the file's name)")
        parser.add_argument("--user", help="the username the audit trail names")

    def handle(self, *args, study, file, name, user, **options):
        found = study_or_error(study)
        if not file:
            for entry in lists_payload(found):
                self.stdout.write(f"{entry['name']}: {entry['rows']} rows from "
                                  f"{entry['file_name'] or 'a file'} (SHA-256 "
                                  f"{entry['sha256'][:12]}), {entry['imported_at'][:10]}")
            return
        actor = None
        if user:
            actor = get_user_model().objects.filter(username=user).first()
            if actor is None:
                raise CommandError(f"No user {user!r}.")
        path = Path(file)
        try:
            with path.open("rb") as raw:
                done = import_list(found, raw, name or path.stem, actor, file_name=path.name)
        except OSError as error:
            raise CommandError(f"{file}: {error.strerror}") from None
        except InclusionListError as problem:
            lines = [f"  line {line}, {column}: {message}" if line else f"  {message}"
                     for line, column, message in problem.errors]
            raise CommandError(f"{path.name}: nothing imported.\n" + "\n".join(lines)) from None
        self.stdout.write(f"Inclusion list {done['name']}: {done['rows']} rows, "
                          f"{done['papers']} papers in {', '.join(done['frameworks'])}"
                          + (f" (replaced {done['replaced']} rows)" if done["replaced"] else "")
                          + ".")

from django.core.management.base import BaseCommand

from coding.management.studies import study_or_error
from coding.studies import setup as study_setup


class Command(BaseCommand):
    help = ("Archive a study (out of the lists, closed to new work, kept and readable), "
            "or restore it with --restore.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--restore", action="store_true", help="open it again")

    def handle(self, *args, study, restore, **options):
        found = study_or_error(study)
        change = study_setup.restore_study if restore else study_setup.archive_study
        # The audit entry names no account: the change came from the command line.
        if change(found, None):
            self.stdout.write(f"{found.slug} {'restored' if restore else 'archived'}.")
        else:
            self.stdout.write(f"{found.slug} was already {'live' if restore else 'archived'}; "
                              "nothing changed.")

from django.core.management.base import BaseCommand

from coding.management.studies import study_or_error
from coding.models.tallies import kept, live_tallies, recount, tallies


class Command(BaseCommand):
    help = ("Check the counts PostgreSQL keeps for a study's pages (coding/models/tallies.py) "
            "against its tables, and put them right with --fix.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--fix", action="store_true", help="recount what differs")

    def handle(self, *args, study, fix, **options):
        found = study_or_error(study)
        if not kept():
            self.stdout.write("This database counts on each read (SQLite): nothing is kept.")
            return
        stored, counted = tallies(found), live_tallies(found)
        wrong = sorted(name for name in stored.keys() | counted.keys()
                       if stored.get(name, 0) != counted.get(name, 0))
        for name in wrong:
            self.stdout.write(f"{name}: kept {stored.get(name, 0)}, "
                              f"counted {counted.get(name, 0)}")
        if not wrong:
            self.stdout.write(f"{found.slug}: every kept count equals the tables' "
                              f"({len(counted)} counts).")
        elif fix:
            recount(found)
            self.stdout.write(f"{found.slug}: {len(wrong)} counts recounted.")
        else:
            self.stdout.write(f"{len(wrong)} counts differ; --fix recounts them.")

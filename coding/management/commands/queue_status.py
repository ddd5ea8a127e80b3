from django.core.management.base import BaseCommand

from coding.labeling import queue
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = "Print a study's queue: per coder done, skipped, in progress; per round what is left."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")

    def handle(self, *args, study, **options):
        found = study_or_error(study)
        summary = queue.queue_summary(found)
        self.stdout.write(f"{'coder':<16}{'done':>6}{'skipped':>9}{'active':>8}{'median s':>10}")
        for row in summary["coders"]:
            median = "-" if row["median_seconds"] is None else f"{row['median_seconds']:.0f}"
            self.stdout.write(f"{row['coder'].username:<16}{row['done']:>6}{row['skipped']:>9}"
                              f"{row['active']:>8}{median:>10}")
        for row in summary["rounds"]:
            self.stdout.write(f"{row['round']} round: {row['items']} items, "
                              f"{row['complete']} complete, {row['left']} left")

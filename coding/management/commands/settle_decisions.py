from django.core.management.base import BaseCommand

from coding.adjudication import decisions as adjudication
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Record automatic decisions (unanimous, single, consensus) for every complete item "
            "of a study and list what is left for adjudicators. Safe to run again.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")

    def handle(self, *args, study, **options):
        found = study_or_error(study)
        settled = adjudication.settle_study(found)
        waiting = adjudication.disagreements(found, status="open")
        self.stdout.write(f"{settled} complete items settled; {len(waiting)} disagreements "
                          "wait for an adjudicator.")
        for row in waiting:
            answers = "; ".join(f"{value}: {', '.join(c.username for c in coders)}"
                                for value, coders in row.groups)
            self.stdout.write(f"  {row.item.document.key}  {row.question.key}  {answers}")

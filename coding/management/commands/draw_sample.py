from django.core.management.base import BaseCommand, CommandError

from coding.actions import sample
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = "Draw a study's reliability sample: items coded by every overlap coder, the rest by one."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        size = parser.add_mutually_exclusive_group(required=True)
        size.add_argument("--share", type=float, help="share of items, e.g. 0.2")
        size.add_argument("--count", type=int, help="number of items")
        parser.add_argument("--stratify-by", default="", help="a content field, or 'kind'")
        parser.add_argument("--seed", type=int, help="defaults to the study's recorded seed")

    def handle(self, *args, study, share, count, stratify_by, seed, **options):
        found = study_or_error(study)
        try:
            chosen = sample.draw_reliability_sample(found, share=share, count=count,
                                                   stratify_by=stratify_by, seed=seed)
        except ValueError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"{len(chosen)} items in the reliability sample of {found.slug}.")

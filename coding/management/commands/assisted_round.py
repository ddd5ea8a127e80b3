from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.labeling import suggestions
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Make a round assisted: its coders see a model rater's imported answers beside the "
            "questions, marked as suggestions, on items outside the reliability sample; their "
            "codings are recorded as assisted and kept out of reliability. --blind makes it "
            "blind again. The calibration round, and a main round whose every item is in the "
            "reliability sample, are refused.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--round", default="main", help="main (default) or calibration")
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--rater", help="the model rater whose answers are suggested")
        which.add_argument("--blind", action="store_true", help="show no suggestions")

    def handle(self, *args, study, round, rater, blind, **options):
        found = study_or_error(study)
        if blind:
            suggestions.mark_blind(found, None, round)
            self.stdout.write(f"The {round} round of {found.slug} is blind.")
            return
        try:
            suggestions.mark_assisted(found, None, round, rater)
        except ValidationError as error:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in
                                         error.message_dict.items())) from None
        self.stdout.write(f"The {round} round of {found.slug} is assisted by {rater}.")

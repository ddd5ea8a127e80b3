from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.models import Rater
from coding.raters.screening import put_in_front, screening_sample


class Command(BaseCommand):
    help = ("Draw a random sample of a model's labelled items for people to code blind to "
            "the model's labels (size from the planner unless given); prints the document "
            "keys, and with --front moves them to the front of the coders' queue.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("rater", help="the model rater's name")
        parser.add_argument("--question", required=True, help="the question it labelled")
        parser.add_argument("--size", type=int, help="default: the planner's size")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--front", action="store_true",
                            help="move the sample to the front of the coders' queue")

    def handle(self, *args, study, rater, question, size, seed, front, **options):
        found = study_or_error(study)
        model = Rater.objects.filter(study=found, name=rater).first()
        if model is None:
            raise CommandError(f"No rater {rater!r} in {found.slug}.")
        try:
            sample = screening_sample(model, question, size=size, seed=seed)
        except ValueError as error:
            raise CommandError(str(error)) from None
        # The keys alone on standard output (`> sample.txt`), what they are on standard error.
        planned = sample["planned"] if sample["planned"] is not None else "none, one label"
        self.stderr.write(f"{sample['size']} items (planner: {planned}, smallest "
                          f"label share {sample['smallest_share']:.3f}, seed {seed})")
        self.stdout.write("\n".join(sample["keys"]))
        if front:
            moved = put_in_front(found, sample["keys"])
            self.stderr.write(f"{moved} items moved to the front of the queue.")

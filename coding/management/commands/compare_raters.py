from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.models import Comparison
from coding.raters import comparisons
from coding.raters.setup import add_comparison


class Command(BaseCommand):
    help = ("Compare two raters, or a rater with the final decisions, on one question: the "
            "directional confusion table, percent agreement, Cohen's kappa with a bootstrap "
            "interval, Krippendorff's alpha, per-category agreement. Give a saved "
            "comparison's name, or --first, --second/--decisions and --question to save one.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("name", help="the comparison's name")
        parser.add_argument("--first", help="rater of the table's rows")
        second = parser.add_mutually_exclusive_group()
        second.add_argument("--second", help="rater of the table's columns")
        second.add_argument("--decisions", action="store_true",
                            help="the columns are the final decisions")
        parser.add_argument("--question", help="question key")
        weights = parser.add_mutually_exclusive_group()
        weights.add_argument("--weights", choices=["unweighted", "linear", "quadratic"],
                             help="weight Cohen's kappa (when saving the comparison)")
        weights.add_argument("--weights-file", help="a JSON file of custom agreement weights "
                             "{row value: {column value: weight}} (when saving)")
        parser.add_argument("--json", action="store_true", help="print the API's JSON")

    def handle(self, *args, study, name, first, second, decisions, question, json, **options):
        found = study_or_error(study)
        comparison = Comparison.objects.filter(study=found, name=name).first()
        weighting, matrix = options.get("weights"), _matrix(options.get("weights_file"))
        if comparison is not None and (weighting or matrix is not None):
            raise CommandError(f"The comparison {name!r} exists: its weighting "
                               f"({comparison.weighting}) was set when it was made.")
        if comparison is None:
            if not (first and question and (second or decisions)):
                raise CommandError(f"No comparison {name!r}; give --first, --second or "
                                   "--decisions, and --question to make it.")
            try:
                comparison = add_comparison(found, None, name=name, first=first,
                                            second=second, question=question,
                                            weighting=weighting, weights=matrix)
            except ValidationError as error:
                raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in
                                             error.message_dict.items())) from None
        result = comparisons.compute(comparison)
        if json:
            import json as json_module

            self.stdout.write(json_module.dumps(result, indent=2))
        else:
            self.stdout.write(comparisons.as_text(result))


def _matrix(path):
    """The custom weight matrix in a JSON file, or None without one."""
    if not path:
        return None
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        raise CommandError(f"--weights-file {path}: {error}") from None

import json

from django.core.management.base import BaseCommand, CommandError

from coding.inclusion.analysis import analyse, parse_population
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Compare included with not-included papers (the method tracker's inclusion) on "
            "every binary and categorical coded field: counts, Fisher's exact test, odds "
            "ratio with its interval, Holm and Benjamini-Hochberg adjusted p. The same "
            "numbers as the inclusion page and API.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--population", default="",
                            help="question=value pairs, comma-separated (label=rl_method)")
        parser.add_argument("--json", action="store_true", help="print the analysis as JSON")

    def handle(self, *args, study, population, **options):
        found = study_or_error(study)
        try:
            analysis = analyse(found, parse_population(population))
        except ValueError as problem:
            raise CommandError(str(problem)) from problem
        if options["json"]:
            self.stdout.write(json.dumps(analysis, indent=2, ensure_ascii=False))
            return
        if not analysis["available"]:
            raise CommandError(analysis["reason"])
        self.stdout.write(f"{analysis['papers']} papers: {analysis['included']} included, "
                          f"{analysis['not_included']} not included.")
        self.stdout.write(analysis["orientation"])
        for f in analysis["fields"]:
            counts = ", ".join(f"{a} {i}/{n}" for a, i, n in
                               zip(f["answers"], f["included"], f["not_included"]))
            line = f"{f['name']}: {counts} (included/not)"
            if f["p"] is not None:
                line += f"; p = {f['p']:.3f} (Holm {f['p_holm']:.3f}, BH {f['p_bh']:.3f})"
            ratio = f["odds_ratio"]
            if ratio and ratio["value"] is not None:
                line += f"; odds ratio {ratio['value']:.2f}"
                if ratio["low"] is not None and ratio["high"] is not None:
                    line += f" [{ratio['low']:.2f}, {ratio['high']:.2f}]"
            self.stdout.write(line)
        self.stdout.write(analysis["test_rule"])
        self.stdout.write(analysis["adjustment"])

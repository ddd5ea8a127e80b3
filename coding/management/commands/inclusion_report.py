import json

from django.core.management.base import BaseCommand, CommandError

from coding.inclusion.analysis import analyse, parse_population
from coding.inclusion.words import shown_p, shown_share
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
        parser.add_argument("--source", default="",
                            help="tracker, or list:NAME for an imported inclusion list "
                                 "(default: the tracker when it has source papers)")
        parser.add_argument("--json", action="store_true", help="print the analysis as JSON")

    def handle(self, *args, study, population, source, **options):
        found = study_or_error(study)
        try:
            analysis = analyse(found, parse_population(population), source or None)
        except ValueError as problem:
            raise CommandError(str(problem)) from problem
        if options["json"]:
            self.stdout.write(json.dumps(analysis, indent=2, ensure_ascii=False))
            return
        if not analysis["available"]:
            raise CommandError(analysis["reason"])
        self.stdout.write(f"{analysis['papers']} papers: {analysis['included']} included, "
                          f"{analysis['not_included']} not included.")
        self.stdout.write(f"Inclusion from {analysis['source']}")
        self.stdout.write(analysis["orientation"])
        for f in analysis["fields"]:
            counts = ", ".join(
                f"{a} {i} ({shown_share(si)}) / {n} ({shown_share(sn)})" for a, i, si, n, sn in zip(
                    f["answers"], f["included"], f["included_share"], f["not_included"],
                    f["not_included_share"]))
            line = f"{f['name']}: {counts} (included / not, share of each column)"
            if f["p"] is not None:
                line += (f"; p {_p(f['p'])} (Holm {_p(f['p_holm'])}, BH {_p(f['p_bh'])})")
            ratio = f["odds_ratio"]
            if ratio and ratio["value"] is not None:
                line += f"; odds ratio {ratio['value']:.2f}"
                if ratio["low"] is not None and ratio["high"] is not None:
                    line += f" [{ratio['low']:.2f}, {ratio['high']:.2f}]"
            self.stdout.write(line)
        self.stdout.write(analysis["test_rule"])
        self.stdout.write(analysis["adjustment"])
        for c in analysis["comparisons"]:
            kappa = "undefined" if c["kappa"] is None else f"{c['kappa']:.3f}"
            self.stdout.write(
                f"Against {c['source']}: both {c['both']}, only this source {c['used_only']}, "
                f"only {c['source']} {c['other_only']}, neither {c['neither']}; kappa {kappa}; "
                f"{c['differing']} papers differ" + (
                    f" ({', '.join(c['differing_papers'])})" if c["differing_papers"] else ""))


def _p(p):
    """`= 0.042` or `< 0.001`, as a paper prints it."""
    shown = shown_p(p)
    return shown if shown.startswith("<") else f"= {shown}"


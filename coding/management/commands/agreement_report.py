import argparse
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import translation
from django.utils.translation import gettext as _

from coding.agreement import snapshots
from coding.agreement.reliability import study_report
from coding.agreement.report import (
    TEXT_LANGUAGE, TEXT_LANGUAGES, PlanForm, document, share_source_words, text_language,
)
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Print a study's reliability report, computed now from the independent codings: "
            "per question units, alpha [95% CI], percent agreement, kappa; the sample-size "
            "plan; and the block for a paper. The same numbers as the agreement page and API.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
        parser.add_argument("--save", action="store_true",
                            help="also keep it as a snapshot (a point on the lines over time)")
        parser.add_argument("--alpha-min", help="target alpha for the sample-size plan (0.800)")
        parser.add_argument("--significance", help="significance level for the plan (0.05)")
        parser.add_argument("--smallest-share", help="smallest expected category share")
        parser.add_argument("--language", default=TEXT_LANGUAGE, type=_language,
                            help="the language of the block for a paper: "
                                 f"{', '.join(TEXT_LANGUAGES)} (default {TEXT_LANGUAGE})")

    def handle(self, *args, study, **options):
        found = study_or_error(study)
        given = {key: options[key] for key in ("alpha_min", "significance", "smallest_share")
                 if options[key] is not None}
        form = PlanForm(given or None)
        if form.is_bound and not form.is_valid():
            raise CommandError(form.errors.as_text())
        if options["save"]:
            snapshots.take_snapshot(found, force=True)
            report = snapshots.stored_report(found)
        else:
            report = study_report(found)
        language = options["language"]
        if options["json"]:
            # As the API gives it: the block for a paper in the language asked, keys and the
            # rest of the report as stored.
            doc = document(found, report, form.inputs(), language)
            self.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False))
            return
        with translation.override(language):  # the plan and its warnings in it too
            doc = document(found, report, form.inputs(), language)
            self.stdout.write(doc["text"] or doc["text_withheld"] + "\n")
            self.stdout.write(_plan(doc["planning"]))


def _language(value):
    language = text_language(value)
    if language is None:
        raise argparse.ArgumentTypeError(
            f"unknown language {value!r}: one of {', '.join(TEXT_LANGUAGES)}")
    return language


def _plan(plan):
    lines = ["", _(
        "Sample size. To test alpha >= %(alpha)s at p = %(p)s with the rarest category at "
        "%(share)s (%(source)s): %(units)s units coded by each of %(coders)s coders "
        "(%(values)s values). The sample holds %(size)s items.") % {
            "alpha": f"{plan['alpha_min']:.3f}", "p": f"{plan['significance']:g}",
            "share": f"{plan['smallest_share']:.1%}",
            "source": share_source_words(plan["share_source"]), "units": plan["units_needed"],
            "coders": plan["coders"], "values": plan["values_needed"],
            "size": plan["sample_size"]}]
    lines += [f"  ! {warning}" for warning in plan["warnings"]]
    lines += ["", plan["source"]]
    return "\n".join(lines) + "\n"

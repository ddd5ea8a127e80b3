import json
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.model_raters import config, runs, validation
from coding.models import ModelRun, Rater


def _value(field, raw):
    if field in ("send_blinded",):
        return raw.lower() in ("1", "true", "yes", "on")
    return raw


class Command(BaseCommand):
    help = ("A model rater run from the workbench: set its endpoint and model (--setting "
            "base_url=… model=…), preview one item's request (--preview), run it over a set "
            "of items as a job (--run sample), pause, resume or cancel a run, and print its "
            "validation against the coders (--validate).")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("rater", help="the model rater's name (added on the raters page, "
                            "the API or with --create)")
        parser.add_argument("--create", action="store_true", help="add the model rater first")
        parser.add_argument("--setting", action="append", default=[], metavar="FIELD=VALUE",
                            help=f"one of: {', '.join(config.FIELDS)}")
        parser.add_argument("--api-key-stdin", action="store_true", help=(
            "read the API key from standard input and store it encrypted"))
        parser.add_argument("--preview", nargs="?", const="", metavar="ITEM", help=(
            "print the exact request for one item (its document key; default the first)"))
        parser.add_argument("--run", choices=sorted(runs.SETS), help="start a run over this set")
        parser.add_argument("--replicates", type=int, default=1)
        parser.add_argument("--pause", type=int, metavar="RUN")
        parser.add_argument("--resume", type=int, metavar="RUN")
        parser.add_argument("--cancel", type=int, metavar="RUN")
        parser.add_argument("--validate", action="store_true")
        parser.add_argument("--epsilon", type=float, default=validation.EPSILON,
                            choices=validation.EPSILONS)
        parser.add_argument("--json", action="store_true", help="print JSON")

    def handle(self, *args, study, rater, **options):
        found = study_or_error(study)
        try:
            self._handle(found, rater, options)
        except ValidationError as error:
            raise CommandError("; ".join(
                f"{key}: {' '.join(messages)}" for key, messages in error.message_dict.items())
                if hasattr(error, "error_dict") else " ".join(error.messages)) from None

    def _handle(self, study, name, options):
        if options["create"]:
            from coding.raters.setup import add_rater

            model = dict(s.split("=", 1) for s in options["setting"] if "=" in s).get(
                "model", name)
            add_rater(study, None, kind=Rater.Kind.MODEL, name=name, model_version=model)
        rater = Rater.objects.filter(study=study, name=name, kind=Rater.Kind.MODEL).first()
        if rater is None:
            raise CommandError(f"no model rater {name!r} in {study.slug} (add it with --create)")
        changes = {}
        for setting in options["setting"]:
            field, sep, raw = setting.partition("=")
            if not sep:
                raise CommandError(f"--setting {setting!r}: write FIELD=VALUE")
            changes[field.strip()] = _value(field.strip(), raw)
        key = sys.stdin.readline().strip() if options["api_key_stdin"] else None
        if changes or key is not None:
            config.configure(rater, None, changes, api_key=key)
            self.stdout.write(f"{rater.name}: settings saved")
        for action in ("pause", "resume", "cancel"):
            if options[action] is not None:
                run = ModelRun.objects.filter(rater=rater, pk=options[action]).first()
                if run is None:
                    raise CommandError(f"no run {options[action]} of {rater.name}")
                getattr(runs, action)(run, None)
                self.stdout.write(f"run {run.pk}: {action}")
        if options["preview"] is not None:
            shown = runs.preview(rater, options["preview"])
            self.stdout.write(json.dumps(shown, indent=2, ensure_ascii=False, default=str))
        if options["run"]:
            run = runs.start_run(rater, None, runs.SETS[options["run"]][0], options["replicates"])
            run.refresh_from_db()
            self.stdout.write(f"run {run.pk} over {runs.scope_words(run.scope)}: {run.status}, "
                              f"{run.answered} answered ({run.cached} from the cache), "
                              f"{run.failed} not answered, job {run.job_id}")
        if options["validate"]:
            self._validate(rater, options)

    def _validate(self, rater, options):
        result = validation.validate(rater, options["epsilon"])
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        self.stdout.write(result["rule"])
        for q in result["questions"]:
            self.stdout.write(f"\n{q['question']}: {q['usable']} ({q['because']})")
            for row in [*q["against"], q["decisions"], q["majority"]]:
                kappa = row["kappa"]
                figure = (f"kappa {kappa['value']:.3f} [{kappa['low']:.3f}, {kappa['high']:.3f}]"
                          if kappa["value"] is not None and kappa["low"] is not None
                          else "kappa undefined")
                agree = (f"{row['percent_agreement']:.3f}" if row["percent_agreement"]
                         is not None else "-")
                self.stdout.write(f"  vs {row['with']}: {row['units']} items, agreement "
                                  f"{agree}, {figure}")
            alt = q["alt_test"]
            self.stdout.write(f"  alt-test: winning rate {alt['winning_rate']:.2f}, "
                              f"{'passes' if alt['passed'] else 'fails'}" if alt["ran"]
                              else f"  alt-test: not run ({alt['why_not']})")

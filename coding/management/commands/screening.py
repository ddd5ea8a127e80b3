from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.screening import model as screening_model
from coding.screening import priors, progress, setup


class Command(BaseCommand):
    help = ("A study's screening: turn it on or change it (--question, --include …), stop or "
            "resume it, and print how far each screener and the study have come with the "
            "stopping rule.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--question", help="the screening decision question's key")
        parser.add_argument("--include", help="answers that mean include, comma-separated")
        parser.add_argument("--model", choices=sorted(screening_model.MODELS))
        parser.add_argument("--random-share", type=float)
        parser.add_argument("--target-recall", type=float)
        parser.add_argument("--confidence", type=float)
        parser.add_argument("--prior-rater", help="the rater whose answers are prior labels")
        parser.add_argument("--prior-labels", metavar="FILE", help=(
            "an ASReview-style CSV whose label_included column becomes the prior labels (its "
            "records imported into the study first); --prior-rater names them"))
        parser.add_argument("--exclude-answer", help=(
            "the answer a 0 label becomes (default: the question's first answer that does not "
            "include)"))
        parser.add_argument("--stop", action="store_true", help="stop screening")
        parser.add_argument("--resume", action="store_true", help="resume a stopped screening")

    def handle(self, *args, study, question, include, stop, resume, prior_labels,
               exclude_answer, **options):
        found = study_or_error(study)
        given = {key: options[key] for key in ("model", "random_share", "target_recall",
                                               "confidence", "prior_rater")
                 if options.get(key) is not None
                 and not (key == "prior_rater" and prior_labels)}  # named once imported
        try:
            if question or include or given:
                current = setup.settings_of(found)
                setup.configure(found, **{**{k: current[k] for k in setup.DEFAULTS}, **given,
                                          "question": question or current["question"],
                                          "include": (include.split(",") if include
                                                      else current["include"])})
            if prior_labels:
                self._priors(found, prior_labels, exclude_answer, options.get("prior_rater"))
            if stop:
                progress.stop(found, None)
            if resume:
                progress.resume(found, None)
        except (ValueError, OSError) as error:
            raise CommandError(str(error)) from None
        report = progress.progress(found)
        settings = report["settings"]
        if not settings["question"]:
            self.stdout.write(f"{found.slug} does not screen; give --question and --include.")
            return
        self.stdout.write(f"{found.slug}: screening on {settings['question']} (include: "
                          f"{', '.join(settings['include'])}), model {settings['model']}, "
                          f"{settings['random_share']:.0%} served at random"
                          + (f"; stopped {settings['stopped']['at']}" if settings.get("stopped")
                             else ""))
        rows = [("study", report["study"])] + [(row["coder"].username, row)
                                              for row in report["screeners"]]
        self.stdout.write(f"{'':<16}{'screened':>9}{'included':>9}{'since':>7}{'p':>9}  stop?")
        for name, row in rows:
            self.stdout.write(f"{name:<16}{row['screened']:>9}{row['includes']:>9}"
                              f"{row['since_last_include']:>7}{row['test']['p']:>9.4f}  "
                              f"{'yes' if row['test']['stop'] else 'no'}")
        self.stdout.write(f"{report['total']} records, {report['study']['not_screened']} not "
                          f"screened; stopping rule at {settings['target_recall']:.0%} recall, "
                          f"{settings['confidence']:.0%} confidence")

    def _priors(self, study, path, exclude_answer, rater):
        counts = priors.use_priors(study, path, exclude=exclude_answer,
                                   rater=rater or priors.NAME)
        self.stdout.write(f"{counts['rows']} prior labels imported as "
                          f"{rater or priors.NAME!r} ({counts['new']} new, "
                          f"{counts['changed']} changed).")

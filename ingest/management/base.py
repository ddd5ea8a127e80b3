"""What the ingest commands share: run the import (or enqueue it) and print the outcome."""

from django.core.management.base import BaseCommand, CommandError
from django.utils import translation

from workbench import jobs

from ..imports import check_params, run_import
from ..jobs import summary
from ..load import SourceFailed, StrictModeError

SHOWN_ERRORS = 20


class IngestCommand(BaseCommand):
    def add_common_arguments(self, parser):
        parser.add_argument("--strict", action="store_true",
                            help="stop at the first bad record (those before it are written)")
        parser.add_argument("--async", dest="run_async", action="store_true",
                            help="enqueue an ingest job for the worker instead of running here")
        parser.add_argument("--batch-size", type=int, default=None)

    def run(self, params, options):
        # The commands speak English, as the API does (scripts read them), whatever
        # language the settings or a caller made active; the importers' messages are
        # marked for translation and follow it.
        with translation.override("en"):
            self._run(params, options)

    def _run(self, params, options):
        self.verbosity = options.get("verbosity", 1)
        params = {**params, "strict": options["strict"]}
        if options["batch_size"]:
            params["batch_size"] = options["batch_size"]
        try:
            check_params(params)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["run_async"]:
            job = jobs.enqueue("ingest", params)
            self.stdout.write(f"Enqueued ingest job #{job.pk}.")
            job.refresh_from_db()  # the embedded default ran it already, in this process
            if job.status == job.Status.FAILED:
                raise CommandError(f"Ingest job #{job.pk} failed: {job.error}")
            if job.status == job.Status.DONE:
                self.stdout.write(f"Ingest job #{job.pk} is done: {job.message}")
            return
        errors, warnings = [], []
        try:
            counts = run_import(params, log_error=errors.append, progress=self.progress,
                                log_warning=warnings.append)
        except SourceFailed as exc:
            # The source answered with an error: what was read besides is reported,
            # then the command fails (a non-zero exit) with the source's message.
            self.report(exc.counts, [e for e in errors if e is not exc.error], warnings)
            raise CommandError(str(exc)) from None
        except (StrictModeError, ValueError, LookupError) as exc:
            # Strict mode's first bad record, or a file the mapping does not fit: said
            # as a command error, with its location, never as a traceback.
            raise CommandError(str(exc)) from None
        self.report(counts, errors, warnings)

    def progress(self, counts):
        if self.verbosity > 1:
            self.stderr.write(summary(counts))

    def report(self, counts, errors, warnings=()):
        self.stdout.write(summary(counts))
        if counts["deleted"] or counts["duplicates"]:
            self.stdout.write(f"{counts['deleted']:,} marked deleted, "
                              f"{counts['duplicates']:,} duplicates within a batch")
        for rule, n in sorted(counts["excluded"].items()):
            self.stdout.write(f"excluded by {rule}: {n:,}")
        for warning in warnings[:SHOWN_ERRORS]:
            self.stderr.write(f"warning: {warning}")
        if len(warnings) > SHOWN_ERRORS:
            self.stderr.write(f"… and {len(warnings) - SHOWN_ERRORS:,} more warnings")
        for error in errors[:SHOWN_ERRORS]:
            self.stderr.write(f"error: {error}")
        if len(errors) > SHOWN_ERRORS:
            self.stderr.write(f"… and {len(errors) - SHOWN_ERRORS:,} more errors")

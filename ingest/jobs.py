"""The ingest job: any import described by `imports.run_import` params, run by the worker.

    workbench.jobs.enqueue("ingest", {"format": "arxiv_snapshot_file", "path": "…"})

Progress on the job row counts records read and errors; each bad record is a
line of the job's log with where it was. The job can be cancelled (it stops after
the batch it is writing, or within a minute while a live source makes it wait)
and re-run after a dead worker without duplicates, as every write is an upsert on
the natural key.
"""

import os
import re
import time

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from workbench.jobs import JobError, job_handler, log, server_folders, user_facing

from .imports import check_params, run_import
from .load import SourceFailed, StrictModeError

# Strict mode stops at the first bad record with where it was and why ("papers.jsonl
# line 17: field 'title' should be a string, got int"): written for the person who
# started the import, so the job shows it as it is (workbench.jobs.public_error).
user_facing(StrictModeError)
# The source answered with an error (an arXiv error feed, a saved GitHub error object):
# the job fails with the source's own message and the counts of what was written.
user_facing(SourceFailed)

# Past this many, bad records are counted but no longer logged one by one: a
# wholly wrong file must not write millions of log lines.
MAX_LOGGED_ERRORS = 1000

# While a live source makes the job wait (arXiv's 429, GitHub's rate-limit reset),
# it still reports this often: the heartbeat stays fresh and a cancel is honoured.
REPORT_WHILE_WAITING = 60


@job_handler("ingest")
def run_ingest(job, report):
    # Its progress, log and refusals are written in the language its params name (as the
    # study's import job writes in its starter's: coding.labeling.pool.run_import_job), else the
    # site's: the commands' --async, read by whoever runs them, in English. ingest knows
    # nothing of people's choices (coding.accounts.languages): the starter says.
    language = job.params.get("language")
    if language not in dict(settings.LANGUAGES):
        language = settings.LANGUAGE_CODE
    roots = file_folders(job.params)
    with translation.override(language):
        try:
            check_params(job.params)
        except ValueError as error:  # what is wrong with the params, in the import's own words
            raise JobError(shown_location(_("The import cannot start: %(error)s") % {
                "error": error}, roots)) from error
        last = {"read": 0, "message": ""}
        return run_import(job.params, progress=progress_reporter(report, last),
                          log_error=error_logger(job, roots=roots),
                          log_warning=warning_logger(job, roots=roots),
                          sleep=patient_sleep(report, last))


def file_folders(params):
    """The folders whose paths a job's reader is not shown: the server's own, and the one
    holding the file the job reads (a command's `--async` may name any path, and the
    job's log, failure and API answer name the file by its name alone)."""
    roots = server_folders()
    path = params.get("path")
    if isinstance(path, str) and os.path.isabs(path):
        roots.append(os.path.dirname(path))
    return roots


def progress_reporter(report, last):
    def progress(counts):
        last.update(read=counts["read"], message=summary(counts))
        report(counts["read"], None, last["message"])

    return progress


def patient_sleep(report, last):
    """A sleep for the live clients that reports between steps of a minute."""

    def sleep(seconds):
        while seconds > 0:
            step = min(seconds, REPORT_WHILE_WAITING)
            time.sleep(step)
            seconds -= step
            report(last["read"], None, (_("%(progress)s (waiting %(seconds)s s more for the "
                                          "source)") % {"progress": last["message"],
                                                        "seconds": f"{seconds:,.0f}"}).strip())

    return sleep


def shown_location(text, roots=None):
    """A location or reason as the job's reader should see it: a file the server keeps (an
    upload under the var folder, a file in the import folder) by its own name, not its
    server path ("/srv/var/uploads/study/3f…/threads.json item 2" -> "threads.json item
    2"). Readers name files by path, which the command line wants."""
    for root in sorted(roots if roots is not None else server_folders(), key=len, reverse=True):
        prefix = root.rstrip(os.sep) + os.sep
        if prefix in text:
            text = re.sub(re.escape(prefix) + r"(?:[^/\s]+/)*", "", text)
    return text


def error_logger(job, limit=MAX_LOGGED_ERRORS, level="error", warnings=False, roots=None):
    logged = 0
    roots = server_folders() if roots is None else roots

    def log_error(error):
        nonlocal logged
        logged += 1
        # Rewritten in place: strict mode stops with this same error, and the job's
        # failure message must not name the server path either.
        error.location = shown_location(error.location, roots)
        error.reason = shown_location(error.reason, roots)
        if logged <= limit:
            log(job, error.reason, level=level, location=error.location)
        elif logged == limit + 1:
            words = (_("more than %(limit)s warnings: the rest are counted, not logged")
                     if warnings else
                     _("more than %(limit)s bad records: the rest are counted, not logged"))
            log(job, words % {"limit": limit}, level="warning")

    return log_error


def warning_logger(job, limit=MAX_LOGGED_ERRORS, roots=None):
    """Duplicate keys and the like: the record was written, but say where."""
    return error_logger(job, limit, level="warning", warnings=True, roots=roots)


def summary(counts):
    excluded = sum(counts["excluded"].values())
    if counts.get("deletions"):
        return _("%(read)s read: %(added)s added, %(updated)s updated, %(unchanged)s "
                 "unchanged, %(deletions)s deletions (%(deleted)s marked deleted), "
                 "%(excluded)s excluded, %(failed)s errors") % {
            "read": f"{counts['read']:,}", "added": f"{counts['added']:,}",
            "updated": f"{counts['updated']:,}", "unchanged": f"{counts['unchanged']:,}",
            "deletions": f"{counts['deletions']:,}", "deleted": f"{counts['deleted']:,}",
            "excluded": f"{excluded:,}", "failed": f"{counts['failed']:,}"}
    return _("%(read)s read: %(added)s added, %(updated)s updated, %(unchanged)s unchanged, "
             "%(excluded)s excluded, %(failed)s errors") % {
        "read": f"{counts['read']:,}", "added": f"{counts['added']:,}",
        "updated": f"{counts['updated']:,}", "unchanged": f"{counts['unchanged']:,}",
        "excluded": f"{excluded:,}", "failed": f"{counts['failed']:,}"}

"""Long work as jobs: enqueue after commit, claim by conditional update, report progress.

Apps register a handler per job kind with `@job_handler("kind")`. A handler takes
the claimed Job and a `report(done, total=None, message="")` callable, returns a
JSON-able result, and must be safe to run twice (a worker killed mid-job makes
the job run again from the start). `report` raises JobCancelled once someone asked
to cancel the job, so a handler stops at its next progress report.

What a job shows (its page, `/api/jobs/<id>/`) never carries a server path or a
data value: a result names files and URLs, not paths (`without_server_paths` is the
net under that), and a failure is stored as the handler's own words only when it
raised them for people (`JobError`, or a class registered with `user_facing`, such
as an importer's located bad record); anything else is logged here with the job id
and the job says only what kind of failure it was and where to look (`public_error`).

The Job row, not the broker message, is the source of truth. The message only
carries the id, so sending it twice is harmless: `claim` lets one run proceed.
That is what makes the failures below recoverable:

- A worker dies mid-job (SIGKILL, out of memory, a lost machine). Tasks are
  acknowledged late, so Redis keeps the message as unacknowledged and gives it
  back after the transport's `visibility_timeout` (one hour by default); with the
  prefork pool a killed child's task is rejected and requeued at once, but then
  the job's heartbeat is still fresh and the claim refuses it. Neither is what
  brings the job back: `recover()` does. Every worker runs it when it starts and
  every SWEEP_EVERY seconds after (`worker.start_sweeper`, wired in workbench/worker.py):
  a running job whose heartbeat is older than STALE_AFTER is put back to queued
  and its id sent again; after MAX_ATTEMPTS such deaths it is marked failed
  instead, so a job that kills its worker cannot loop. A worker that was only
  slow and comes back finds at its next report that the job was taken over
  (JobTakenOver) and stops without touching the row.
- The broker is unreachable when a job is enqueued. `broker.send` tries once,
  briefly, and never fails the request: the job stays queued with no
  `heartbeat_at` (for a queued job that field is when its id was last handed to
  the broker), pages say that background work is delayed, and `recover()` sends
  it once a worker can reach the broker again.
- The broker loses a message it had (Redis restarted without persistence): a
  queued job not claimed STALE_AFTER after it was sent is sent again.

Tuning, from the environment (read here once):

- WORKBENCH_JOB_STALE_SECONDS (default 300): a running job silent this long is
  dead. Must exceed the longest gap between two reports of any handler (ingest
  reports at least every minute while a source makes it wait).
- WORKBENCH_JOB_SWEEP_SECONDS (default 30): how often each worker runs
  `recover()`; 0 turns the worker's sweep off (run `manage.py recover_jobs`
  from cron instead).
"""

import logging
import os
import tempfile
import threading
from datetime import timedelta
from pathlib import Path

from celery import shared_task
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop as _

from . import broker
from .celery import runs_in_process  # noqa: F401  (jobs.runs_in_process, as callers ask)
from .models import Job, JobEvent

logger = logging.getLogger(__name__)


def _env_seconds(name, default):
    value = os.environ.get(name, "").strip()
    try:
        seconds = float(value) if value else default
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number of seconds") from None
    if seconds < 0:
        raise ImproperlyConfigured(f"{name}={value!r} must not be negative")
    return seconds


# A running job whose worker has not reported for this long is taken as dead:
# recover() queues it again, and a redelivered message may claim it. While a handler
# runs, a thread of its process beats every fifth of this, so a run that is only slow
# (a long bootstrap, zipping a big export) is never taken for dead: silence means the
# process is gone.
STALE_AFTER = timedelta(seconds=_env_seconds("WORKBENCH_JOB_STALE_SECONDS", 300))
BEAT_EVERY = STALE_AFTER.total_seconds() / 5
# How often each worker looks for jobs to recover (0: never; see worker.start_sweeper).
SWEEP_EVERY = _env_seconds("WORKBENCH_JOB_SWEEP_SECONDS", 30)
# A job whose id has not reached the broker this long after it was created is
# sent by recover(); younger ones are probably being sent by their request now.
UNSENT_GRACE = timedelta(seconds=5)
# Runs of one job whose worker died; at this many the job is failed, not retried.
MAX_ATTEMPTS = 3
# Jobs recover() sends in one pass at most; the rest wait for the next pass.
RECOVER_BATCH = 500

_handlers = {}
# What a lost database connection raises (psycopg's errors come wrapped as these).
CONNECTION_LOST = (OperationalError, InterfaceError)

# How a job's kind is named to people (the job list, a failure's message).
# Marked for translation; pages show them through workbench_jobs.job_label.
KIND_LABELS = {"ingest": _("Ingest"), "import_to_study": _("Import into a study"),
               "export": _("Export"), "agreement": _("Agreement report"),
               "agreement_estimate": _("Agreement estimate"),
               "scan_framework": _("History scan"), "load_demo": _("Demo study"),
               "rebuild_disagreements": _("Disagreements rebuild"),
               "import_rater_codings": _("Rater codings import"),
               "export_qdpx": _("REFI-QDA project export"),
               "import_qdpx": _("REFI-QDA project import"),
               "screening_rank": _("Screening ranking"),
               "screening_simulate": _("Screening replay"),
               "model_run": _("Model rater run")}


class JobError(Exception):
    """Raised by a handler on purpose, with a message written for the person who started
    the job: stored and shown as it is. It must name no server path and no data value."""


# Exceptions whose text the code itself writes for people and which the job shows as
# "Name: text" (an importer's located bad record: file, line, field). Apps add theirs
# with user_facing(). Any other exception may quote a server path or a data value (a
# blinded field in a Parquet type error): it goes to the server log, and the job
# shows only what kind of failure it was and where to look (public_error).
_user_facing = ()


def user_facing(*classes):
    global _user_facing
    _user_facing = tuple(dict.fromkeys((*_user_facing, *classes)))
    return classes[0] if len(classes) == 1 else classes


def public_error(job, exc):
    """What the job row keeps of a failure, for its page and the API."""
    if isinstance(exc, JobError):
        return str(exc)
    if _user_facing and isinstance(exc, _user_facing):
        # Written for the reader as it is: no class name of ours in front of it.
        message = str(exc)
        return message[:1].upper() + message[1:]
    what = KIND_LABELS.get(job.kind, f"The {job.kind} job")
    return FAILED_ON_SERVER % {"what": what, "job": job.pk}


# Kept in English on the job row (the API's words); the job page reads them in its
# reader's language (workbench.templatetags.workbench_jobs.job_words).
FAILED_ON_SERVER = _("%(what)s failed on the server; the details are in the server log "
                     "under job %(job)s.")
CANCELLED = _("Cancelled.")
# A job whose database connection was lost (run again, or given up after MAX_ATTEMPTS).
QUEUED_AGAIN = _("Queued again: the database connection was lost.")
LOST_TOO_OFTEN = _("The database connection was lost too many times; the job stopped.")
RUNS_AGAIN = _("The database connection was lost; the job runs again.")
# A job sent with a countdown, while it waits (coding.agreement.snapshots).
SPACED_OUT = _("Starts shortly: these updates are spaced out so that coding stays fast.")
# The words above, stored in English, that pages show in the reader's language.
OWN_WORDS = (CANCELLED, QUEUED_AGAIN, LOST_TOO_OFTEN, SPACED_OUT)


def server_folders():
    """Where the server keeps its files: a job result naming a path under these says
    where things are on the server, which is nobody's business but the operator's."""
    roots = {Path(settings.VAR_DIR), Path(settings.BASE_DIR), Path(tempfile.gettempdir())}
    if getattr(settings, "IMPORT_DIR", None):
        roots.add(Path(settings.IMPORT_DIR))
    return [str(root.resolve()) for root in roots] + [str(root) for root in roots]


def without_server_paths(value, job_id, roots=None, quiet=False):
    """The result with every absolute path under a server folder replaced by its file
    name (logged, with the job id, unless quiet): handlers return names and URLs, never
    paths, and this is the net under that rule (and over rows written before it)."""
    roots = server_folders() if roots is None else roots
    if isinstance(value, dict):
        return {k: without_server_paths(v, job_id, roots, quiet) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_server_paths(v, job_id, roots, quiet) for v in value]
    if isinstance(value, str) and os.path.isabs(value) and any(
            value == root or value.startswith(root.rstrip(os.sep) + os.sep) for root in roots):
        if not quiet:
            logger.warning("job %s: its result named the server path %s; kept only its name",
                           job_id, value)
        return Path(value).name
    return value


class JobCancelled(Exception):
    pass


class JobTakenOver(Exception):
    """This run was given up for dead and the job queued again; the new run owns the row."""


def job_handler(kind):
    def register(fn):
        _handlers[kind] = fn
        return fn

    return register


def kinds():
    """The registered job kinds."""
    return list(_handlers)


def enqueue(kind, params=None, user=None, countdown=None, message=""):
    """Create a job row and send its id to the worker once the transaction commits.

    If the broker cannot be reached the job simply waits, queued (see the module
    docstring); the caller's transaction and request are not affected. With `countdown`
    (seconds, less than STALE_AFTER, after which the sweep would send it again) the worker
    starts it no sooner; `message` says why while it waits.
    """
    if kind not in _handlers:
        raise ValueError(f"unknown job kind {kind!r}")
    job = Job.objects.create(kind=kind, params=params or {}, created_by=user, message=message)
    transaction.on_commit(lambda: broker.send(job.pk, job.kind, countdown))
    return job


@shared_task(name=broker.RUN_JOB)
def run_job(job_id):
    """The task the broker carries: only the job's id; the row is the truth."""
    run(job_id)


def claim(job_id):
    """Mark the job running if nobody else holds it; None when it is taken or finished."""
    now = timezone.now()
    claimable = Q(status=Job.Status.QUEUED) | Q(
        status=Job.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER, attempts__lt=MAX_ATTEMPTS
    )
    taken = Job.objects.filter(claimable, pk=job_id).update(
        status=Job.Status.RUNNING, started_at=now, heartbeat_at=now,
        attempts=F("attempts") + 1,
    )
    return Job.objects.get(pk=job_id) if taken == 1 else None


def run(job_id):
    """Claim and execute one job; failures are recorded on the row, never retried."""
    job = claim(job_id)
    if job is None:
        logger.info("job %s is not claimable (finished or held by a live worker)", job_id)
        return

    # Every write of this run is conditional on the run still owning the row: a
    # run given up for dead (recover()) must not overwrite its successor's.
    mine = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING, attempts=job.attempts)

    def report(done, total=None, message=""):
        fields = {"done": done, "heartbeat_at": timezone.now()}
        if total is not None:
            fields["total"] = total
        if message:
            fields["message"] = message[:500]
        if not mine.update(**fields):
            raise JobTakenOver
        if Job.objects.filter(pk=job.pk, cancel_requested=True).exists():
            raise JobCancelled

    heart = None if runs_in_process() else Heartbeat(mine)
    try:
        if heart:
            heart.start()
        result = _handlers[job.kind](job, report)
    except JobTakenOver:
        logger.warning("job %s was queued again while this run (attempt %s) was silent; "
                       "stopping it", job.pk, job.attempts)
        return
    except JobCancelled:
        on_fresh_connection(lambda: mine.update(
            status=Job.Status.CANCELLED, finished_at=timezone.now(), message=CANCELLED))
        return
    except CONNECTION_LOST as exc:
        # The database went away under the job (a restart, a failover, a pooler's recycle):
        # not the job's fault. Queued again and sent at once on a new connection, so it
        # runs again in seconds, not after STALE_AFTER; after MAX_ATTEMPTS, failed.
        if heart:
            heart.stop()
            heart = None
        _connection_lost(job, mine, exc)
        return
    except Exception as exc:  # the job row is where a person reads the failure
        if isinstance(exc, (JobError, *_user_facing)):
            # A failure written for the person who started the job (a bad file, a source's
            # error): said once, without a traceback, which would only be noise.
            logger.warning("job %s (%s) failed: %s", job.pk, job.kind, exc)
        else:
            # The whole text, with its traceback, only in the server log: it may quote a
            # server path or a data value the job's reader may not see.
            logger.exception("job %s (%s) failed", job.pk, job.kind)
        error = public_error(job, exc)
        on_fresh_connection(lambda: mine.update(
            status=Job.Status.FAILED, error=error, finished_at=timezone.now()))
        return
    finally:
        if heart:
            heart.stop()
    on_fresh_connection(lambda: mine.update(
        status=Job.Status.DONE, result=without_server_paths(result or {}, job.pk),
        finished_at=timezone.now(), heartbeat_at=timezone.now()))


def on_fresh_connection(write):
    """Write a job's state; if the connection in use has died, once more on a new one, so
    a job's end is recorded at once instead of leaving it `running` for the sweep."""
    try:
        return write()
    except CONNECTION_LOST as exc:
        logger.warning("database connection lost (%s); writing the job's state on a new one",
                       str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__)
        connection.close()
        return write()


def _connection_lost(job, mine, exc):
    words = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    if job.attempts >= MAX_ATTEMPTS:
        logger.warning("job %s (%s) lost its database connection on attempt %s; failed",
                       job.pk, job.kind, job.attempts)
        on_fresh_connection(lambda: mine.update(
            status=Job.Status.FAILED, finished_at=timezone.now(),
            error=LOST_TOO_OFTEN))
        return
    logger.warning("job %s (%s) lost its database connection (%s); running it again",
                   job.pk, job.kind, words)
    again = on_fresh_connection(lambda: mine.update(
        status=Job.Status.QUEUED, heartbeat_at=None, message=QUEUED_AGAIN))
    if again:
        log(job, RUNS_AGAIN, level=JobEvent.Level.WARNING)
        broker.send(job.pk, job.kind)


class Heartbeat(threading.Thread):
    """Keeps a running job's heartbeat fresh while its handler works, from the same
    process: it stops when the process dies, which is what recover() looks for."""

    def __init__(self, mine):
        super().__init__(name="job-heartbeat", daemon=True)
        self.mine, self._stopped = mine, threading.Event()

    def run(self):
        from django.db import connection

        try:
            while not self._stopped.wait(BEAT_EVERY):
                if not self.mine.update(heartbeat_at=timezone.now()):
                    return  # taken over or finished: the run finds out at its next report
        finally:
            connection.close()

    def stop(self):
        self._stopped.set()
        self.join(timeout=BEAT_EVERY + 5)


def log(job, message, *, level=JobEvent.Level.INFO, location=""):
    """Add a line to the job's log, kept with the job after it finishes."""
    return JobEvent.objects.create(job=job, level=level, location=location[:300], message=message)


def cancel(job):
    """Ask a job to stop; a queued job stops at once, a running one at its next report."""
    Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(
        status=Job.Status.CANCELLED, finished_at=timezone.now(), message=CANCELLED
    )
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)


def recover(now=None, kinds=None):
    """Hand the broker again every job it may have lost; returns the ids sent.

    With `kinds`, only jobs of those kinds (a worker sweeps its own queues' kinds).

    Runs in every worker (at start, then every SWEEP_EVERY seconds) and from
    `manage.py recover_jobs`; several at once are fine, as each job is taken by a
    conditional update before it is sent. In order:

    1. A running job silent for STALE_AFTER lost its worker. If someone asked to
       cancel it, it is cancelled; after MAX_ATTEMPTS runs it is failed; otherwise
       it is queued again (with a warning in its log).
    2. A queued job is sent when its id never reached the broker (UNSENT_GRACE
       after it was created) or reached it STALE_AFTER ago without being claimed
       (the broker lost the message, or a backlog delays it: a duplicate is only
       a message the claim refuses). If the broker cannot be reached the pass
       stops and the job stays unsent for the next one.
    """
    now = now or timezone.now()
    stale = now - STALE_AFTER
    scope = Job.objects.all() if kinds is None else Job.objects.filter(kind__in=kinds)
    dead = scope.filter(status=Job.Status.RUNNING, heartbeat_at__lt=stale)
    dead.filter(cancel_requested=True).update(
        status=Job.Status.CANCELLED, finished_at=now, message=CANCELLED)
    for job in dead.filter(attempts__gte=MAX_ATTEMPTS):
        if dead.filter(pk=job.pk, attempts__gte=MAX_ATTEMPTS).update(
                status=Job.Status.FAILED, finished_at=now,
                error=f"Its worker stopped during each of {job.attempts} runs (killed, out of "
                      "memory or restarted); not tried again."):
            log(job, "given up: the worker stopped during every run", level=JobEvent.Level.ERROR)
    requeued = []
    for job in dead.filter(attempts__lt=MAX_ATTEMPTS)[:RECOVER_BATCH]:
        if dead.filter(pk=job.pk, attempts__lt=MAX_ATTEMPTS).update(
                status=Job.Status.QUEUED, heartbeat_at=None,
                message="Queued again: its worker stopped reporting."):
            requeued.append(job.pk)
            log(job, f"its worker stopped reporting after {job.done} done (run {job.attempts}); "
                     "queued again", level=JobEvent.Level.WARNING)

    due = Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=stale)
    waiting = scope.filter(due, status=Job.Status.QUEUED)
    others = (waiting.exclude(pk__in=requeued)
              .exclude(heartbeat_at__isnull=True, created_at__gte=now - UNSENT_GRACE)
              .order_by("created_at", "pk").values_list("pk", "kind")[:RECOVER_BATCH])
    requeued_kinds = dict(Job.objects.filter(pk__in=requeued).values_list("pk", "kind"))
    sent = []
    for pk, kind in [(pk, requeued_kinds[pk]) for pk in requeued] + list(others):
        if not waiting.filter(pk=pk).update(heartbeat_at=now):
            continue  # claimed, cancelled or taken by another sweep meanwhile
        if not broker.publish(pk, kind):
            Job.objects.filter(pk=pk, status=Job.Status.QUEUED, heartbeat_at=now).update(
                heartbeat_at=None)
            break
        sent.append(pk)
    if sent:
        logger.info("sent %s job(s) again: %s", len(sent), sent)
    return sent

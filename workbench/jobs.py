"""Long work as jobs: enqueue after commit, claim by conditional update, report progress.

Apps register a handler per job kind with `@job_handler("kind")`. A handler takes
the claimed Job and a `report(done, total=None, message="")` callable, returns a
JSON-able result, and must be safe to run twice (a worker killed mid-job makes
the broker deliver it again). `report` raises JobCancelled once someone asked to
cancel the job, so a handler stops at its next progress report.
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from .models import Job, JobEvent

logger = logging.getLogger(__name__)

# A running job whose worker has not reported for this long is taken as dead
# and may be claimed again by the redelivered task.
STALE_AFTER = timedelta(minutes=5)

_handlers = {}


class JobCancelled(Exception):
    pass


def job_handler(kind):
    def register(fn):
        _handlers[kind] = fn
        return fn

    return register


def runs_in_process():
    """Whether tasks run in the calling process (the embedded mode) rather than on a worker."""
    from .celery import app

    return bool(app.conf.task_always_eager)


def enqueue(kind, params=None, user=None):
    """Create a job row and send its id to the worker once the transaction commits."""
    if kind not in _handlers:
        raise ValueError(f"unknown job kind {kind!r}")
    job = Job.objects.create(kind=kind, params=params or {}, created_by=user)
    from .tasks import run_job

    transaction.on_commit(lambda: run_job.delay(job.pk))
    return job


def claim(job_id):
    """Mark the job running if nobody else holds it; None when it is taken or finished."""
    now = timezone.now()
    claimable = Q(status=Job.Status.QUEUED) | Q(
        status=Job.Status.RUNNING, heartbeat_at__lt=now - STALE_AFTER
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

    def report(done, total=None, message=""):
        fields = {"done": done, "heartbeat_at": timezone.now()}
        if total is not None:
            fields["total"] = total
        if message:
            fields["message"] = message[:500]
        Job.objects.filter(pk=job.pk).update(**fields)
        if Job.objects.filter(pk=job.pk, cancel_requested=True).exists():
            raise JobCancelled

    try:
        result = _handlers[job.kind](job, report)
    except JobCancelled:
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.CANCELLED, finished_at=timezone.now(), message="Cancelled."
        )
        return
    except Exception as exc:  # the job row is where a person reads the failure
        logger.exception("job %s failed", job.pk)
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.FAILED, error=f"{type(exc).__name__}: {exc}",
            finished_at=timezone.now(),
        )
        return
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.DONE, result=result or {}, finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )


def log(job, message, *, level=JobEvent.Level.INFO, location=""):
    """Add a line to the job's log, kept with the job after it finishes."""
    return JobEvent.objects.create(job=job, level=level, location=location[:300], message=message)


def cancel(job):
    """Ask a job to stop; a queued job stops at once, a running one at its next report."""
    Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(
        status=Job.Status.CANCELLED, finished_at=timezone.now(), message="Cancelled."
    )
    Job.objects.filter(pk=job.pk).update(cancel_requested=True)

"""Handing job ids to the Celery broker, and telling people when that cannot be done.

`send(job_id)` is how `jobs.enqueue` hands a committed job to the broker. When
tasks run in-process (the embedded mode) it runs the job, as before. Otherwise it
makes one short attempt on a connection of its own (no connection retries, a
2 s connect and 3 s socket timeout, no publish retry), so a request that enqueues
work is never held up, and never fails, because Redis is down: the failure is
logged, the job stays queued with no `heartbeat_at`, and `jobs.recover()` sends
it later. A successful send stamps `heartbeat_at` on the still-queued job, which
for a queued job means "its id reached the broker at".

`work_is_delayed()` is what the pages' banner asks: is there queued work whose
id has not reached the broker? That is read from the database, so every web
process agrees, and the banner goes away by itself once the jobs are sent.

`start_sweeper()` runs `jobs.recover()` in a daemon thread of the worker: once
when the worker is ready and then every `jobs.SWEEP_EVERY` seconds, each pass on
its own database connection, closed afterwards.
"""

import logging
import threading

from django.db import connection
from django.utils import timezone

from . import jobs
from .celery import app
from .models import Job

logger = logging.getLogger(__name__)

# One attempt, briefly: kombu's default would retry the connection for
# broker_connection_timeout (4 s) and redis-py's socket would wait on a
# silent host for as long as the kernel lets it.
PUBLISH_TRANSPORT_OPTIONS = {"max_retries": 0, "socket_connect_timeout": 2, "socket_timeout": 3}


def publish(job_id, kind=None):
    """Send the job's id to its kind's queue (workbench.queues) once; whether the broker
    took it. Never raises when tasks go to a broker (a failure is logged); runs the job
    when they run in-process."""
    from .queues import queue_for
    from .tasks import run_job

    if jobs.runs_in_process():
        run_job.delay(job_id)
        return True
    try:
        with app.connection_for_write(transport_options=PUBLISH_TRANSPORT_OPTIONS) as conn:
            if kind is None:
                kind = Job.objects.values_list("kind", flat=True).get(pk=job_id)
            run_job.apply_async((job_id,), connection=conn, retry=False, queue=queue_for(kind))
    except Exception as exc:  # whatever the broker did, the request must not fail
        logger.warning("job %s not sent, the task queue is unreachable (%s: %s); it stays "
                       "queued and is sent again once the broker answers",
                       job_id, type(exc).__name__, exc)
        return False
    return True


def send(job_id, kind=None):
    """Publish a job enqueued by `jobs.enqueue` and mark it as having reached the broker."""
    if publish(job_id, kind) and not jobs.runs_in_process():
        Job.objects.filter(pk=job_id, status=Job.Status.QUEUED, heartbeat_at__isnull=True).update(
            heartbeat_at=timezone.now())


def unsent():
    """Queued jobs whose id has not reached the broker (yet)."""
    return Job.objects.filter(status=Job.Status.QUEUED, heartbeat_at__isnull=True)


def work_is_delayed():
    """Whether some background work waits because the task queue could not be reached."""
    if jobs.runs_in_process():
        return False
    return unsent().exists()


def waiting_for_queue(job):
    """Whether this job waits because its id could not be handed to the task queue."""
    return (not jobs.runs_in_process() and job.status == Job.Status.QUEUED
            and job.heartbeat_at is None)


# --- the worker's sweep -------------------------------------------------------

_sweeper = {"thread": None, "stop": threading.Event()}


def start_sweeper(every=None, queues=None):
    """Run jobs.recover() now and then every `every` seconds in a daemon thread; returns it.

    Called from the worker_ready signal (celery.py) with the queues the worker consumes:
    it sweeps only the kinds routed there (workbench.queues.kinds_for). `every` defaults
    to jobs.SWEEP_EVERY; 0 turns the sweep off.
    """
    from .queues import kinds_for

    every = jobs.SWEEP_EVERY if every is None else every
    thread = _sweeper["thread"]
    if not every or (thread is not None and thread.is_alive()):
        return thread
    stop = _sweeper["stop"] = threading.Event()

    def sweep():
        while True:
            try:
                jobs.recover(kinds=None if queues is None else kinds_for(queues, jobs.kinds()))
            except Exception:  # a database or broker hiccup: try again next time
                logger.exception("recovering jobs failed")
            finally:
                connection.close()
            if stop.wait(every):
                return

    thread = _sweeper["thread"] = threading.Thread(target=sweep, name="workbench-job-sweeper",
                                                   daemon=True)
    thread.start()
    return thread


def stop_sweeper():
    _sweeper["stop"].set()

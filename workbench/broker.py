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

The broker names the task it sends (`RUN_JOB`, defined in `workbench.jobs`), so the
transport sits below the job runner that uses it. The worker's sweep, which sends
again what was lost, is in `workbench.worker`.
"""

import logging

from django.utils import timezone

from .celery import app, runs_in_process
from .models import Job
from .queues import queue_for

logger = logging.getLogger(__name__)

# One attempt, briefly: kombu's default would retry the connection for
# broker_connection_timeout (4 s) and redis-py's socket would wait on a
# silent host for as long as the kernel lets it.
PUBLISH_TRANSPORT_OPTIONS = {"max_retries": 0, "socket_connect_timeout": 2, "socket_timeout": 3}
# The one task: run the job whose id it carries (workbench.jobs.run_job).
RUN_JOB = "workbench.run_job"


def publish(job_id, kind=None, countdown=None):
    """Send the job's id to its kind's queue (workbench.queues) once; whether the broker
    took it. Never raises when tasks go to a broker (a failure is logged); runs the job
    when they run in-process. With `countdown` (seconds) the worker starts it no sooner."""
    if runs_in_process():
        app.tasks[RUN_JOB].delay(job_id)
        return True
    try:
        with app.connection_for_write(transport_options=PUBLISH_TRANSPORT_OPTIONS) as conn:
            if kind is None:
                kind = Job.objects.values_list("kind", flat=True).get(pk=job_id)
            app.send_task(RUN_JOB, (job_id,), connection=conn, retry=False,
                          queue=queue_for(kind), countdown=countdown)
    except Exception as exc:  # whatever the broker did, the request must not fail
        logger.warning("job %s not sent, the task queue is unreachable (%s: %s); it stays "
                       "queued and is sent again once the broker answers",
                       job_id, type(exc).__name__, exc)
        return False
    return True


def send(job_id, kind=None, countdown=None):
    """Publish a job enqueued by `jobs.enqueue` and mark it as having reached the broker."""
    if publish(job_id, kind, countdown) and not runs_in_process():
        Job.objects.filter(pk=job_id, status=Job.Status.QUEUED, heartbeat_at__isnull=True).update(
            heartbeat_at=timezone.now())


def unsent():
    """Queued jobs whose id has not reached the broker (yet)."""
    return Job.objects.filter(status=Job.Status.QUEUED, heartbeat_at__isnull=True)


def work_is_delayed():
    """Whether some background work waits because the task queue could not be reached."""
    if runs_in_process():
        return False
    return unsent().exists()


def waiting_for_queue(job):
    """Whether this job waits because its id could not be handed to the task queue."""
    return (not runs_in_process() and job.status == Job.Status.QUEUED
            and job.heartbeat_at is None)

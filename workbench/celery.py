"""The Celery app. Configuration comes from Django settings (CELERY_* names).

Each worker also runs the job sweep (`workbench.broker.start_sweeper`): jobs whose
worker died, or whose id never reached the broker, are sent again (see
`workbench.jobs`).
"""

import os

from celery import Celery
from celery.signals import worker_init, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")

app = Celery("workbench")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def load_report_libraries(**kwargs):
    """What the agreement job imports on first use (about a second), imported before the
    worker takes a job: a pool's processes start with it."""
    from coding.reliability_coefficients import load_statsmodels

    load_statsmodels()


@worker_ready.connect
def start_job_sweep(sender=None, **kwargs):
    from .broker import start_sweeper

    # The sweep looks after the kinds of the queues this worker consumes (workbench.queues).
    consumer = getattr(sender, "task_consumer", None)
    queues = [queue.name for queue in consumer.queues] if consumer is not None else None
    start_sweeper(queues=queues)


@worker_shutdown.connect
def stop_job_sweep(**kwargs):
    from .broker import stop_sweeper

    stop_sweeper()

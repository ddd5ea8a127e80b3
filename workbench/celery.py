"""The Celery app. Configuration comes from Django settings (CELERY_* names).

What a worker does besides running jobs (the job sweep) is wired in `workbench.worker`.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")

app = Celery("workbench")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def runs_in_process():
    """Whether tasks run in the calling process (the embedded mode) rather than on a worker.
    Decided once, in settings (CELERY_TASK_ALWAYS_EAGER), never by probing the broker."""
    return bool(app.conf.task_always_eager)

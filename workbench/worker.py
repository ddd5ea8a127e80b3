"""What a Celery worker does besides running jobs: the job sweep, and a lower CPU priority.

A worker lowers its own CPU priority when it starts (`os.nice(settings.WORKER_NICE)`,
WORKBENCH_WORKER_NICE, default 10; its pool's processes inherit it), and its session's
scheduling group's when it leads a session (`lower_session_group`): on a machine that
also serves the coders, an agreement report, an export or an import then takes only the
CPU the web processes leave (issue 43: one background job took about half of what the
coders got on two cores). 0 keeps the priority the worker was started with.

`start_sweeper()` runs `jobs.recover()` in a daemon thread of the worker: once when the
worker is ready and then every `jobs.SWEEP_EVERY` seconds, each pass on its own database
connection, closed afterwards; it looks after the kinds of the queues this worker consumes
(workbench.queues). Connected to Celery's worker signals when Django starts
(workbench.apps), so a web process only connects them and never sweeps.
"""

import logging
import os
import threading
from pathlib import Path

from celery.signals import worker_init, worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection

from . import jobs
from .queues import kinds_for

logger = logging.getLogger(__name__)

_sweeper = {"thread": None, "stop": threading.Event()}


def start_sweeper(every=None, queues=None):
    """Run jobs.recover() now and then every `every` seconds in a daemon thread; returns it.

    Called from the worker_ready signal (below) with the queues the worker consumes:
    it sweeps only the kinds routed there (workbench.queues.kinds_for). `every` defaults
    to jobs.SWEEP_EVERY; 0 turns the sweep off.
    """
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


@worker_ready.connect
def start_job_sweep(sender=None, **kwargs):
    # The sweep looks after the kinds of the queues this worker consumes (workbench.queues).
    consumer = getattr(sender, "task_consumer", None)
    queues = [queue.name for queue in consumer.queues] if consumer is not None else None
    start_sweeper(queues=queues)


@worker_shutdown.connect
def stop_job_sweep(**kwargs):
    stop_sweeper()


@worker_init.connect
def lower_priority(**kwargs):
    """Below the web processes, so background work never starves the coders."""
    if settings.WORKER_NICE > 0:
        now = os.nice(settings.WORKER_NICE)
        logger.info("worker CPU priority lowered: niceness %s", now)
        if lower_session_group(settings.WORKER_NICE):
            logger.info("and its session's scheduling group's: niceness %s",
                        settings.WORKER_NICE)


AUTOGROUP = Path("/proc/self/autogroup")


def lower_session_group(nice, path=AUTOGROUP):
    """Lower the worker's session's scheduling group too; whether it was.

    Linux shares the CPU between sessions' groups (autogroups) before niceness counts
    inside a group: a worker in a session of its own (a service, `setsid`, most
    supervisors) got as much CPU as the web server's whole session, niced or not (measured
    with benchmarks/load.py --job-phases: 70% of a core for the niced worker, the three
    gunicorn workers down from 137% to 80%). Only when the worker leads its session, so
    that no other process is lowered with it; where there are no autogroups, nothing."""
    if os.getsid(0) != os.getpid():
        return False
    try:
        path.write_text(str(min(nice, 19)))  # the kernel's range, as os.nice clamps
    except OSError:  # no autogroups (disabled, or not Linux)
        return False
    return True

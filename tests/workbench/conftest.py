"""Servers of a test's own for the fault tests (test_faults.py, test_fault_run.py,
test_body_limit.py): real `celery worker` processes on a queue no other worker consumes,
killed and started at will; gunicorn on a free port; and a study coded in bulk for the
jobs they run."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from django.db import connection
from django.utils import timezone

from coding.labeling import queue
from coding.models import Assignment, Coding, Item
from ingest.models import Document, Snapshot, content_sha256
from tests import factories
from tests.conftest import _test_database_url
from workbench import queues
from workbench.celery import app
from workbench.models import Job

BASE_DIR = Path(__file__).resolve().parents[2]
REAL_BROKER = bool(os.environ.get("REDIS_URL")) and bool(os.environ.get("DATABASE_URL"))
needs_real_worker = pytest.mark.skipif(
    not REAL_BROKER, reason="needs a real Celery worker: set DATABASE_URL and REDIS_URL")

# The workers started here take a job whose heartbeat is this old as dead (5 min in
# production) and run the sweep this often (30 s in production).
STALE_SECONDS = 6
SWEEP_SECONDS = 0.5


# --- workers of our own -------------------------------------------------------

class Workers:
    """Starts `celery worker` processes on a queue no other worker consumes."""

    def __init__(self, var_dir):
        self.queue = f"faults-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.processes = []
        self.env = dict(
            os.environ, DATABASE_URL=_test_database_url(connection.settings_dict),
            WORKBENCH_QUEUE=self.queue, WORKBENCH_VAR_DIR=str(var_dir),
            WORKBENCH_JOB_STALE_SECONDS=str(STALE_SECONDS),
            WORKBENCH_JOB_SWEEP_SECONDS=str(SWEEP_SECONDS),
        )

    def start(self, session=False):
        """A worker; with `session`, in a session of its own, as a service starts it."""
        hostname = f"{self.queue}-{len(self.processes) + 1}@localhost"
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "workbench", "worker", "--pool=solo",
             "--concurrency=1", "--loglevel=WARNING", "-Q", queues.worker_argument(ns=self.queue),
             "--hostname", hostname,
             "--without-mingle", "--without-gossip", "--without-heartbeat"],
            env=self.env, cwd=BASE_DIR, start_new_session=session)
        self.processes.append(process)
        return process

    def kill(self, process):
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=20)

    def stop(self):
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        for name in queues.all_queues(self.queue):
            forget_queue(name)


def forget_queue(name):
    """Remove what Redis still holds for the queue: the killed worker's unacknowledged
    message, which would otherwise be restored to a queue nobody reads an hour later."""
    import redis

    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    client.delete(name, f"_kombu.binding.{name}", f"_kombu.binding_permanent.{name}")
    for tag, raw in client.hscan_iter("unacked"):
        if json.loads(raw)[2] == name:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)


@pytest.fixture
def workers(transactional_db, tmp_path):
    """Workers on a queue of this test; the test process sends its jobs there too."""
    if not REAL_BROKER:
        yield None
        return
    pool = Workers(tmp_path / "var")
    default_queue = app.conf.task_default_queue
    app.conf.task_default_queue = pool.queue
    try:
        yield pool
    finally:
        app.conf.task_default_queue = default_queue
        pool.stop()


def wait_until(condition, what, process=None, attempts=1500, pause=0.02):
    """Poll (bounded; not a timing assertion) until condition() is true."""
    for _ in range(attempts):
        if condition():
            return
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the worker exited with {process.returncode} before {what}")
        time.sleep(pause)
    raise AssertionError(f"gave up waiting for {what}")


def progressed(job):
    def check():
        job.refresh_from_db()
        assert not job.finished, f"job {job.pk} finished before it could be interrupted"
        return job.status == Job.Status.RUNNING and job.done > 0
    return check



# --- a study coded in bulk, for the jobs ---------------------------------------------

def coded_study(people, items):
    """A study of `items` papers, each coded by cora and cyril, written in bulk."""
    study = factories.study("Fault export study", owner=people["olive"])
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    codebook = factories.codebook(study)
    version = codebook.current_version()
    documents = Document.objects.bulk_create([
        Document(kind=Document.Kind.PAPER, source="fault", key=f"2510.{n:05d}",
                 title=f"Invented paper {n} for the export", url="",
                 published=datetime(2025, 1 + n % 12, 1 + n % 28, tzinfo=UTC),
                 metadata={"abstract": f"Invented abstract {n}.", "authors": ["Ann Example"]})
        for n in range(items)])
    snapshots = Snapshot.objects.bulk_create([
        Snapshot(document=d, number=1, content=content, sha256=content_sha256(content))
        for d in documents for content in [d.content()]])
    made = Item.objects.bulk_create([
        Item(study=study, document=d, snapshot=s, codebook=codebook, taken=2,
             **queue.new_item_fields(study, d))
        for d, s in zip(documents, snapshots)])
    now = timezone.now()
    coders = [people["cora"], people["cyril"]]
    assignments = Assignment.objects.bulk_create([
        Assignment(item=item, study_id=item.study_id, coder=coder,
                   status=Assignment.Status.SUBMITTED, opened_at=now, finished_at=now)
        for item in made for coder in coders])
    Coding.objects.bulk_create([
        Coding(assignment=a, revision=1, codebook_version=version, seconds_spent=30 + n % 90,
               values={"label": "analysis", "size_b": n % 70, "failures": ["none"],
                       "code_released": "yes" if n % 3 else "no"}
               if n % 4 else
               {"label": "rl_method", "scope": "general", "size_b": "not_reported",
                "failures": ["entropy_collapse"], "code_released": "no"})
        for n, a in enumerate(assignments)])
    return study


# --- gunicorn ---------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url):
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def gunicorn_serving(env, log, workers=1, log_level="info"):
    """gunicorn on the project's WSGI app on a free port of 127.0.0.1, its output in `log`;
    yields its URL once /healthz answers; stopped at the end."""
    port = free_port()
    with open(log, "wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "workbench.wsgi:application", "--bind",
             f"127.0.0.1:{port}", "--workers", str(workers), "--log-level", log_level],
            cwd=BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers(f"{url}/healthz"), "gunicorn to answer", server)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)

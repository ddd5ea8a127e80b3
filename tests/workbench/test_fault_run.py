"""Faults under traffic, end to end on PostgreSQL with gunicorn and a real Celery worker
(issue 43): what an operator meets when the database restarts, fails over or a PgBouncer
recycles its server connections (`pg_terminate_backend` of every connection the app holds),
and when a worker dies in the middle of a job.

- Coders submit through the API on gunicorn while every app connection is terminated again
  and again. Each coder does what the page does: on 503 it waits for Retry-After and sends
  the same submission again (its Idempotency-Key). No coder sees a 5xx but a 503 with
  Retry-After; every acknowledged submission is stored once, with the values sent; no
  assignment gets a second coding or revision; no item goes over its overlap. The agreement
  job the owner starts meanwhile ends done or failed, never left running.
- A job whose worker's connection is terminated mid-run is run again on a new connection at
  once and ends done, the loss in its log.
- An agreement job whose worker is SIGKILLed mid-run is taken up by the next worker and
  ends done.

Every wait is bounded (a give-up point for a loaded machine, not a timing assertion). Needs
DATABASE_URL (PostgreSQL) and REDIS_URL; skipped without them.
"""

import os
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from coding.agreement import snapshots
from coding.export.jobs import start_export
from coding.models import AgreementSnapshot, Assignment, Coding, Item
from tests import factories
from tests.conftest import _test_database_url, wait_for_job
from tests.workbench.conftest import (
    coded_study, gunicorn_serving, needs_real_worker, progressed, wait_until,
)
from workbench.models import Job, JobEvent

ROOT = Path(__file__).resolve().parents[2]
CSRF = "f" * 32  # a CSRF secret of our own, sent as cookie and header
ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
pytestmark = [needs_real_worker, pytest.mark.worker]


def terminate_app_connections():
    """End every other connection to the test database, as a restart would; how many."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) "
                       "FROM pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid()")
        return cursor.fetchone()[0]


@pytest.fixture
def gunicorn(workers, tmp_path):
    """gunicorn (2 sync workers) on the test database, sending jobs to `workers`' queue."""
    env = dict(os.environ, DATABASE_URL=_test_database_url(connection.settings_dict),
               WORKBENCH_QUEUE=workers.queue, WORKBENCH_VAR_DIR=str(tmp_path / "var"),
               DJANGO_SECRET_KEY=settings.SECRET_KEY)
    log = tmp_path / "gunicorn.log"
    with gunicorn_serving(env, log, workers=2, log_level="warning") as url:
        yield url, log


def session_for(user):
    """A session cookie the server accepts (same database, same SECRET_KEY)."""
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


class Coder:
    """Next item → submit until none is left, as the page does: a 503 is waited out
    (Retry-After) and the same request sent again, a submission with its own key."""

    def __init__(self, url, slug, user, seen):
        self.slug, self.seen = slug, seen
        self.http = httpx.Client(base_url=url, timeout=60, cookies={
            "sessionid": session_for(user), "csrftoken": CSRF})
        self.acknowledged = {}  # assignment id -> values

    def post(self, path, **kwargs):
        headers = {"X-CSRFToken": CSRF, **kwargs.pop("headers", {})}
        for _ in range(50):
            response = self.http.post(path, headers=headers, **kwargs)
            self.seen.append((path.rsplit("/", 2)[-2], response.status_code,
                              response.headers.get("Retry-After")))
            if response.status_code != 503:
                return response
            time.sleep(min(float(response.headers.get("Retry-After", "1")), 0.2))
        raise AssertionError(f"{path} answered 503 fifty times in a row")

    def run(self):
        while True:
            response = self.post(f"/api/studies/{self.slug}/next/")
            if response.status_code == 204:
                return
            assert response.status_code == 200, response.text
            assignment = response.json()["id"]
            response = self.post(
                f"/api/studies/{self.slug}/assignments/{assignment}/submit/",
                json={"values": ANSWERS}, headers={"Idempotency-Key": str(uuid.uuid4())})
            assert response.status_code in (200, 201), response.text
            self.acknowledged[assignment] = ANSWERS


def test_coders_get_no_5xx_and_lose_nothing_while_connections_are_terminated(
        workers, gunicorn, people):
    url, log = gunicorn
    study = factories.study("Fault run study", owner=people["olive"], overlap=2)
    coders = [people["cora"], people["cyril"], factories.user("cleo"), factories.user("colm")]
    factories.member(study, people["olive"], "owner")
    for coder in coders:
        factories.member(study, coder, "coder")
    book = factories.codebook(study)
    for n in range(30):
        factories.paper_item(study, book, n)
    workers.start()

    seen = []
    owner = Coder(url, study.slug, people["olive"], seen)
    job_id = owner.post(f"/api/studies/{study.slug}/agreement/recompute/").json()["id"]
    team = [Coder(url, study.slug, coder, seen) for coder in coders]
    errors = []
    threads = [threading.Thread(target=_catching, args=(c.run, errors)) for c in team]
    for thread in threads:
        thread.start()
    terminated = 0
    while any(thread.is_alive() for thread in threads):
        terminated += terminate_app_connections()
        time.sleep(0.1)
    for thread in threads:
        thread.join()

    assert not errors, errors
    assert terminated > 0  # the faults happened while the coders worked
    statuses = Counter(status for _, status, _ in seen)
    assert set(statuses) <= {200, 201, 202, 204, 503}, statuses
    assert all(after for _, status, after in seen if status == 503)
    acknowledged = {a: v for c in team for a, v in c.acknowledged.items()}
    assert len(acknowledged) == 30 * 2  # every item coded by its two coders, to the end
    stored = Coding.objects.filter(assignment__study_id=study.pk)
    assert stored.count() == len(acknowledged)  # none lost, none doubled
    assert {c.assignment_id: c.values for c in stored} == acknowledged
    assert set(stored.values_list("revision", flat=True)) == {1}
    assert not Assignment.objects.filter(study_id=study.pk, status="active").exists()
    assert set(Item.objects.filter(study=study).values_list("taken", flat=True)) == {2}
    assert "Traceback" not in log.read_text()
    job = wait_for_job(Job.objects.get(pk=job_id))
    assert job.status in (Job.Status.DONE, Job.Status.FAILED)


def _catching(run, errors):
    try:
        run()
    except BaseException as error:  # noqa: BLE001  (reported by the test, not lost)
        errors.append(repr(error))


def test_a_job_whose_connection_is_terminated_runs_again_and_is_done(workers, people):
    study = coded_study(people, 4000)
    worker = workers.start()
    job = start_export(study, people["olive"], shapes=["items", "wide", "long"],
                       fmt="parquet")
    wait_until(progressed(job), "the export reported progress", worker)
    assert terminate_app_connections() > 0
    wait_for_job(job)
    assert job.status == Job.Status.DONE, job.error
    assert job.attempts == 2
    assert JobEvent.objects.filter(job=job, message__contains="connection was lost").exists()
    assert worker.poll() is None  # the worker itself went on


def test_an_agreement_job_whose_worker_is_killed_is_done_by_the_next(workers, people):
    import psycopg

    study = coded_study(people, 2000)
    first = workers.start()
    # The snapshot table held locked: the job computes, reports progress, then waits to
    # write, so it is surely killed mid-run however fast this machine is.
    with psycopg.connect(_test_database_url(connection.settings_dict)) as holder:
        holder.execute(f"LOCK TABLE {AgreementSnapshot._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        job = snapshots.recompute(study, people["olive"])
        wait_until(progressed(job), "the agreement job reported progress", first)
        workers.kill(first)
    second = workers.start()
    wait_for_job(job)
    assert second.poll() is None
    assert job.status == Job.Status.DONE, job.error
    assert job.attempts == 2
    assert AgreementSnapshot.objects.filter(study=study).exists()

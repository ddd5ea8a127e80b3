"""A database that drops its connections (issue 43, finding 1): a request that loses its
connection midway is answered 503 with Retry-After, never 500; a job whose connection dies
is recorded at once and runs again in seconds on a new connection, never left `running`
for the stale-job sweep."""

from django.db import OperationalError, connection

from coding.labeling.api import coder as coder_api
from tests.postgresql import on_postgresql
from workbench import jobs
from workbench.models import Job, JobEvent


def test_a_request_that_loses_its_connection_is_503_with_retry_after(alpha, people, client,
                                                                     monkeypatch, caplog):
    def gone(*args, **kwargs):
        raise OperationalError("terminating connection due to administrator command")

    monkeypatch.setattr(coder_api.queue, "next_item", gone)
    client.force_login(people["cora"])
    response = client.post(f"/api/studies/{alpha.slug}/next/")
    assert response.status_code == 503 and response["Retry-After"] == "2"
    assert response.json()["code"] == "database_unavailable"
    assert not any(r.exc_info for r in caplog.records)


@on_postgresql
def test_a_job_whose_connection_dies_runs_again_at_once(transactional_db, monkeypatch):
    def loses_it_once(job, report):
        if job.attempts == 1:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return {"attempt": job.attempts}

    monkeypatch.setitem(jobs._handlers, "test_connection_loss", loses_it_once)
    job = jobs.enqueue("test_connection_loss")
    job.refresh_from_db()
    assert (job.status, job.attempts, job.result) == ("done", 2, {"attempt": 2})
    assert JobEvent.objects.filter(job=job, message__contains="connection was lost").exists()


@on_postgresql
def test_a_job_that_keeps_losing_its_connection_is_failed_not_left_running(
        transactional_db, monkeypatch):
    def always_loses_it(job, report):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    monkeypatch.setitem(jobs._handlers, "test_connection_loss", always_loses_it)
    job = jobs.enqueue("test_connection_loss")
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("failed", jobs.MAX_ATTEMPTS)
    assert "connection was lost" in job.error
    assert not Job.objects.filter(status="running").exists()

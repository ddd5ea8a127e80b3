"""Imports run as jobs: progress on the row, bad records in its log, cancel, re-run."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from ingest import imports
from ingest.models import Document
from tests.conftest import wait_for_job
from workbench import jobs
from workbench.models import Job

from .conftest import FIXTURES


def snapshot_lines(path, n, start=0):
    with open(path, "w") as file:
        for i in range(start, start + n):
            file.write(json.dumps({
                "id": f"2509.{i:05d}", "title": f"Invented paper {i}", "abstract": "Invented.",
                "categories": "cs.LG", "authors_parsed": [["Example", "Ann", ""]],
                "versions": [{"version": "v1", "created": "Mon, 1 Sep 2025 10:00:00 GMT"}],
            }) + "\n")
    return path


def run_job(params):
    job = Job.objects.create(kind="ingest", params=params)
    jobs.run(job.pk)
    job.refresh_from_db()
    return job


def test_the_ingest_job_is_registered_when_django_starts():
    assert "ingest" in jobs._handlers


def test_an_ingest_job_reports_progress_and_logs_bad_records_where_they_are(db):
    path = FIXTURES / "arxiv" / "snapshot_bad.jsonl"
    job = run_job({"format": "arxiv_snapshot_file", "path": str(path)})
    assert job.status == Job.Status.DONE, job.error
    assert job.done == 9
    assert job.message == "9 read: 2 added, 0 updated, 0 unchanged, 0 excluded, 7 errors"
    assert job.result["added"] == 2 and job.result["failed"] == 7
    events = list(job.events.values_list("level", "location", "message"))
    assert len(events) == 7
    # The file by its name: the server's folders are not the job reader's business.
    assert events[3] == ("error", f"{path.name} line 5", "field 'title' should be a string, got int")
    assert not any(str(path.parent) in location for _, location, _ in events)


def test_a_strict_ingest_job_fails_at_the_first_bad_record(db):
    path = FIXTURES / "arxiv" / "snapshot_bad.jsonl"
    job = run_job({"format": "arxiv_snapshot_file", "path": str(path), "strict": True})
    assert job.status == Job.Status.FAILED
    assert f"{path.name} line 2: malformed JSON" in job.error and str(path.parent) not in job.error
    assert Document.objects.count() == 1


def test_a_cancelled_ingest_job_stops_after_the_batch_it_was_writing(db, tmp_path, monkeypatch):
    path = snapshot_lines(tmp_path / "big.jsonl", 50)
    job = Job.objects.create(kind="ingest", params={"format": "arxiv_snapshot_file",
                                                   "path": str(path), "batch_size": 10})
    original = imports.import_records

    def cancel_after_first_batch(records, **options):
        progress = options["progress"]

        def progress_then_cancel(counts):
            jobs.cancel(job)
            progress(counts)

        return original(records, **{**options, "progress": progress_then_cancel})

    monkeypatch.setattr(imports, "import_records", cancel_after_first_batch)
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED
    assert Document.objects.count() == 10


def test_a_job_whose_worker_died_can_be_rerun_without_duplicates(db, tmp_path):
    path = snapshot_lines(tmp_path / "papers.jsonl", 30)
    imports.run_import({"format": "arxiv_snapshot_file",
                        "path": str(snapshot_lines(tmp_path / "half.jsonl", 12))})
    # The worker wrote 12 papers, then died: the row still says running, heartbeat stale.
    stale = timezone.now() - jobs.STALE_AFTER - timedelta(seconds=1)
    job = Job.objects.create(kind="ingest", status=Job.Status.RUNNING, heartbeat_at=stale,
                             params={"format": "arxiv_snapshot_file", "path": str(path)})
    jobs.run(job.pk)  # the broker redelivers the task; the stale job is claimed again
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert (job.result["added"], job.result["unchanged"]) == (18, 12)
    assert Document.objects.count() == 30


def test_a_job_with_params_that_cannot_work_fails_with_the_reason(db):
    job = run_job({"format": "arxiv_snapshot_file", "path": "/nowhere.jsonl"})
    assert job.status == Job.Status.FAILED
    assert "needs an existing 'path'" in job.error


def test_only_the_first_thousand_bad_records_are_logged_one_by_one(db, tmp_path):
    path = tmp_path / "garbage.jsonl"
    path.write_text("not json\n" * 1005)
    job = run_job({"format": "arxiv_snapshot_file", "path": str(path)})
    assert job.result["failed"] == 1005
    assert job.events.filter(level="error").count() == 1000
    assert job.events.filter(level="warning").count() == 1


@pytest.mark.worker
def test_an_ingest_job_runs_on_the_worker(transactional_db, celery_worker, tmp_path):
    path = snapshot_lines(tmp_path / "papers.jsonl", 25)
    job = jobs.enqueue("ingest", {"format": "arxiv_snapshot_file", "path": str(path)})
    wait_for_job(job)
    assert job.status == Job.Status.DONE, job.error
    assert job.result["added"] == 25


def serve_a_throttled_query(server, monkeypatch, slept):
    from ingest.clients.arxiv_api import ArxivApiClient

    from .conftest import fixture_bytes, response

    server.on("/api/query", response(429, "Rate exceeded", {"retry-after": "150"}),
              response(200, fixture_bytes("arxiv/atom_one.xml")))
    monkeypatch.setitem(imports.CLIENTS, "arxiv_api",
                        lambda **options: ArxivApiClient(transport=server.transport, **options))
    monkeypatch.setattr("ingest.jobs.time.sleep", slept.append)


def test_a_job_waiting_on_a_rate_limit_keeps_reporting(db, server, monkeypatch):
    slept = []
    serve_a_throttled_query(server, monkeypatch, slept)
    job = run_job({"format": "arxiv_api", "id_list": ["2507.99917"]})
    assert job.status == Job.Status.DONE, job.error
    assert slept[:3] == [60, 60, 30]  # Retry-After 150 s, waited a minute at a time
    assert job.result["added"] == 1


def test_a_job_cancelled_while_waiting_on_a_rate_limit_stops(db, server, monkeypatch):
    slept = []
    serve_a_throttled_query(server, monkeypatch, slept)
    job = Job.objects.create(kind="ingest", params={"format": "arxiv_api",
                                                   "id_list": ["2507.99917"]})
    monkeypatch.setattr("ingest.jobs.time.sleep", lambda seconds: jobs.cancel(job))
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED
    assert not Document.objects.exists()

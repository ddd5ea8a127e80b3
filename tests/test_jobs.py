"""Long work runs as a job on the Celery worker, with progress on the job row."""

import pytest

from coding.demo import DEMO_SLUG
from coding.models import Study
from tests.conftest import wait_for_job
from workbench import jobs
from workbench.models import Job


@pytest.mark.worker
def test_demo_load_runs_on_the_worker_and_reports_progress(transactional_db, celery_worker):
    job = jobs.enqueue("load_demo")
    wait_for_job(job)
    assert job.status == Job.Status.DONE, job.error
    assert job.done == job.total and job.total > 200
    assert job.result == {"study": DEMO_SLUG, "created": True}
    assert Study.objects.get(slug=DEMO_SLUG).items.count() >= 250


def test_a_job_is_claimed_once(db):
    job = Job.objects.create(kind="load_demo")
    assert jobs.claim(job.pk) is not None
    assert jobs.claim(job.pk) is None


def test_a_failing_job_records_its_error(db, django_capture_on_commit_callbacks):
    @jobs.job_handler("always_fails")
    def always_fails(job, report):
        raise ValueError("line 3: no 'id' field")

    job = Job.objects.create(kind="always_fails")
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "line 3: no 'id' field" in job.error


def test_unknown_job_kind_is_refused(db):
    with pytest.raises(ValueError, match="unknown job kind"):
        jobs.enqueue("make_coffee")


def test_a_running_job_stops_at_its_next_report_when_cancelled(db):
    @jobs.job_handler("counts_forever")
    def counts_forever(job, report):
        for n in range(1000):
            if n == 3:
                jobs.cancel(job)
            report(n, 1000)
        return {"finished": True}

    job = Job.objects.create(kind="counts_forever")
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED
    assert job.done == 3 and job.result == {}


def test_a_queued_job_cancelled_never_runs(db):
    job = Job.objects.create(kind="load_demo")
    jobs.cancel(job)
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED
    assert not Study.objects.exists()


def test_a_jobs_log_keeps_where_and_why(db):
    job = Job.objects.create(kind="load_demo")
    jobs.log(job, "missing field 'title'", level="error", location="papers.jsonl line 17")
    assert [(e.location, e.message) for e in job.events.all()] == [
        ("papers.jsonl line 17", "missing field 'title'")]

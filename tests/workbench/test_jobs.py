"""Long work runs as a job on the Celery worker, with progress on the job row."""

import pytest

from coding.demo.study import DEMO_SLUG
from coding.models import Study
from tests.conftest import wait_for_job
from workbench import jobs
from workbench.models import Job


@pytest.mark.worker
def test_demo_load_runs_on_the_worker_and_reports_progress(transactional_db, celery_worker):
    job = jobs.enqueue("load_demo")
    wait_for_job(job, attempts=2400)  # the demo also writes and scans seven git histories
    assert job.status == Job.Status.DONE, job.error
    assert job.done == job.total and job.total > 200
    assert job.result == {"study": DEMO_SLUG, "created": True}
    assert Study.objects.get(slug=DEMO_SLUG).items.count() >= 250


def test_a_job_is_claimed_once(db):
    job = Job.objects.create(kind="load_demo")
    assert jobs.claim(job.pk) is not None
    assert jobs.claim(job.pk) is None


def test_a_failing_job_records_the_error_its_handler_wrote_for_people(db):
    @jobs.job_handler("always_fails")
    def always_fails(job, report):
        raise jobs.JobError("line 3: no 'id' field")

    job = Job.objects.create(kind="always_fails")
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == "line 3: no 'id' field"


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


def test_the_job_page_shows_progress_and_log_to_whoever_started_it(people, client_for):
    job = Job.objects.create(kind="load_demo", created_by=people["olive"], total=10, done=4,
                             status=Job.Status.RUNNING, message="papers")
    jobs.log(job, "bad date '2025-13-01'", level="error", location="papers.jsonl line 9")
    olive = client_for(people["olive"])
    page = olive.get(f"/jobs/{job.pk}/").content.decode()
    assert "4 of 10 done" in page and "papers.jsonl line 9" in page
    api = olive.get(f"/api/jobs/{job.pk}/").json()
    assert (api["percent"], api["events"][0]["location"]) == (40, "papers.jsonl line 9")


def test_someone_elses_job_does_not_exist_for_you(people, client_for):
    job = Job.objects.create(kind="load_demo", created_by=people["olive"])
    cora = client_for(people["cora"])
    assert cora.get(f"/jobs/{job.pk}/").status_code == 404
    assert cora.get(f"/api/jobs/{job.pk}/").status_code == 404
    assert cora.post(f"/api/jobs/{job.pk}/cancel/").status_code == 404


def test_cancelling_from_the_page_stops_a_queued_job(people, client_for):
    job = Job.objects.create(kind="load_demo", created_by=people["olive"])
    client_for(people["olive"]).post(f"/jobs/{job.pk}/cancel/")
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED


def test_the_jobs_list_shows_only_your_own_jobs_and_filters(people, client_for):
    from workbench.models import Job

    mine = Job.objects.create(kind="export", created_by=people["olive"],
                              params={"study_slug": "alpha-study"}, status=Job.Status.DONE)
    Job.objects.create(kind="ingest", created_by=people["olive"], status=Job.Status.FAILED)
    theirs = Job.objects.create(kind="export", created_by=people["cora"])
    olive = client_for(people["olive"])
    page = olive.get("/jobs/?kind=export").content.decode()
    assert f"/jobs/{mine.pk}/" in page and f"/jobs/{theirs.pk}/" not in page
    listed = olive.get("/api/jobs/", {"status": "failed"}).json()
    assert [row["kind"] for row in listed["results"]] == ["ingest"]
    assert olive.get("/api/jobs/").json()["count"] == 2


def test_a_running_handler_keeps_its_job_alive_while_it_works(transactional_db, monkeypatch):
    """Silence must mean the process died, not that a step (a bootstrap, zipping) is long:
    a thread of the running process beats while the handler works."""
    import time
    from datetime import timedelta

    from django.utils import timezone

    from workbench import jobs
    from workbench.models import Job

    monkeypatch.setattr(jobs, "BEAT_EVERY", 0.05)
    old = timezone.now() - timedelta(hours=1)
    job = Job.objects.create(kind="export", status=Job.Status.RUNNING, heartbeat_at=old,
                             attempts=1)
    heart = jobs.Heartbeat(Job.objects.filter(pk=job.pk, attempts=1))
    heart.start()
    # Poll until the first beat lands; the bound is only a give-up point (a loaded CI
    # machine can take seconds to schedule the thread), never a timing assertion.
    give_up = time.monotonic() + 60
    while time.monotonic() < give_up:
        job.refresh_from_db()
        if job.heartbeat_at > old:
            break
        time.sleep(0.02)
    heart.stop()
    assert job.heartbeat_at > old and not heart.is_alive()
    # A run given up (another attempt owns the row now) stops beating at once.
    Job.objects.filter(pk=job.pk).update(attempts=2)
    heart = jobs.Heartbeat(Job.objects.filter(pk=job.pk, attempts=1))
    heart.start()
    heart.join(timeout=5)
    assert not heart.is_alive()


def test_a_starting_worker_loads_what_the_agreement_job_would_import_on_first_use():
    """statsmodels costs about a second to import; a worker loads it as it starts, before
    its first agreement job (workbench.celery), and a web process never does."""
    import subprocess
    import sys

    module = "statsmodels.stats.contingency_tables"
    script = (
        "import sys, django; django.setup()\n"
        "from celery.signals import worker_init\n"
        "import workbench.urls, coding.agreement.reliability, workbench.celery\n"
        f"before = {module!r} in sys.modules\n"
        "worker_init.send(sender=None)\n"
        f"print(before, {module!r} in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split() == ["False", "True"]

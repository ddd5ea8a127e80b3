"""Faults: a worker killed mid-job, and a broker that cannot be reached.

The worker tests start their own `celery worker` processes on a queue of their
own (the session worker of conftest never sees their tasks), kill one with
SIGKILL once its job has reported progress, start another, and check that the
job finishes once, whole: no duplicate documents, a valid export bundle. The
killed worker's message stays unacknowledged in Redis (it would come back after
the transport's visibility timeout, an hour); what brings the job back at once
is the job sweep every worker runs (`workbench.jobs.recover`), here with a
heartbeat taken as stale after a few seconds instead of five minutes.

The broker tests point the web side at a closed port: pages and submissions work,
the work they schedule waits, queued, the pages say so, and once the broker is
back the waiting jobs are sent and run.

The killed-worker tests need PostgreSQL and Redis (DATABASE_URL and REDIS_URL);
without them they are skipped. The broker-down test runs everywhere: without a
real broker the "broker is back" half runs the sweep in-process.
"""

import hashlib
import json
import os
import socket
import time
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.db.models import Count
from django.utils import timezone

from coding.dataset import load
from coding.export.bundle import build_bundle
from coding.export.jobs import export_key, start_export
from coding.models import Coding
from ingest.models import Document
from tests.conftest import wait_for_job
from tests.workbench.conftest import coded_study, needs_real_worker, progressed, wait_until
from workbench import broker, jobs
from workbench.celery import app
from workbench.models import Job, JobEvent

DELAYED = "Background work is delayed"


# --- a worker killed in the middle of an ingest -----------------------------------

def snapshot_file(path, distinct, repeated):
    """arXiv snapshot lines: `distinct` papers, then `repeated` of them again with a v2."""
    v1 = {"version": "v1", "created": "Mon, 1 Sep 2025 10:00:00 GMT"}
    v2 = {"version": "v2", "created": "Tue, 7 Oct 2025 09:30:00 GMT"}
    with open(path, "w") as out:
        for i in range(distinct + repeated):
            n = i if i < distinct else i - distinct
            out.write(json.dumps({
                "id": f"2509.{n:05d}", "title": f"Invented paper {n}",
                "abstract": f"An invented abstract, number {n}.", "categories": "cs.LG",
                "authors_parsed": [["Example", "Ann", ""], ["Sample", "Bo", ""]],
                "versions": [v1] if i < distinct else [v1, v2],
            }) + "\n")
    return path


@needs_real_worker
@pytest.mark.worker
def test_an_ingest_interrupted_by_a_killed_worker_completes_without_duplicates(workers,
                                                                              tmp_path):
    distinct, repeated = 20_000, 500
    path = snapshot_file(tmp_path / "snapshot.jsonl", distinct, repeated)
    first = workers.start()
    job = jobs.enqueue("ingest", {"format": "arxiv_snapshot_file", "path": str(path),
                                  "batch_size": 250})
    wait_until(progressed(job), "the ingest reported progress", first)
    workers.kill(first)
    written = Document.objects.count()
    assert 0 < written < distinct  # killed in the middle

    second = workers.start()
    wait_for_job(job)
    assert second.poll() is None
    assert job.status == Job.Status.DONE, job.error
    assert job.attempts == 2
    assert job.events.filter(level=JobEvent.Level.WARNING,
                             message__contains="queued again").exists()
    # Every record read again: what the killed run wrote is found unchanged, the rest added.
    assert job.result["read"] == distinct + repeated and job.result["failed"] == 0
    assert (job.result["unchanged"], job.result["added"], job.result["updated"]) == (
        written, distinct - written, repeated)
    assert Document.objects.count() == distinct
    assert not (Document.objects.values("source", "key").annotate(n=Count("id"))
                .filter(n__gt=1).exists())
    twice = Document.objects.get(source="arxiv", key="2509.00007")
    assert [v["version"] for v in twice.metadata["versions"]] == ["v1", "v2"]


# --- a worker killed in the middle of an export -----------------------------------

def sha256(data):
    return hashlib.sha256(data).hexdigest()


def check_bundle(path):
    """Every member's checksum matches SHA256SUMS, and the tables load into pandas."""
    with zipfile.ZipFile(path) as bundle:
        sums = dict(reversed(line.split("  ", 1))
                    for line in bundle.read("SHA256SUMS").decode().splitlines())
        assert set(sums) == set(bundle.namelist()) - {"SHA256SUMS"}
        for name, digest in sums.items():
            assert sha256(bundle.read(name)) == digest, name
    return load(path)


@needs_real_worker
@pytest.mark.worker
def test_an_export_interrupted_by_a_killed_worker_completes_with_a_valid_bundle(
        workers, people, tmp_path):
    items = 4000
    study = coded_study(people, items)
    first = workers.start()
    job = start_export(study, people["olive"], shapes=["items", "wide", "long", "decisions"],
                       fmt="parquet")
    wait_until(progressed(job), "the export reported progress", first)
    assert job.done < job.total
    workers.kill(first)

    second = workers.start()
    wait_for_job(job)
    assert second.poll() is None
    assert job.status == Job.Status.DONE, job.error
    assert job.attempts == 2
    # Where the workers (VAR_DIR under tmp_path/var) put it.
    path = tmp_path / "var" / export_key(job)
    assert path.name == job.result["filename"] and sha256(path.read_bytes()) == job.result["sha256"]
    # Nothing of the killed run is left: no partial zip beside the bundle, no work folder.
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert not list((tmp_path / "var" / "work").glob(f"export-{job.pk}-*"))

    tables = check_bundle(path)
    questions = study.codebooks.get().current_version().questions.count()
    assert len(tables["items"]) == items
    assert len(tables["long"]) == 2 * items * questions
    assert tables["items"]["item_id"].is_unique
    # The same data gives the same bytes: the bundle equals one built here, in one go.
    again = build_bundle(study, tmp_path / "again.zip", shapes=job.params["shapes"],
                         fmt="parquet")
    assert again["sha256"] == job.result["sha256"]


# --- the broker cannot be reached -------------------------------------------------

def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def broker_down(monkeypatch):
    """The web side's broker is a closed port; tasks are sent to it, not run in-process."""
    original = {"broker_url": app.conf.broker_url, "eager": app.conf.task_always_eager}
    app.conf.broker_url = f"redis://127.0.0.1:{closed_port()}/0"
    app.conf.task_always_eager = False

    def back():
        app.conf.broker_url = original["broker_url"]
        app.conf.task_always_eager = original["eager"]

    try:
        yield back
    finally:
        back()


ANSWERS = {"q-label": "analysis", "q-size_b": "7", "q-failures": ["none"],
           "q-code_released": "no"}


@pytest.mark.worker
def test_with_the_broker_down_coding_goes_on_and_nothing_submitted_is_lost(
        transactional_db, alpha, people, client_for, settings, broker_down, workers,
        monkeypatch, stored_files):
    settings.AGREEMENT_SNAPSHOT_EVERY = 1  # the first submission schedules an agreement job
    cora = client_for(people["cora"])

    # The coding page and a plain form submission.
    item_url = cora.post(f"/studies/{alpha.slug}/code/")["Location"]
    assert cora.get(item_url).status_code == 200
    assert DELAYED not in cora.get(item_url).content.decode()
    response = cora.post(item_url, ANSWERS)
    assert response.status_code == 302 and response["Location"] != item_url
    assert Coding.objects.count() == 1
    agreement = Job.objects.get(kind="agreement")
    assert agreement.status == Job.Status.QUEUED and agreement.heartbeat_at is None

    # The next item's page says the background work waits, and why.
    next_page = cora.get(response["Location"])
    assert next_page.status_code == 200
    assert DELAYED in next_page.content.decode()
    assert "your work is saved" in next_page.content.decode().lower()

    # The coder's API: take an item and submit.
    api = f"/api/studies/{alpha.slug}"
    taken = cora.post(f"{api}/next/").json()
    submitted = cora.post(f"{api}/assignments/{taken['id']}/submit/", {"values": {
        "label": "rl_method", "scope": "general", "size_b": 3, "failures": ["none"],
        "code_released": "yes"}}, content_type="application/json")
    assert submitted.status_code == 201
    assert Coding.objects.count() == 2

    # An export started by the owner waits too; its page and the API say so.
    olive = client_for(people["olive"])
    started = olive.post(f"{api}/exports/", {"shapes": ["long"], "format": "csv"},
                         content_type="application/json")
    assert started.status_code == 202
    export = started.json()
    assert (export["status"], export["waiting_for_queue"]) == ("queued", True)
    job_page = olive.get(f"/jobs/{export['id']}/").content.decode()
    assert DELAYED in job_page and "Not started yet: the task queue is unreachable" in job_page
    assert olive.get(f"/api/jobs/{export['id']}/").json()["waiting_for_queue"] is True

    waiting = Job.objects.order_by("pk")
    assert [(j.kind, j.status) for j in waiting] == [("agreement", "queued"), ("export", "queued")]
    assert broker.work_is_delayed()

    # The broker is back: the sweep sends what waited, and it runs.
    broker_down()
    if workers is not None:
        workers.start()
    else:  # tasks run in-process here: the sweep runs them as it sends them
        monkeypatch.setattr(jobs, "UNSENT_GRACE", timedelta(0))
        assert jobs.recover() == [j.pk for j in waiting]
    for job in waiting:
        wait_for_job(job)
        assert job.status == Job.Status.DONE, job.error
    assert Coding.objects.count() == 2
    assert not broker.work_is_delayed()
    assert DELAYED not in cora.get(f"/studies/{alpha.slug}/code/", follow=True).content.decode()


def test_publishing_to_an_unreachable_broker_gives_up_at_once_and_leaves_the_job_queued(
        transactional_db, broker_down):
    job = jobs.enqueue("load_demo")  # no transaction: sent (or not) right away
    job.refresh_from_db()
    assert (job.status, job.heartbeat_at, job.attempts) == (Job.Status.QUEUED, None, 0)
    assert broker.PUBLISH_TRANSPORT_OPTIONS["max_retries"] == 0
    assert broker.waiting_for_queue(job)


# --- the sweep, in-process --------------------------------------------------------

@pytest.fixture
def counting_job():
    runs = []

    @jobs.job_handler("counting")
    def counting(job, report):
        runs.append(job.attempts)
        report(1, 1)
        return {"runs": len(runs)}

    return runs


def dead_job(kind="counting", attempts=1, **fields):
    stale = timezone.now() - jobs.STALE_AFTER - timedelta(seconds=1)
    return Job.objects.create(kind=kind, status=Job.Status.RUNNING, heartbeat_at=stale,
                              started_at=stale, attempts=attempts, done=5, **fields)


def test_the_sweep_queues_a_job_whose_worker_died_and_sends_it_again(db, counting_job):
    job = dead_job()
    alive = Job.objects.create(kind="counting", status=Job.Status.RUNNING,
                               heartbeat_at=timezone.now(), attempts=1)
    assert jobs.recover() == [job.pk]  # tasks run in-process here: sending runs it
    job.refresh_from_db()
    assert (job.status, job.attempts, counting_job) == (Job.Status.DONE, 2, [2])
    assert "queued again" in job.events.get().message
    alive.refresh_from_db()
    assert alive.status == Job.Status.RUNNING


def test_the_sweep_can_be_run_from_the_command_line(db, counting_job, capsys):
    from django.core.management import call_command

    job = dead_job()
    call_command("recover_jobs")
    assert capsys.readouterr().out.strip() == f"Sent 1 job(s): {job.pk}."
    assert counting_job == [2]


def test_a_job_that_keeps_killing_its_worker_is_failed_not_retried(db, counting_job):
    job = dead_job(attempts=jobs.MAX_ATTEMPTS)
    assert jobs.recover() == []
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "each of 3 runs" in job.error
    assert jobs.claim(job.pk) is None and counting_job == []


def test_a_dead_job_someone_cancelled_is_cancelled_by_the_sweep(db, counting_job):
    job = dead_job(cancel_requested=True)
    jobs.recover()
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED and counting_job == []


def test_a_run_given_up_for_dead_stops_without_touching_its_successor(db):
    @jobs.job_handler("slow_then_back")
    def slow_then_back(job, report):
        # While this run was silent, the sweep queued the job again and a new run took it.
        Job.objects.filter(pk=job.pk).update(attempts=job.attempts + 1, done=7)
        report(99, 100)
        return {"wrote": "should not"}

    job = Job.objects.create(kind="slow_then_back")
    jobs.run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done, job.result) == (Job.Status.RUNNING, 7, {})


def test_the_sweep_leaves_a_just_created_unsent_job_to_its_request(db, broker_down):
    job = Job.objects.create(kind="counting")
    assert jobs.recover() == []
    job.refresh_from_db()
    assert job.heartbeat_at is None


def test_the_banner_shows_while_some_job_has_not_reached_the_queue(alpha, people, client_for,
                                                                  broker_down):
    olive = client_for(people["olive"])
    page = f"/studies/{alpha.slug}/"
    Job.objects.create(kind="load_demo", heartbeat_at=timezone.now())  # reached the broker
    assert DELAYED not in olive.get(page).content.decode()
    Job.objects.create(kind="load_demo")  # never did
    assert DELAYED in olive.get(page).content.decode()


def test_no_banner_where_tasks_run_in_process(alpha, people, client_for):
    Job.objects.create(kind="load_demo", created_by=people["olive"])
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/").content.decode()
    assert DELAYED not in page


@needs_real_worker
@pytest.mark.worker
def test_a_worker_runs_below_the_web_processes_cpu_priority(workers):
    """Issue 43, finding 3: a background job took about half of what the coders got on two
    cores. A worker lowers its own priority when it starts (WORKBENCH_WORKER_NICE, 10)."""
    worker = workers.start()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    wanted = min(19, mine + 10)
    for _ in range(100):
        if os.getpriority(os.PRIO_PROCESS, worker.pid) == wanted:
            break
        time.sleep(0.2)
    assert os.getpriority(os.PRIO_PROCESS, worker.pid) == wanted


@needs_real_worker
@pytest.mark.worker
def test_a_worker_in_a_session_of_its_own_lowers_its_sessions_group(workers):
    """Linux shares the CPU between sessions' groups before niceness counts: a niced worker
    started in its own session (as services and `setsid` start it) took 70% of a core
    beside three gunicorn workers (benchmarks/load.py --job-phases)."""
    ours = Path("/proc/self/autogroup")
    if not ours.exists():
        pytest.skip("this kernel has no autogroups")
    before = ours.read_text()  # some kernels read it empty from a test process (CI did)
    worker = workers.start(session=True)
    group = Path(f"/proc/{worker.pid}/autogroup")
    wait_until(lambda: group.read_text().strip().endswith("nice 10"),
               "the worker to lower its session's group", worker)
    assert ours.read_text() == before  # the test's own group is not lowered with it


def test_a_worker_sharing_its_session_leaves_the_group_alone(tmp_path, monkeypatch):
    from workbench import worker

    group = tmp_path / "autogroup"
    group.write_text("/autogroup-1 nice 0\n")
    monkeypatch.setattr(worker.os, "getsid", lambda pid: os.getpid() + 1)  # not its leader
    assert worker.lower_session_group(10, group) is False
    monkeypatch.setattr(worker.os, "getsid", lambda pid: os.getpid())
    assert worker.lower_session_group(10, group) is True and group.read_text() == "10"
    assert worker.lower_session_group(10, tmp_path / "absent" / "autogroup") is False


def test_the_worker_lowers_its_priority_by_the_setting(settings, monkeypatch):
    from workbench import worker

    asked = []
    monkeypatch.setattr(worker.os, "nice", lambda n: asked.append(n) or n)
    monkeypatch.setattr(worker, "lower_session_group", lambda nice: False)  # not this one's
    settings.WORKER_NICE = 10
    worker.lower_priority()
    settings.WORKER_NICE = 0
    worker.lower_priority()
    assert asked == [10]

"""Automatic agreement snapshots are spaced out so that they take at most a set share of
the machine's time (issue 43, finding 3: one agreement job after another took half of
what 50 coders got on two cores). A snapshot records how long its report took; the next
automatic one waits, queued, for that time x (1/share - 1); the owner's Recompute never
waits."""

from datetime import timedelta

import pytest
from django.utils import timezone

from coding.actions.submit import submit
from coding.agreement import snapshots
from coding.labeling import queue
from coding.models import AgreementSnapshot
from workbench import broker, jobs
from workbench.models import Job
from workbench.templatetags.workbench_jobs import job_words

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}


@pytest.fixture
def sent(monkeypatch):
    """Tasks go to a broker (as in production); what reached it: (job id, countdown)."""
    published = []
    monkeypatch.setattr(jobs, "runs_in_process", lambda: False)
    monkeypatch.setattr(broker, "runs_in_process", lambda: False)
    monkeypatch.setattr(broker, "publish", lambda job_id, kind=None, countdown=None:
                        published.append((job_id, countdown)) or True)
    return published


def code_both(study, people, paper, capture):
    for coder in ("cora", "cyril"):
        with capture(execute=True):
            submit(queue.assign(paper, people[coder]), ANSWERS)


def test_the_wait_is_the_last_reports_time_scaled_to_the_share(settings):
    settings.AGREEMENT_JOB_SHARE = 0.25
    now = timezone.now()
    assert snapshots.rest_left(now, 2.0, now) == pytest.approx(6.0)  # 2 s of every 8
    assert snapshots.rest_left(now - timedelta(seconds=4), 2.0, now) == pytest.approx(2.0)
    assert snapshots.rest_left(now - timedelta(seconds=9), 2.0, now) == 0
    assert snapshots.rest_left(None, 0, now) == 0  # no snapshot yet: at once
    assert snapshots.rest_left(now, 3600.0, now) == jobs.STALE_AFTER.total_seconds() / 2
    settings.AGREEMENT_JOB_SHARE = 1
    assert snapshots.rest_left(now, 2.0, now) == 0  # back to back


def test_a_snapshot_records_how_long_its_report_took(alpha, people):
    from tests import factories

    factories.code(alpha.papers[0], people["cora"])
    factories.code(alpha.papers[0], people["cyril"])
    jobs.run(snapshots.recompute(alpha).pk)
    assert AgreementSnapshot.objects.get(study=alpha).seconds > 0


def test_an_automatic_snapshot_soon_after_a_slow_one_waits_queued(
        alpha, people, settings, sent, django_capture_on_commit_callbacks):
    settings.AGREEMENT_SNAPSHOT_EVERY = 2
    settings.AGREEMENT_JOB_SHARE = 0.25
    AgreementSnapshot.objects.create(study=alpha, round="main", n_codings=0, report={},
                                     seconds=8.0)  # a report that took 8 s, just now
    code_both(alpha, people, alpha.papers[0], django_capture_on_commit_callbacks)
    job = Job.objects.get(kind="agreement")
    assert job.status == Job.Status.QUEUED
    # Beside it an estimate is sent at once (coding.agreement.estimates; with this report
    # from before the estimates it finds no coincidences and does nothing).
    estimate = Job.objects.get(kind="agreement_estimate")
    assert [c for j, c in sent if j == estimate.pk] == [None]
    [(job_id, countdown)] = [(j, c) for j, c in sent if j == job.pk]
    assert job_id == job.pk and 20 < countdown <= 24  # 8 s x 3, less the time since
    assert job_words(job.message) == jobs.SPACED_OUT
    # While it waits no second job is enqueued, however many codings arrive.
    code_both(alpha, people, alpha.papers[1], django_capture_on_commit_callbacks)
    assert Job.objects.filter(kind="agreement").count() == 1 and len(sent) == 2
    # The owner's Recompute is sent at once.
    with django_capture_on_commit_callbacks(execute=True):
        forced = snapshots.recompute(alpha, people["olive"])
    assert sent[-1] == (forced.pk, None)


def test_after_a_quick_snapshot_the_next_is_sent_at_once(
        alpha, people, settings, sent, django_capture_on_commit_callbacks):
    settings.AGREEMENT_SNAPSHOT_EVERY = 2
    snapshot = AgreementSnapshot.objects.create(study=alpha, round="main", n_codings=0,
                                                report={}, seconds=1.0)
    AgreementSnapshot.objects.filter(pk=snapshot.pk).update(
        created_at=timezone.now() - timedelta(seconds=10))  # rested long enough
    code_both(alpha, people, alpha.papers[0], django_capture_on_commit_callbacks)
    [(_, countdown)] = sent
    assert countdown is None

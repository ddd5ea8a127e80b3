"""/healthz, /readyz and /metrics: what a load balancer and a Prometheus server get."""

import socket
import threading
from datetime import timedelta

import pytest
from django.utils import timezone

from coding.models import Coding
from tests import factories
from workbench import health
from workbench.celery import app
from workbench.models import Job


def test_healthz_answers_without_login_host_or_https(client, settings):
    settings.ALLOWED_HOSTS = ["workbench.example"]
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/healthz", HTTP_HOST="10.0.0.7")  # a balancer asks by address
    assert response.status_code == 200
    assert response.content == b"ok\n"
    assert response["Cache-Control"] == "no-store"


def test_readyz_says_ready_when_database_broker_and_storage_answer(db, client, stored_files):
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {"ready": True, "database": "ok", "broker": "ok", "storage": "ok"}


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_readyz_is_503_naming_only_what_failed_when_the_broker_is_down(db, client, caplog):
    before = (app.conf.broker_url, app.conf.task_always_eager)
    secret_host = f"redis://127.0.0.1:{closed_port()}/0"
    app.conf.broker_url, app.conf.task_always_eager = secret_host, False
    try:
        response = client.get("/readyz")
    finally:
        app.conf.broker_url, app.conf.task_always_eager = before
    assert response.status_code == 503
    assert response.json() == {"ready": False, "database": "ok", "broker": "failed",
                               "storage": "ok"}
    assert secret_host.split("//")[1] not in response.content.decode()  # no address, no error


def test_readyz_gives_up_on_a_check_that_hangs(db, client, settings, monkeypatch):
    settings.READY_TIMEOUT = 0.2
    release = threading.Event()
    monkeypatch.setitem(health.CHECKS, "storage", lambda: release.wait(30))
    try:
        response = client.get("/readyz")
    finally:
        release.set()
    assert response.status_code == 503 and response.json()["storage"] == "failed"


def test_readyz_reveals_no_data(alpha, client):
    body = client.get("/readyz").content.decode()
    assert alpha.name not in body and alpha.slug not in body


# --- metrics -------------------------------------------------------------------------

TOKEN = "metrics-token-for-tests"


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN
    return {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}


def test_metrics_are_off_without_a_token_setting(db, client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Token {TOKEN}", f"Bearer {TOKEN}x"])
def test_metrics_need_the_token(db, client, metrics_on, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get("/metrics", **extra)
    assert response.status_code == 401
    assert b"workbench_" not in response.content


def test_a_logged_in_owner_without_the_token_gets_no_metrics(alpha, people, client_for,
                                                             metrics_on):
    assert client_for(people["olive"]).get("/metrics").status_code == 401


def test_metrics_show_latency_by_view_jobs_and_codings_per_minute(alpha, people, client_for,
                                                                  metrics_on):
    cora = client_for(people["cora"])
    assert cora.get(f"/studies/{alpha.slug}/").status_code in (200, 302)
    factories.code(alpha.papers[0], people["cora"])
    factories.code(alpha.papers[1], people["cyril"])
    Job.objects.create(kind="export", status=Job.Status.QUEUED)
    now = timezone.now()
    Job.objects.create(kind="agreement", status=Job.Status.DONE, started_at=now - timedelta(
        seconds=20), finished_at=now)
    text = cora.get("/metrics", **metrics_on).content.decode()
    assert 'workbench_request_seconds_count{method="GET",view="study-detail"}' in text
    assert 'workbench_jobs_waiting{kind="export"} 1.0' in text
    assert 'workbench_job_duration_seconds_bucket{kind="agreement",le="5.0"} 0.0' in text
    assert 'workbench_job_duration_seconds_bucket{kind="agreement",le="30.0"} 1.0' in text
    assert 'workbench_job_duration_seconds_sum{kind="agreement"} 20.0' in text
    assert f"workbench_codings_per_minute {float(Coding.objects.count())}" in text
    assert "workbench_queue_depth" in text
    # No study, person or coded value is named.
    for secret in (alpha.slug, "cora", "analysis"):
        assert secret not in text


def test_metrics_read_a_bounded_number_of_rows(alpha, people, client, metrics_on,
                                               django_assert_max_num_queries):
    for paper in alpha.papers:
        factories.code(paper, people["cora"])
    with django_assert_max_num_queries(4):
        assert client.get("/metrics", **metrics_on).status_code == 200

"""Prometheus metrics at /metrics (prometheus-client), for the operator only.

The endpoint answers only to `Authorization: Bearer <WORKBENCH_METRICS_TOKEN>`; without
that setting it does not exist (404), and a wrong token gets 401. What it serves:

- workbench_request_seconds{view, method}: request latency by view (a histogram kept
  by RequestMetricsMiddleware in each web process; under gunicorn set
  PROMETHEUS_MULTIPROC_DIR to an empty folder so every process's counts are summed);
- workbench_queue_depth{queue}: messages waiting in each queue of workbench.queues;
- workbench_jobs_waiting{kind}: queued jobs by kind, from the database;
- workbench_job_duration_seconds{kind}: how long the jobs that finished in the last
  hour ran, by kind (a histogram read from the job rows: workers need no scraping);
- what the apps add with `add_figure` (the coding app: workbench_codings_per_minute,
  coding.labeling.metrics).

Nothing here names a study, a person or a value coded.
"""

import hmac
import os
import time
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from django.http import Http404, HttpResponse
from django.utils import timezone
from prometheus_client import (
    CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Histogram, generate_latest, multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily

from . import jobs
from .models import Job

REQUEST_SECONDS = Histogram("workbench_request_seconds", "Request latency by view",
                            ["view", "method"])
JOB_BUCKETS = (1, 5, 30, 60, 300, 900, 3600, 4 * 3600)
JOB_WINDOW = timedelta(hours=1)
# Functions now -> a metric family, read at every scrape; apps add theirs as they start.
FIGURES = []


def add_figure(figure):
    """Serve `figure(now)` (a prometheus metric family) at every scrape; idempotent."""
    if figure not in FIGURES:
        FIGURES.append(figure)


class RequestMetricsMiddleware:
    """Times every request and files it under its view's URL name (or "unmatched")."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name or match._func_path) if match else "unmatched"
        REQUEST_SECONDS.labels(view=view, method=request.method).observe(
            time.perf_counter() - started)
        return response


def job_durations(now):
    duration = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    finished = (Job.objects.filter(status=Job.Status.DONE, finished_at__gte=now - JOB_WINDOW,
                                   started_at__isnull=False)
                .annotate(took=duration).values("kind"))
    counts = {f"le{n}": Count("pk", filter=Q(took__lte=timedelta(seconds=n))) for n in JOB_BUCKETS}
    rows = finished.annotate(total=Count("pk"), took_sum=Sum("took"), **counts).order_by("kind")
    family = HistogramMetricFamily("workbench_job_duration_seconds",
                                   "Run time of the jobs finished in the last hour, by kind",
                                   labels=["kind"])
    for row in rows:
        buckets = [(str(float(n)), row[f"le{n}"]) for n in JOB_BUCKETS] + [("+Inf", row["total"])]
        family.add_metric([row["kind"]], buckets, sum_value=row["took_sum"].total_seconds())
    return family


class DatabaseCollector:
    """Figures read at scrape time from the database and the broker."""

    def collect(self):
        now = timezone.now()
        waiting = GaugeMetricFamily("workbench_jobs_waiting", "Queued jobs by kind",
                                    labels=["kind"])
        for kind, n in (Job.objects.filter(status=Job.Status.QUEUED).values_list("kind")
                        .annotate(n=Count("pk")).order_by("kind")):
            waiting.add_metric([kind], n)
        yield waiting
        yield job_durations(now)
        for figure in FIGURES:
            yield figure(now)
        depth = GaugeMetricFamily("workbench_queue_depth", "Messages waiting in each queue",
                                  labels=["queue"])
        if not jobs.runs_in_process():
            from .queues import depths

            for queue, n in depths().items():
                depth.add_metric([queue], n)
        yield depth


def registry():
    """The request histograms (summed over processes when PROMETHEUS_MULTIPROC_DIR is
    set) and the figures read from the database."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        scraped = CollectorRegistry()
        multiprocess.MultiProcessCollector(scraped)
    else:
        scraped = CollectorRegistry()
        scraped.register(_Forward(REGISTRY))
    scraped.register(DatabaseCollector())
    return scraped


class _Forward:
    def __init__(self, source):
        self.source = source

    def collect(self):
        return self.source.collect()


def allowed(request):
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404("Metrics are off (WORKBENCH_METRICS_TOKEN is not set).")
    given = request.headers.get("Authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


def metrics(request):
    if not allowed(request):
        response = HttpResponse("A metrics token is needed.\n", status=401,
                                content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)

"""Probes for load balancers and orchestrators: /healthz and /readyz.

- /healthz: the process is alive and answers (200 "ok"); it asks nothing else, so a
  slow database never gets a healthy web process restarted.
- /readyz: the database, the broker (when tasks go to one) and the file storage each
  answer within settings.READY_TIMEOUT seconds: 200 when all do, 503 otherwise, with
  which of the three failed ("ok" or "failed") and nothing else: no versions, hosts,
  errors or counts.

Both are answered by ProbeMiddleware, first in the chain, before the host check,
the HTTPS redirect and sessions: a load balancer asks by address over plain HTTP and
needs no login. Nothing a probe answers depends on data.
"""

import logging
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from django.conf import settings
from django.db import connection
from django.http import HttpResponse, JsonResponse

from . import jobs, storage

logger = logging.getLogger(__name__)

# Checks run in threads of their own so one that hangs (a silent host) is cut off at
# the timeout; a small pool, shared by every probe of this process.
_pool = ThreadPoolExecutor(max_workers=6, thread_name_prefix="readyz")


def database_answers():
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    finally:
        connection.close()  # a thread of the pool: its connection is not reused


def broker_answers():
    if jobs.runs_in_process():
        return True
    from .celery import app

    with app.connection_for_read(transport_options={"max_retries": 0}) as conn:
        conn.ensure_connection(max_retries=1, timeout=settings.READY_TIMEOUT)
        conn.default_channel.client.ping()
    return True


CHECKS = {"database": database_answers, "broker": broker_answers,
          "storage": storage.answers}


def readiness():
    """{check: "ok" | "failed"} within the timeout (each failure is logged here)."""
    futures = {name: _pool.submit(check) for name, check in CHECKS.items()}
    states = {}
    for name, future in futures.items():
        try:
            states[name] = "ok" if future.result(timeout=settings.READY_TIMEOUT) else "failed"
        except FutureTimeout:
            logger.warning("readyz: %s did not answer within %s s", name, settings.READY_TIMEOUT)
            states[name] = "failed"
        except Exception:
            logger.exception("readyz: %s failed", name)
            states[name] = "failed"
    return states


def healthz(request):
    return HttpResponse("ok\n", content_type="text/plain")


def readyz(request):
    states = readiness()
    ready = all(state == "ok" for state in states.values())
    return JsonResponse({"ready": ready, **states}, status=200 if ready else 503)


PROBES = {"/healthz": healthz, "/readyz": readyz}


class ProbeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        probe = PROBES.get(request.path_info.rstrip("/"))
        if probe is None or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        response = probe(request)
        response["Cache-Control"] = "no-store"
        return response

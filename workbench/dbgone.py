"""A request whose database connection died is answered 503 with Retry-After, not 500.

A PostgreSQL restart, a failover or a pooler recycling its connections kills the
connections the web processes hold (issue 43). Two things keep coders from seeing 500s:
the settings turn on Django's connection health checks (CONN_HEALTH_CHECKS: a reused
connection is tried before a request's first query and replaced if dead), and this
middleware answers a request that lost its connection midway with 503 and Retry-After,
after closing the dead connection so the next request opens a new one. Nothing is half
written: each request's writes are one transaction, which the database rolled back with
the connection; a submission sent again with its key is recorded once.
"""

import logging

from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse, JsonResponse

logger = logging.getLogger(__name__)
RETRY_AFTER = 2
GONE = (OperationalError, InterfaceError)
WORDS = "The database could not be reached; nothing was saved. Try again in a moment."


class DatabaseGoneMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, GONE):
            return None
        logger.warning("database connection lost during %s %s (%s); answered 503",
                       request.method, request.path, str(exception).splitlines()[0][:200]
                       if str(exception) else type(exception).__name__)
        connection.close()
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": WORDS, "code": "database_unavailable"},
                                    status=503)
        else:
            response = HttpResponse(WORDS, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER)
        return response

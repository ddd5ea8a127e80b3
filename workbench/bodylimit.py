"""Bodies too large for their kind of request, answered 413 before anything reads them.

Django refuses a form or JSON body over DATA_UPLOAD_MAX_MEMORY_SIZE only when a view
reads it, with a traceback in the log; and a server that answers before the client has
sent everything closes the connection under it, so the client sees a reset instead of a
status (issue 43). Here, first of all the middleware, a declared Content-Length over the
limit is answered 413 with a line that names the limit; the body is read and dropped
first (up to DRAIN_MAX; past that the connection is closed after the answer, as nothing
can be done for a client that sends that much), so the client reads the answer. File
uploads (multipart) have a limit of their own, WORKBENCH_UPLOAD_MAX_BYTES (default
1 GiB): import files are large. Behind the documented proxy the same limits are set
there too (docs/deploy.md), so most such bodies never reach the app.
"""

import logging

from django.conf import settings
from django.http import JsonResponse

logger = logging.getLogger(__name__)
DRAIN_MAX = 64 * 1024 * 1024
CHUNK = 256 * 1024


def limit_for(content_type):
    if content_type.startswith("multipart/form-data"):
        return settings.UPLOAD_MAX_BYTES
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _drain(stream, length):
    left = min(length, DRAIN_MAX)
    while left > 0:
        chunk = stream.read(min(CHUNK, left))
        if not chunk:
            break
        left -= len(chunk)
    return length <= DRAIN_MAX


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        limit = limit_for(request.META.get("CONTENT_TYPE", ""))
        if limit is None or length <= limit:
            return self.get_response(request)
        drained = _drain(request.META["wsgi.input"], length)
        logger.warning("Request body too large (%s bytes, limit %s): %s %s", length, limit,
                       request.method, request.path)
        response = JsonResponse({"detail": (
            f"The request body is {length:,} bytes; this server takes at most {limit:,} "
            "bytes for it.")}, status=413)
        if not drained:
            response["Connection"] = "close"
        return response

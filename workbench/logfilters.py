"""Filters for the log (settings.LOGGING).

Django logs every refused request (PermissionDenied, a 403) on `django.request` with
the exception's traceback, and a suspicious one (a body over its limit, a bad host) on
`django.security`: a crawler or a curious member probing a study wrote dozens of lines
each time, burying real errors. A client's error is expected, not a fault: one line.
And an invite or password reset link's token, a password until used, is never written to
the log.
"""

import logging
import re

INVITE_PATH = re.compile(r"/invite/[^/\s?#]+/")
# Django's reset link: /reset/<uidb64>/<token>/; its own form page is /reset/<uid>/set-password/.
RESET_PATH = re.compile(r"/reset/([^/\s?#]+)/(?!set-password/)[^/\s?#]+/")


class RedactedInviteLinks(logging.Filter):
    """An invite link's token is a password until used, and so is a password reset link's:
    a request line that carries one ("GET /invite/<token>/ HTTP/1.1", "GET /reset/<uid>/
    <token>/", the development server's request log) is logged with the token replaced by
    "…". The invite page, and Django's reset page, then move it out of the URL."""

    def filter(self, record):
        if isinstance(record.msg, str):
            record.msg = _redacted(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(arg) if isinstance(arg, str) else arg
                                for arg in record.args)
        return True


def _redacted(text):
    if "/invite/" in text:
        text = INVITE_PATH.sub("/invite/…/", text)
    if "/reset/" in text:
        text = RESET_PATH.sub(r"/reset/\1/…/", text)
    return text


class OneLineRefusals(logging.Filter):
    """Drop the traceback of a client error's record (any 4xx: a refusal, a bad or
    oversized request, issue 43); the line itself ("Forbidden (Permission denied): /path",
    "Bad Request: /path") stays. Other records, tracebacks included, pass unchanged."""

    def filter(self, record):
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and 400 <= status < 500:
            record.exc_info = None
            record.exc_text = None
        return True

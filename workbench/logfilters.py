"""Filters for the log (settings.LOGGING).

Django logs every refused request (PermissionDenied, a 403) on `django.request` with
the exception's traceback: a crawler or a curious member probing a study wrote dozens of
lines each time, burying real errors. A refusal is expected, not a fault: one line.
And an invite link's token, a password until used, is never written to the log.
"""

import logging
import re

INVITE_PATH = re.compile(r"/invite/[^/\s?#]+/")


class RedactedInviteLinks(logging.Filter):
    """An invite link's token is a password until used: a request line that carries one
    ("GET /invite/<token>/ HTTP/1.1", the development server's request log) is logged
    with the token replaced by "…". The invite page then moves it out of the URL."""

    def filter(self, record):
        if isinstance(record.msg, str) and "/invite/" in record.msg:
            record.msg = INVITE_PATH.sub("/invite/…/", record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(INVITE_PATH.sub("/invite/…/", arg) if isinstance(arg, str)
                                else arg for arg in record.args)
        return True


class OneLineRefusals(logging.Filter):
    """Drop the traceback of a 403's record; the line itself ("Forbidden (Permission
    denied): /path") stays. Other records, tracebacks included, pass unchanged."""

    def filter(self, record):
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True

"""Filters for the log (settings.LOGGING).

Django logs every refused request (PermissionDenied, a 403) on `django.request` with
the exception's traceback: a crawler or a curious member probing a study wrote dozens of
lines each time, burying real errors. A refusal is expected, not a fault: one line.
"""

import logging


class OneLineRefusals(logging.Filter):
    """Drop the traceback of a 403's record; the line itself ("Forbidden (Permission
    denied): /path") stays. Other records, tracebacks included, pass unchanged."""

    def filter(self, record):
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True

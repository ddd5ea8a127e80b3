"""A refused request is one line in the log, not a traceback (issue 36, finding 7)."""

import io
import logging

from workbench.logfilters import OneLineRefusals


def test_a_403_is_logged_in_one_line(alpha, people, client_for):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(OneLineRefusals())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        assert client_for(people["cora"]).get(f"/studies/{alpha.slug}/agreement/").status_code \
            == 403
    finally:
        logger.removeHandler(handler)
    lines = [line for line in stream.getvalue().splitlines() if line]
    assert lines == [f"Forbidden (Permission denied): /studies/{alpha.slug}/agreement/"]


def test_the_console_handler_carries_the_filter():
    from django.conf import settings

    assert "one_line_refusals" in settings.LOGGING["handlers"]["console"]["filters"]

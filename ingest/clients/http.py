"""What the live clients share: pacing, back-off, Retry-After, a bounded body."""

from email.utils import parsedate_to_datetime

import httpx
from django.utils.translation import gettext as _

USER_AGENT = "coding-workbench/0.1 (research ingest)"
# A page bigger than this is not a page: refuse it rather than hold it.
MAX_BODY_BYTES = 64 * 1024 * 1024
TIMEOUT = httpx.Timeout(60.0, connect=15.0)


class FetchError(Exception):
    """The source could not be read: a refusal, or retries used up. Stops the run."""


class Pacer:
    """One request at a time, at least `delay` seconds apart (arXiv's terms: 3 s)."""

    def __init__(self, delay, sleep, clock):
        self.delay, self.sleep, self.clock = delay, sleep, clock
        self.last = None

    def wait(self):
        if self.last is not None:
            remaining = self.delay - (self.clock() - self.last)
            if remaining > 0:
                self.sleep(remaining)
        self.last = self.clock()


def make_http(transport=None, headers=None):
    """An httpx client; tests pass an httpx.MockTransport and never reach the network."""
    return httpx.Client(transport=transport, timeout=TIMEOUT, follow_redirects=True,
                        headers={"User-Agent": USER_AGENT, **(headers or {})})


def retry_after(response, clock):
    """Seconds asked by a Retry-After header (a number or an HTTP date), or None."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - clock())
    except (TypeError, ValueError):
        return None


def backoff(base, attempt, cap=3600.0):
    """base, 2·base, 4·base … seconds, never more than an hour."""
    return min(cap, base * 2 ** attempt)


def fetch(http, url, *, params=None, headers=None, method="GET", json=None):
    """A GET (or a POST of `json`) with the body read in chunks up to MAX_BODY_BYTES;
    returns (response, body)."""
    with http.stream(method, url, params=params, headers=headers, json=json) as response:
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise FetchError(_("%(url)s: response over %(limit)s bytes") % {
                    "url": response.request.url, "limit": f"{MAX_BODY_BYTES:,}"})
            chunks.append(chunk)
    return response, b"".join(chunks)


def gave_up(name, tries, problem):
    return _("%(name)s: gave up after %(tries)s tries (%(problem)s)") % {
        "name": name, "tries": tries, "problem": problem}


def network_error(exc):
    return _("network error: %(error)s") % {"error": exc}


def broken_xml(exc):
    return _("broken XML: %(error)s") % {"error": exc}


class PagedClient:
    """One endpoint read page by page: paced, with transient failures retried.

    A network error, 5xx, or 429/503 (waiting out Retry-After) is retried with
    back-off; any status outside `page_statuses` stops the run. A subclass turns a
    page into a result in `read_page`, or names a problem to retry the page for.
    """

    page_statuses = (200,)

    def __init__(self, *, transport, sleep, clock, delay, max_retries, backoff_base,
                 throttle_wait, url):
        self.http = make_http(transport)
        self.sleep, self.clock, self.url = sleep, clock, url
        self.pacer = Pacer(delay, sleep, clock)
        self.max_retries, self.backoff_base = max_retries, backoff_base
        self.throttle_wait = throttle_wait

    def read_page(self, response, body, params, name):
        """(result, None), or (None, what to retry for)."""
        raise NotImplementedError

    def fetch_page(self, params, name):
        for attempt in range(self.max_retries + 1):
            result, problem, wait = self._attempt(params, name, attempt)
            if result is not None:
                return result
            if attempt < self.max_retries:
                self.sleep(wait)
        raise FetchError(gave_up(name, self.max_retries + 1, problem))

    def _attempt(self, params, name, attempt):
        """(result, None, None), or (None, what went wrong, seconds to wait)."""
        self.pacer.wait()
        try:
            response, body = fetch(self.http, self.url, params=params)
        except httpx.TransportError as exc:
            return None, network_error(exc), backoff(self.backoff_base, attempt)
        if response.status_code in (429, 503):
            wait = retry_after(response, self.clock) or backoff(self.throttle_wait, attempt)
            return None, f"HTTP {response.status_code}", wait
        if response.status_code >= 500:
            return None, f"HTTP {response.status_code}", backoff(self.backoff_base, attempt)
        if response.status_code not in self.page_statuses:
            raise FetchError(f"{name}: HTTP {response.status_code}")
        result, problem = self.read_page(response, body, params, name)
        if problem is not None:
            return None, problem, backoff(self.backoff_base, attempt)
        return result, None, None

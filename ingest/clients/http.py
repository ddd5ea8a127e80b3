"""What the live clients share: pacing, back-off, Retry-After, a bounded body."""

from email.utils import parsedate_to_datetime

import httpx

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


def fetch(http, url, *, params=None, headers=None):
    """GET with the body read in chunks up to MAX_BODY_BYTES; returns (response, body)."""
    with http.stream("GET", url, params=params, headers=headers) as response:
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise FetchError(f"{response.request.url}: response over {MAX_BODY_BYTES:,} bytes")
            chunks.append(chunk)
    return response, b"".join(chunks)

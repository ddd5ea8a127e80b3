"""The arXiv search API (export.arxiv.org/api/query), paged politely.

arXiv's terms ask for one request every 3 seconds on a single connection. Pages
are retried on 5xx, 429, network errors, a broken XML body and the sporadic
empty page in mid-results; an error feed (HTTP 400, or 200 in the legacy output)
becomes an ArxivApiError with arXiv's own message and is never retried.
"""

import io
import time

import httpx

from ..sources.arxiv_atom import FeedInfo, read_feed
from ..sources.xml import MalformedXml
from .http import FetchError, Pacer, backoff, fetch, make_http, retry_after

API_URL = "https://export.arxiv.org/api/query"
MAX_PAGE = 2000  # the API's limit per call
MAX_REACHABLE = 30000  # start + max_results beyond this is refused


class ArxivApiError(FetchError):
    """arXiv answered with an error entry: the query is wrong, retrying will not help."""


class ArxivApiClient:
    def __init__(self, *, transport=None, sleep=time.sleep, clock=time.time, delay=3.0,
                 page_size=100, max_retries=4, backoff_base=5.0, throttle_wait=60.0,
                 url=API_URL):
        self.http = make_http(transport)
        self.sleep, self.clock, self.url = sleep, clock, url
        self.pacer = Pacer(delay, sleep, clock)
        self.page_size = max(1, min(page_size, MAX_PAGE))
        self.max_retries, self.backoff_base, self.throttle_wait = max_retries, backoff_base, throttle_wait

    def search(self, *, search_query="", id_list=(), max_results=None,
               sort_by="submittedDate", sort_order="ascending"):
        """Yield records (and RecordErrors) for every result, page by page."""
        limit = min(max_results or MAX_REACHABLE, MAX_REACHABLE)
        start = 0
        while start < limit:
            params = {"search_query": search_query, "id_list": ",".join(id_list),
                      "start": start, "max_results": min(self.page_size, limit - start),
                      "sortBy": sort_by, "sortOrder": sort_order}
            info, items = self._page(params)
            yield from items
            if info.total is not None:
                limit = min(limit, info.total)
            if not info.entries:
                return
            start += info.entries

    def _page(self, params):
        name = f"arXiv API start={params['start']}"
        for attempt in range(self.max_retries + 1):
            result, problem, wait = self._try_page(params, name, attempt)
            if result is not None:
                return result
            if attempt < self.max_retries:
                self.sleep(wait)
        raise FetchError(f"{name}: gave up after {self.max_retries + 1} tries ({problem})")

    def _try_page(self, params, name, attempt):
        """((info, items), None, None), or (None, what went wrong, seconds to wait)."""
        self.pacer.wait()
        try:
            response, body = fetch(self.http, self.url, params=params)
        except httpx.TransportError as exc:
            return None, f"network error: {exc}", backoff(self.backoff_base, attempt)
        if response.status_code in (429, 503):
            wait = retry_after(response, self.clock) or backoff(self.throttle_wait, attempt)
            return None, f"HTTP {response.status_code}", wait
        if response.status_code >= 500:
            return None, f"HTTP {response.status_code}", backoff(self.backoff_base, attempt)
        if response.status_code not in (200, 400):
            raise FetchError(f"{name}: HTTP {response.status_code}")
        info = FeedInfo()
        try:
            items = list(read_feed(io.BytesIO(body), name, info))
        except MalformedXml as exc:
            if response.status_code == 400:
                raise FetchError(f"{name}: HTTP 400 without an error feed") from None
            return None, f"broken XML: {exc}", backoff(self.backoff_base, attempt)
        if info.api_error or response.status_code == 400:
            raise ArxivApiError(f"arXiv refused the query: {info.api_error or 'HTTP 400'}")
        if not info.entries and info.total and params["start"] < info.total:
            # arXiv sometimes serves an empty page in mid-results; a retry fixes it.
            return None, "an empty page before the end of the results", backoff(self.backoff_base, attempt)
        return (info, items), None, None

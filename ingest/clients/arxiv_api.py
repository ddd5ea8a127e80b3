"""The arXiv search API (export.arxiv.org/api/query), paged politely.

arXiv's terms ask for one request every 3 seconds on a single connection. Pages
are retried on 5xx, 429, network errors, a broken XML body and the sporadic
empty page in mid-results; an error feed (HTTP 400, or 200 in the legacy output)
becomes an ArxivApiError with arXiv's own message and is never retried.
"""

import io
import time

from django.utils.translation import gettext as _

from ..sources.arxiv_atom import FeedInfo, read_feed
from ..sources.xml import MalformedXml
from .http import FetchError, PagedClient, broken_xml

API_URL = "https://export.arxiv.org/api/query"
MAX_PAGE = 2000  # the API's limit per call
MAX_REACHABLE = 30000  # start + max_results beyond this is refused


class ArxivApiError(FetchError):
    """arXiv answered with an error entry: the query is wrong, retrying will not help."""


class ArxivApiClient(PagedClient):
    # An error feed comes with HTTP 400: read it for arXiv's own message.
    page_statuses = (200, 400)

    def __init__(self, *, transport=None, sleep=time.sleep, clock=time.time, delay=3.0,
                 page_size=100, max_retries=4, backoff_base=5.0, throttle_wait=60.0,
                 url=API_URL):
        super().__init__(transport=transport, sleep=sleep, clock=clock, delay=delay,
                         max_retries=max_retries, backoff_base=backoff_base,
                         throttle_wait=throttle_wait, url=url)
        self.page_size = max(1, min(page_size, MAX_PAGE))

    def search(self, *, search_query="", id_list=(), max_results=None,
               sort_by="submittedDate", sort_order="ascending"):
        """Yield records (and RecordErrors) for every result, page by page."""
        limit = min(max_results or MAX_REACHABLE, MAX_REACHABLE)
        start = 0
        while start < limit:
            params = {"search_query": search_query, "id_list": ",".join(id_list),
                      "start": start, "max_results": min(self.page_size, limit - start),
                      "sortBy": sort_by, "sortOrder": sort_order}
            info, items = self.fetch_page(params, _("arXiv API start=%(start)s") % {"start": start})
            yield from items
            if info.total is not None:
                limit = min(limit, info.total)
            if not info.entries:
                return
            start += info.entries

    def read_page(self, response, body, params, name):
        info = FeedInfo()
        try:
            items = list(read_feed(io.BytesIO(body), name, info))
        except MalformedXml as exc:
            if response.status_code == 400:
                raise FetchError(_("%(name)s: HTTP 400 without an error feed") % {
                    "name": name}) from None
            return None, broken_xml(exc)
        if info.api_error or response.status_code == 400:
            raise ArxivApiError(_("arXiv refused the query: %(error)s") % {
                "error": info.api_error or "HTTP 400"})
        if not info.entries and info.total and params["start"] < info.total:
            # arXiv sometimes serves an empty page in mid-results; a retry fixes it.
            return None, _("an empty page before the end of the results")
        return (info, items), None

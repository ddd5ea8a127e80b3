"""arXiv OAI-PMH harvesting (oaipmh.arxiv.org/oai): ListRecords with resumption tokens.

Flow control per OAI-PMH §3.1.2.2: a 503 (or 429) with Retry-After is waited out
and retried. `noRecordsMatch` is an empty harvest, not a failure. A resumption
token expires at the next midnight UTC; `badResumptionToken` then means the
harvest must restart from its `from` date, which the error says.
"""

import io
import time

import httpx

from ..sources.oai_pmh import OaiInfo, read_response
from ..sources.xml import MalformedXml
from .http import FetchError, Pacer, backoff, fetch, make_http, retry_after

OAI_URL = "https://oaipmh.arxiv.org/oai"


class OaiError(FetchError):
    def __init__(self, code, message):
        self.code = code
        advice = " (the token expired: restart the harvest from its 'from' date)" \
            if code == "badResumptionToken" else ""
        super().__init__(f"OAI-PMH error {code}: {message}{advice}")


class OaiClient:
    def __init__(self, *, transport=None, sleep=time.sleep, clock=time.time, delay=3.0,
                 max_retries=5, backoff_base=5.0, throttle_wait=60.0, url=OAI_URL):
        self.http = make_http(transport)
        self.sleep, self.clock, self.url = sleep, clock, url
        self.pacer = Pacer(delay, sleep, clock)
        self.max_retries, self.backoff_base, self.throttle_wait = max_retries, backoff_base, throttle_wait

    def list_records(self, metadata_prefix="arXiv", *, set_spec=None, from_date=None, until=None):
        """Yield records, Deletions and RecordErrors of the whole harvest, page by page."""
        params = {"verb": "ListRecords", "metadataPrefix": metadata_prefix, "set": set_spec,
                  "from": from_date, "until": until}
        params = {k: v for k, v in params.items() if v}
        page = 0
        while params:
            page += 1
            info, items = self._page(params, f"OAI-PMH page {page}")
            if info.error_code == "noRecordsMatch":
                return
            if info.error_code:
                raise OaiError(info.error_code, info.error_message)
            yield from items
            # The token is opaque: sent back alone, as received (httpx encodes it).
            token = info.resumption_token
            params = {"verb": "ListRecords", "resumptionToken": token} if token else None

    def _page(self, params, name):
        for attempt in range(self.max_retries + 1):
            result, problem, wait = self._try_page(params, name, attempt)
            if result is not None:
                return result
            if attempt < self.max_retries:
                self.sleep(wait)
        raise FetchError(f"{name}: gave up after {self.max_retries + 1} tries ({problem})")

    def _try_page(self, params, name, attempt):
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
        if response.status_code != 200:
            # The harvester guidelines: stop on 403 and other unexpected replies.
            raise FetchError(f"{name}: HTTP {response.status_code}")
        info = OaiInfo()
        try:
            items = list(read_response(io.BytesIO(body), name, info))
        except MalformedXml as exc:
            return None, f"broken XML: {exc}", backoff(self.backoff_base, attempt)
        return (info, items), None, None

"""arXiv OAI-PMH harvesting (oaipmh.arxiv.org/oai): ListRecords with resumption tokens.

Flow control per OAI-PMH §3.1.2.2: a 503 (or 429) with Retry-After is waited out
and retried. `noRecordsMatch` is an empty harvest, not a failure. A resumption
token expires at the next midnight UTC; `badResumptionToken` then means the
harvest must restart from its `from` date, which the error says.
"""

import io
import time

from django.utils.translation import gettext as _

from ..sources.oai_pmh import OaiInfo, oai_error, read_response
from ..sources.xml import MalformedXml
from .http import FetchError, PagedClient, broken_xml

OAI_URL = "https://oaipmh.arxiv.org/oai"


class OaiError(FetchError):
    def __init__(self, code, message):
        self.code = code
        said = oai_error(code, message)
        if code == "badResumptionToken":
            said = _("%(error)s (the token expired: restart the harvest from its 'from' date)") % {
                "error": said}
        super().__init__(said)


class OaiClient(PagedClient):
    def __init__(self, *, transport=None, sleep=time.sleep, clock=time.time, delay=3.0,
                 max_retries=5, backoff_base=5.0, throttle_wait=60.0, url=OAI_URL):
        super().__init__(transport=transport, sleep=sleep, clock=clock, delay=delay,
                         max_retries=max_retries, backoff_base=backoff_base,
                         throttle_wait=throttle_wait, url=url)

    def list_records(self, metadata_prefix="arXiv", *, set_spec=None, from_date=None, until=None):
        """Yield records, Deletions and RecordErrors of the whole harvest, page by page."""
        params = {"verb": "ListRecords", "metadataPrefix": metadata_prefix, "set": set_spec,
                  "from": from_date, "until": until}
        params = {k: v for k, v in params.items() if v}
        page = 0
        while params:
            page += 1
            info, items = self.fetch_page(params, _("OAI-PMH page %(page)s") % {"page": page})
            if info.error_code == "noRecordsMatch":
                return
            if info.error_code:
                raise OaiError(info.error_code, info.error_message)
            yield from items
            # The token is opaque: sent back alone, as received (httpx encodes it).
            token = info.resumption_token
            params = {"verb": "ListRecords", "resumptionToken": token} if token else None

    def read_page(self, response, body, params, name):
        # The harvester guidelines: stop on 403 and other unexpected replies (page_statuses).
        info = OaiInfo()
        try:
            items = list(read_response(io.BytesIO(body), name, info))
        except MalformedXml as exc:
            return None, broken_xml(exc)
        return (info, items), None

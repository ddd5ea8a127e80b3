"""The live arXiv clients (search API and OAI-PMH) against recorded responses.

Responses are the fixture files in the real wire format, served by httpx.MockTransport;
waits go through a fake clock, so the 3 s politeness delay and every back-off are
asserted, never slept.
"""

import pytest

from ingest import imports
from ingest.clients.arxiv_api import ArxivApiClient, ArxivApiError
from ingest.clients.http import FetchError
from ingest.clients.oai import OaiClient, OaiError
from ingest.models import Document
from ingest.records import Deletion, DocumentRecord

from .conftest import fixture_bytes, response

ATOM = "application/atom+xml; charset=utf-8"
XML = "text/xml; charset=utf-8"


def atom(name, status=200, headers=None):
    return response(status, fixture_bytes(f"arxiv/{name}"), headers, content_type=ATOM)


def oai(name, status=200, headers=None):
    return response(status, fixture_bytes(f"arxiv/{name}"), headers, content_type=XML)


def api_client(server, fake_time, **options):
    return ArxivApiClient(transport=server.transport, sleep=fake_time.sleep,
                          clock=fake_time.clock, page_size=2, **options)


def oai_client(server, fake_time, **options):
    return OaiClient(transport=server.transport, sleep=fake_time.sleep, clock=fake_time.clock,
                     **options)


def keys(items):
    return [item.key for item in items if isinstance(item, DocumentRecord)]


# --- the search API ------------------------------------------------------------

def test_api_results_are_paged_with_three_seconds_between_calls(server, fake_time):
    server.on("/api/query", atom("atom_page1.xml"), start="0")
    server.on("/api/query", atom("atom_page2.xml"), start="2")
    items = list(api_client(server, fake_time).search(search_query="cat:cs.LG"))
    assert keys(items) == ["2507.99917", "2507.99921", "2508.99933"]
    assert [r.url.params["start"] for r in server.requests] == ["0", "2"]
    assert server.requests[0].url.params["max_results"] == "2"
    assert server.requests[0].url.host == "export.arxiv.org"
    assert fake_time.sleeps == [3.0]


def test_api_5xx_is_retried_with_backoff(server, fake_time):
    server.on("/api/query", response(502, "Bad Gateway"), response(503, "Busy"),
              atom("atom_one.xml"))
    items = list(api_client(server, fake_time).search(id_list=["2507.99917"]))
    assert keys(items) == ["2507.99917"]
    # A 502 backs off 5 s; a 503 is arXiv throttling: a minute, doubled on the second try.
    assert fake_time.sleeps == [5.0, 120.0]
    assert len(server.requests) == 3


def test_api_5xx_backoff_grows_and_then_the_politeness_delay_is_already_met(server, fake_time):
    server.on("/api/query", response(500), response(500), atom("atom_one.xml"))
    list(api_client(server, fake_time).search(id_list=["2507.99917"]))
    # 5 s, then 10 s of back-off: each longer than the 3 s between calls, so no extra wait.
    assert fake_time.sleeps == [5.0, 10.0]


def test_api_429_waits_as_long_as_retry_after_says(server, fake_time):
    server.on("/api/query", response(429, "Rate exceeded", {"retry-after": "120"},
                                     content_type="text/plain"), atom("atom_one.xml"))
    items = list(api_client(server, fake_time).search(id_list=["2507.99917"]))
    assert keys(items) == ["2507.99917"]
    assert fake_time.sleeps == [120.0]


def test_api_429_without_retry_after_backs_off_for_minutes(server, fake_time):
    server.on("/api/query", response(429, "Rate exceeded", content_type="text/plain"),
              response(429, "Rate exceeded", content_type="text/plain"), atom("atom_one.xml"))
    list(api_client(server, fake_time).search(id_list=["2507.99917"]))
    assert fake_time.sleeps == [60.0, 120.0]


@pytest.mark.parametrize("name, status", [("atom_error.xml", 400), ("atom_legacy_error.xml", 200)])
def test_an_api_error_feed_raises_arxivs_message_and_is_not_retried(server, fake_time, name,
                                                                      status):
    server.on("/api/query", atom(name, status))
    with pytest.raises(ArxivApiError, match="incorrect id format for not-an-id"):
        list(api_client(server, fake_time).search(id_list=["not-an-id"]))
    assert len(server.requests) == 1


def test_a_truncated_api_page_is_fetched_again(server, fake_time):
    server.on("/api/query", atom("atom_page1.xml"), start="0")
    server.on("/api/query", atom("atom_page2_truncated.xml"), atom("atom_page2.xml"), start="2")
    items = list(api_client(server, fake_time).search(search_query="cat:cs.LG"))
    assert keys(items) == ["2507.99917", "2507.99921", "2508.99933"]
    assert [r.url.params["start"] for r in server.requests] == ["0", "2", "2"]


def test_an_empty_page_before_the_end_is_retried_not_taken_as_the_end(server, fake_time):
    server.on("/api/query", atom("atom_page1.xml"), start="0")
    server.on("/api/query", atom("atom_page2_empty.xml"), atom("atom_page2.xml"), start="2")
    items = list(api_client(server, fake_time).search(search_query="cat:cs.LG"))
    assert keys(items) == ["2507.99917", "2507.99921", "2508.99933"]


def test_the_api_client_gives_up_after_its_retries(server, fake_time):
    server.on("/api/query", response(503))
    with pytest.raises(FetchError, match="gave up after 3 tries"):
        list(api_client(server, fake_time, max_retries=2).search(id_list=["2507.99917"]))


def test_an_empty_api_result_ends_at_once(server, fake_time):
    server.on("/api/query", atom("atom_empty.xml"))
    assert list(api_client(server, fake_time).search(search_query="ti:nothing")) == []
    assert len(server.requests) == 1


def test_max_results_limits_the_pages_asked_for(server, fake_time):
    server.on("/api/query", atom("atom_page1.xml"), start="0")
    items = list(api_client(server, fake_time).search(search_query="cat:cs.LG", max_results=2))
    assert len(keys(items)) == 2 and len(server.requests) == 1


def test_a_live_api_import_writes_the_papers(db, server, fake_time, monkeypatch):
    server.on("/api/query", atom("atom_page1.xml"), start="0")
    server.on("/api/query", atom("atom_page2.xml"), start="2")
    monkeypatch.setitem(imports.CLIENTS, "arxiv_api",
                        lambda: api_client(server, fake_time))
    counts = imports.run_import({"format": "arxiv_api", "search_query": "cat:cs.LG"})
    assert counts["added"] == 3
    counts = imports.run_import({"format": "arxiv_api", "search_query": "cat:cs.LG"})
    assert (counts["added"], counts["unchanged"]) == (0, 3)
    assert Document.objects.count() == 3


# --- OAI-PMH ---------------------------------------------------------------------

def test_a_harvest_follows_resumption_tokens_sent_back_alone(server, fake_time):
    server.on("/oai", oai("oai_raw_page1.xml"), metadataPrefix="arXivRaw")
    server.on("/oai", oai("oai_raw_page2.xml"), verb="ListRecords")
    items = list(oai_client(server, fake_time).list_records(
        "arXivRaw", set_spec="cs", from_date="2025-09-14"))
    assert keys(items) == ["2507.99917", "hep-th/9901991"]
    assert [i.key for i in items if isinstance(i, Deletion)] == ["2507.99918"]
    second = server.requests[1].url
    assert dict(second.params) == {
        "verb": "ListRecords",
        "resumptionToken": "verb%3DListRecords%26metadataPrefix%3DarXivRaw%26from%3D2025-09-14"
                           "%26set%3Dcs%26skip%3D2500"}
    assert "resumptionToken=verb%253DListRecords" in str(second)  # encoded again when sent
    assert fake_time.sleeps == [3.0]


def test_a_503_with_retry_after_is_waited_out(server, fake_time):
    server.on("/oai", oai("oai_raw_page1.xml", 503, {"retry-after": "30"}),
              oai("oai_raw_page2.xml"))
    items = list(oai_client(server, fake_time).list_records("arXivRaw"))
    assert keys(items) == ["hep-th/9901991"]
    assert fake_time.sleeps == [30.0]


def test_retry_after_may_be_an_http_date(server, fake_time):
    from email.utils import formatdate

    later = formatdate(fake_time.now + 45, usegmt=True)
    server.on("/oai", response(503, "", {"retry-after": later}), oai("oai_raw_page2.xml"))
    list(oai_client(server, fake_time).list_records("arXivRaw"))
    assert fake_time.sleeps == [45.0]


def test_no_records_match_ends_the_harvest_quietly(server, fake_time):
    server.on("/oai", oai("oai_no_records.xml"))
    assert list(oai_client(server, fake_time).list_records("arXivRaw", from_date="2031-01-01")) == []


def test_an_expired_resumption_token_says_to_restart_from_the_from_date(server, fake_time):
    server.on("/oai", oai("oai_raw_page1.xml"), metadataPrefix="arXivRaw")
    server.on("/oai", oai("oai_bad_token.xml"), verb="ListRecords")
    with pytest.raises(OaiError, match="badResumptionToken.*restart the harvest"):
        list(oai_client(server, fake_time).list_records("arXivRaw"))


def test_a_truncated_oai_page_is_fetched_again(server, fake_time):
    server.on("/oai", oai("oai_raw_page1_truncated.xml"), oai("oai_raw_page2.xml"))
    items = list(oai_client(server, fake_time).list_records("arXivRaw"))
    assert keys(items) == ["hep-th/9901991"]
    assert len(server.requests) == 2


def test_a_403_stops_the_harvest(server, fake_time):
    server.on("/oai", response(403, "Forbidden", content_type="text/plain"))
    with pytest.raises(FetchError, match="HTTP 403"):
        list(oai_client(server, fake_time).list_records("arXiv"))
    assert len(server.requests) == 1


def test_a_live_harvest_marks_deleted_records_and_imports_the_rest(db, server, fake_time,
                                                                   monkeypatch):
    Document.objects.create(kind="paper", source="arxiv", key="2507.99918", title="Invented")
    server.on("/oai", oai("oai_raw_page1.xml"), metadataPrefix="arXivRaw")
    server.on("/oai", oai("oai_raw_page2.xml"), verb="ListRecords")
    monkeypatch.setitem(imports.CLIENTS, "arxiv_oai", lambda: oai_client(server, fake_time))
    counts = imports.run_import({"format": "arxiv_oai", "metadata_prefix": "arXivRaw"})
    assert (counts["added"], counts["deleted"]) == (2, 1)
    assert Document.objects.get(key="2507.99918").metadata["deleted"] is True


def test_a_response_over_the_size_limit_is_refused_not_held(server, fake_time, monkeypatch):
    from ingest.clients import http

    monkeypatch.setattr(http, "MAX_BODY_BYTES", 1000)
    server.on("/api/query", atom("atom_page1.xml"))
    with pytest.raises(FetchError, match="response over 1,000 bytes"):
        list(api_client(server, fake_time).search(search_query="cat:cs.LG"))

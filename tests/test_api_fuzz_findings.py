"""What the API fuzzer (tests/test_api_fuzz.py) found, each fixed where it arose, as plain
requests: a regression test per finding. Apart from the fuzzer's module because they build
their own rows (conftest's alpha), while the fuzzer's world stays open until its last test."""

import json

import pytest
from django.urls import reverse

from coding.labeling import queue
from coding.models import Decision
from workbench.models import ApiToken, Job


@pytest.fixture
def api(alpha, people):
    """A client speaking for a person with an API token: api("cora").get(...)."""
    from django.test import Client

    def client(name):
        _, key = ApiToken.objects.create(people[name], name="regression")
        return Client(HTTP_AUTHORIZATION=f"Token {key}")

    return client


def send(client, method, url, body):
    return getattr(client, method)(url, json.dumps(body), content_type="application/json")


def test_id_filters_take_whole_numbers_in_the_id_range(api, alpha):
    """A huge or fractional ?item= reached the query as a Decimal (NumberFilter): SQLite
    could not bind it (OverflowError, 500)."""
    olive = api("olive")
    for value in ("-1.291530621163313e+20", "99999999999999999999", "2.5", "0"):
        answer = olive.get(f"/api/studies/{alpha.slug}/decisions/", {"item": value})
        assert answer.status_code == 400, value
        assert "item" in answer.json()
    item = alpha.papers[0].pk
    assert olive.get(f"/api/studies/{alpha.slug}/codings/", {"item": item}).status_code == 200
    assert olive.get(f"/api/studies/{alpha.slug}/items/", {"codebook": 2**63}).status_code == 400


def test_datetime_filters_reach_the_database_in_utc(api, alpha):
    """PostgreSQL refused an offset beyond ±15:59 (DataError, 500); near year 1 or 9999 the
    conversion to UTC overflowed on SQLite (OverflowError, 500)."""
    olive = api("olive")
    items = f"/api/studies/{alpha.slug}/items/"
    assert olive.get(items, {"added_after": "0274-04-14T00:54:48+18:40"}).json()["count"] == 3
    for value in ("0001-01-01T00:00:00+18:00", "9999-12-31T23:59:00-18:00"):
        answer = olive.get(items, {"added_after": value})
        assert answer.status_code == 400, value
        assert answer.json() == {
            "added_after": ["That moment is outside the years 1 to 9999 in UTC."]}
    codings = f"/api/studies/{alpha.slug}/codings/"
    assert olive.get(codings, {"submitted_before": "9999-12-31T23:59:00-18:00"}).status_code == 400


def test_a_draft_with_text_the_database_cannot_keep_is_refused(api, alpha, people, client_for):
    """A NUL character (or a lone surrogate) in a draft reached the jsonb column: PostgreSQL
    refused it (DataError, 500)."""
    held = queue.next_item(alpha, people["cora"])
    cora = api("cora")
    draft = f"/api/studies/{alpha.slug}/assignments/{held.pk}/draft/"
    for body, field, char in [({"values": {"note": "a\u0000b"}}, "values", "U+0000"),
                              ({"values": {"no\u0000te": "ab"}}, "values", "U+0000"),
                              # Refused by the JSON parser itself (workbench/parsers.py).
                              ({"values": {"note": "a\ud800b"}}, "detail",
                               "values.note holds a lone surrogate"),
                              ({"values": {}, "evidence": [{"quote": "\u0000"}]}, "evidence",
                               "U+0000")]:
        answer = send(cora, "put", draft, body)
        assert answer.status_code == 400, body
        assert char in str(answer.json()[field])
    held.refresh_from_db()
    assert held.draft is None
    # The coding page's draft (htmx) goes through the same function.
    page = client_for(people["cora"]).post(
        reverse("code-draft", args=[alpha.slug, held.pk]), {"q-note": "a\x00b"})
    assert page.status_code == 400
    assert b"NUL" in page.content


def test_text_answers_the_database_cannot_keep_are_refused(api, alpha, people):
    """A NUL in a text answer passed check_values into a coding or a decision (500 on
    PostgreSQL); a lone surrogate failed on both databases."""
    held = queue.next_item(alpha, people["cora"])
    answers = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
    submitted = send(api("cora"), "post",
                     f"/api/studies/{alpha.slug}/assignments/{held.pk}/submit/",
                     {"values": {**answers, "note": "x\u0000"}})
    assert submitted.status_code == 400
    assert submitted.json() == {"note": ["text may not contain a NUL character (U+0000)"]}

    review = f"/api/studies/{alpha.slug}/items/{alpha.papers[0].pk}/review/"
    decided = send(api("ada"), "post", review,
                   {"question": "note", "value": "x\u0000", "rationale": "A reason."})
    assert decided.status_code == 400
    assert decided.json() == {"note": ["text may not contain a NUL character (U+0000)"]}
    assert not Decision.objects.exists()
    # A lone surrogate is refused when the JSON is read, before any view sees it; the
    # check in check_answer still guards the other doors (forms, commands).
    from coding.codebooks.versions import check_answer

    question = alpha.paper_codebook.current_version().questions.get(key="note")
    with pytest.raises(ValueError, match=r"lone surrogate \(U\+DC00\)"):
        check_answer(question, "x\udc00")


def test_an_import_source_the_database_cannot_keep_is_refused(api, alpha):
    """Source and screening are kept on the job as JSON: a NUL failed on PostgreSQL, a lone
    surrogate on both databases. A bad screening rule is named as such."""
    olive = api("olive")
    url = f"/api/studies/{alpha.slug}/imports/"
    search = {"format": "arxiv_api", "search_query": "cat:cs.LG"}
    for body, field in [({"source": {**search, "search_query": "a\u0000"}}, "source"),
                        ({"source": {**search, "search_query": "a\ud800"}}, "detail"),
                        ({"source": search, "screening": {"query": "a\u0000"}}, "screening")]:
        answer = send(olive, "post", url, body)
        assert answer.status_code == 400, body
        assert list(answer.json()) == [field]
    bad_rule = send(olive, "post", url, {"source": search,
                                         "screening": {"query": "(", "regex": True}})
    assert bad_rule.status_code == 400
    assert list(bad_rule.json()) == ["screening"]
    assert not Job.objects.exists()


def test_a_lone_surrogate_in_json_is_a_bad_request(api, alpha):
    answer = send(api("olive"), "post", f"/api/studies/{alpha.slug}/exports/",
                  {"format": "\ud800"})
    assert answer.status_code == 400
    assert "format holds a lone surrogate" in answer.json()["detail"]


def test_an_import_path_too_long_for_the_file_system_is_a_bad_request(api, alpha):
    answer = send(api("olive"), "post", f"/api/studies/{alpha.slug}/imports/",
                  {"source": {"format": "csv_file", "path": "a" * 5000,
                              "mapping": {"key": "id", "title": "title"}}})
    assert answer.status_code == 400
    assert list(answer.json()) == ["source"]


def test_an_export_of_no_tables_is_a_bad_request(api, alpha):
    answer = send(api("olive"), "post", f"/api/studies/{alpha.slug}/exports/", {"shapes": []})
    assert answer.status_code == 400 and list(answer.json()) == ["shapes"]


def test_json_nested_past_what_the_parser_reads_is_a_bad_request(api, alpha):
    body = "[" * 200_000 + "]" * 200_000
    answer = api("olive").generic("PATCH", f"/api/studies/{alpha.slug}/", body,
                                  content_type="application/json")
    assert answer.status_code == 400 and "nested too deeply" in answer.json()["detail"]
    multipart = api("olive").post(f"/api/studies/{alpha.slug}/imports/",
                                  {"source": "[" * 200_000 + "]" * 200_000})
    assert multipart.status_code == 400

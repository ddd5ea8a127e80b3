"""The live GitHub client against recorded REST responses (httpx.MockTransport, fake clock)."""

import json

import pytest

from ingest import imports
from ingest.clients.github import GitHubClient, GitHubError
from ingest.models import CachedResponse, Document
from ingest.records import DocumentRecord, RecordError

from .conftest import fixture_bytes, response

REPO = "example-lab/lantern-probes"
API = f"https://api.github.com/repos/{REPO}"
PATH = f"/repos/{REPO}"
PAGE_2 = (f"https://api.github.com/repositories/880000001/issues?state=all&sort=updated"
          f"&direction=asc&since=2025-10-01T00%3A00%3A00Z&per_page=100&page=2")
SINCE = "2025-10-01T00:00:00Z"


def rate_headers(remaining=4987, reset=1759510800):
    return {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": str(remaining),
            "x-ratelimit-used": str(5000 - remaining), "x-ratelimit-reset": str(reset),
            "x-ratelimit-resource": "core", "x-github-api-version-selected": "2022-11-28"}


def page(name, etag=None, link=None, **rate):
    """A recorded 200 that answers 304 when asked again with its ETag."""
    etag = etag or f'W/"{name}-v1"'

    def answer(request):
        headers = {**rate_headers(**rate), "etag": etag}
        if request.headers.get("if-none-match") == etag:
            return response(304, b"", headers)
        if link:
            headers["link"] = link
        return response(200, fixture_bytes(f"github/{name}"), headers,
                        content_type="application/json; charset=utf-8")

    return answer


def serve_repository(server):
    server.on("/repositories/880000001/issues", page("issues_page2.json"), page="2")
    server.on(f"{PATH}/issues", page("issues_page1.json", link=f'<{PAGE_2}>; rel="next", '
                                                               f'<{PAGE_2}>; rel="last"'))
    for path, name in [("issues/41/comments", "comments_41.json"),
                       ("issues/41/timeline", "timeline_41.json"),
                       ("issues/42/comments", "comments_42.json"),
                       ("issues/42/timeline", "timeline_42.json"),
                       ("pulls/42", "pull_42.json"), ("pulls/42/reviews", "reviews_42.json"),
                       ("pulls/42/comments", "review_comments_42.json"),
                       ("issues/43/timeline", "timeline_43.json")]:
        server.on(f"{PATH}/{path}", page(name))
    return server


def client(server, fake_time, token="test-token-not-real", **options):
    return GitHubClient(token, transport=server.transport, sleep=fake_time.sleep,
                        clock=fake_time.clock, **options)


def keys(items):
    return [i.key for i in items if isinstance(i, DocumentRecord)]


def test_threads_follow_the_link_header_with_100_per_page(db, server, fake_time):
    serve_repository(server)
    items = list(client(server, fake_time).threads(REPO, since=SINCE))
    assert keys(items) == [f"{REPO}#41", f"{REPO}#42", f"{REPO}#43"]
    first = server.requests[0].url
    assert dict(first.params) == {"state": "all", "sort": "updated", "direction": "asc",
                                  "per_page": "100", "since": SINCE}
    assert PAGE_2 in [str(r.url) for r in server.requests]
    assert fake_time.sleeps == []


def test_a_thread_has_its_comments_reviews_review_comments_and_events(db, server, fake_time):
    serve_repository(server)
    items = list(client(server, fake_time).threads(REPO))
    pull = next(i for i in items if i.key.endswith("#42"))
    assert [p.kind for p in pull.posts] == ["opening", "review_comment", "comment", "review"]
    assert [e["event"] for e in pull.metadata["events"]] == ["labeled", "reviewed", "merged",
                                                             "closed"]
    assert pull.metadata["merged"] is True


def test_requests_carry_the_token_from_the_environment(db, server, fake_time, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "env-token-not-real")
    serve_repository(server)
    list(GitHubClient(transport=server.transport, sleep=fake_time.sleep,
                      clock=fake_time.clock).threads(REPO))
    headers = server.requests[0].headers
    assert headers["authorization"] == "Bearer env-token-not-real"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"


def test_an_update_run_sends_etags_and_gets_the_same_threads_from_304s(db, server, fake_time):
    serve_repository(server)
    first = list(client(server, fake_time).threads(REPO, since=SINCE))
    requests_before = len(server.requests)
    second = list(client(server, fake_time).threads(REPO, since=SINCE))
    again = server.requests[requests_before:]
    assert all(r.headers.get("if-none-match") for r in again)
    assert second == first
    assert CachedResponse.objects.count() == requests_before
    assert "test-token-not-real" not in json.dumps(list(CachedResponse.objects.values()),
                                                   default=str)


def test_an_update_run_refetches_only_what_changed(db, server, fake_time, monkeypatch):
    serve_repository(server)
    monkeypatch.setitem(imports.CLIENTS, "github", lambda: client(server, fake_time))
    params = {"format": "github", "repository": REPO, "since": SINCE}
    assert imports.run_import(params)["added"] == 3
    comments = json.loads(fixture_bytes("github/comments_41.json"))
    comments.append({**comments[-1], "id": 2900000003, "created_at": "2025-10-05T08:00:00Z",
                     "body": "One more invented comment."})
    server.routes.insert(0, (f"{PATH}/issues/41/comments", {}, [response(
        200, comments, {**rate_headers(), "etag": 'W/"comments_41-v2"'})]))
    counts = imports.run_import(params)
    assert (counts["updated"], counts["unchanged"]) == (1, 2)
    assert Document.objects.get(key=f"{REPO}#41").posts.count() == 4


def test_a_primary_rate_limit_403_waits_until_the_reset(db, server, fake_time):
    reset = int(fake_time.now) + 600
    server.on(f"{PATH}/issues", response(403, fixture_bytes("github/error_403_rate_limit.json"),
                                         rate_headers(remaining=0, reset=reset)),
              response(200, [], rate_headers()))
    assert list(client(server, fake_time).threads(REPO)) == []
    assert fake_time.sleeps == [601.0]


def test_a_secondary_rate_limit_429_waits_as_retry_after_says(db, server, fake_time):
    server.on(f"{PATH}/issues", response(429, fixture_bytes("github/error_429_secondary.json"),
                                         {"retry-after": "60"}),
              response(200, [], rate_headers()))
    list(client(server, fake_time).threads(REPO))
    assert fake_time.sleeps == [60.0]


def test_a_secondary_limit_without_retry_after_waits_a_minute_then_longer(db, server, fake_time):
    secondary = response(403, fixture_bytes("github/error_429_secondary.json"))
    server.on(f"{PATH}/issues", secondary, secondary, response(200, [], rate_headers()))
    list(client(server, fake_time).threads(REPO))
    assert fake_time.sleeps == [60.0, 120.0]


def test_a_403_without_rate_limit_signals_is_a_refusal_and_not_retried(db, server, fake_time):
    server.on(f"{PATH}/issues", response(403, fixture_bytes("github/error_403_forbidden.json"),
                                         rate_headers()))
    with pytest.raises(GitHubError, match="Resource not accessible"):
        list(client(server, fake_time).threads(REPO))
    assert len(server.requests) == 1


def test_a_spent_quota_waits_for_the_reset_before_the_next_request(db, server, fake_time):
    reset = int(fake_time.now) + 100
    serve_repository(server)
    server.routes.insert(0, (f"{PATH}/issues", {}, [page("issues_page2.json", remaining=0,
                                                         reset=reset)]))
    list(client(server, fake_time).threads(REPO))
    assert fake_time.sleeps == [101.0]


def test_5xx_is_retried_with_backoff(db, server, fake_time):
    server.on(f"{PATH}/issues", response(502), response(500), response(200, [], rate_headers()))
    list(client(server, fake_time).threads(REPO))
    assert fake_time.sleeps == [2.0, 4.0]


def test_a_truncated_page_is_fetched_again(db, server, fake_time):
    serve_repository(server)
    whole = fixture_bytes("github/timeline_42.json")
    server.routes.insert(0, (f"{PATH}/issues/42/timeline", {}, [
        response(200, whole[: len(whole) // 3], rate_headers()), response(200, whole, rate_headers())]))
    items = list(client(server, fake_time).threads(REPO))
    assert len(keys(items)) == 3
    assert fake_time.sleeps == [2.0]


def test_the_client_gives_up_after_its_retries(db, server, fake_time):
    server.on(f"{PATH}/issues", response(503))
    with pytest.raises(GitHubError, match="gave up after 3 tries"):
        list(client(server, fake_time, max_retries=2).threads(REPO))


def test_a_thread_deleted_during_the_harvest_is_recorded_and_the_rest_imported(db, server,
                                                                              fake_time):
    serve_repository(server)
    server.routes.insert(0, (f"{PATH}/issues/42/timeline", {}, [
        response(410, fixture_bytes("github/error_410_deleted.json"), rate_headers())]))
    items = list(client(server, fake_time).threads(REPO))
    assert keys(items) == [f"{REPO}#41", f"{REPO}#43"]
    [error] = [i for i in items if isinstance(i, RecordError)]
    assert error.location == f"{REPO}#42"
    assert "HTTP 410 This issue was deleted" in error.reason


def test_saved_bundles_rebuild_the_same_threads_offline(db, server, fake_time, tmp_path,
                                                        monkeypatch):
    serve_repository(server)
    monkeypatch.setitem(imports.CLIENTS, "github", lambda: client(server, fake_time))
    saved = tmp_path / "threads.jsonl"
    imports.run_import({"format": "github", "repository": REPO, "save_to": str(saved)})
    live = {d.key: d.content() for d in Document.objects.all()}
    Document.objects.all().delete()
    counts = imports.run_import({"format": "github_file", "path": str(saved)})
    assert counts["added"] == 3
    assert {d.key: d.content() for d in Document.objects.all()} == live
    assert not (tmp_path / "threads.jsonl.partial").exists()


def test_a_moved_repository_is_followed(db, server, fake_time):
    moved = "https://api.github.com/repositories/880000001/issues?state=all&per_page=100"
    server.on(f"{PATH}/issues", response(301, b"", {"location": moved}))
    server.on("/repositories/880000001/issues", response(200, [], rate_headers()))
    assert list(client(server, fake_time).threads(REPO)) == []
    assert str(server.requests[-1].url) == moved

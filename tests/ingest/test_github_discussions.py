"""The live GitHub client reads Discussions through GraphQL (issue 40, finding 7), against
recorded answers in GraphQL's wire format (httpx.MockTransport, fake clock): cursor paging
of discussions, of a discussion's comments and of a comment's replies, `since`, rate
limits, server errors and GraphQL errors, as the REST client handles them."""

import json

import pytest

from ingest import imports
from ingest.clients.github import GitHubClient, GitHubError
from ingest.models import Document
from ingest.records import DocumentRecord

from .conftest import fixture_bytes, response
from .test_github_client import rate_headers

REPO = "example-lab/lantern-probes"


def answer(name, **rate):
    return response(200, fixture_bytes(f"github/{name}"), rate_headers(**rate),
                    content_type="application/json; charset=utf-8")


def graphql_router(overrides=None):
    """Answers each GraphQL POST by what it asks for; `overrides` maps a kind of question
    (discussions, comments, replies) to answers given first, in order."""
    overrides = {kind: list(answers) for kind, answers in (overrides or {}).items()}

    def route(request):
        asked = json.loads(request.content)
        query, variables = asked["query"], asked["variables"]
        kind = ("replies" if "node(id:" in query else
                "comments" if "discussion(number:" in query else "discussions")
        if overrides.get(kind):
            return overrides[kind].pop(0)
        if kind == "discussions":
            return answer("graphql_discussions_page2.json" if variables["after"]
                          else "graphql_discussions_page1.json")
        if kind == "comments":
            assert variables == {"owner": "example-lab", "name": "lantern-probes",
                                 "number": 9, "comments": "comments-p1"}
            return answer("graphql_comments_page2.json")
        assert variables == {"id": "DC_kwDOFakeCm91", "replies": "replies-p1"}
        return answer("graphql_replies_page2.json")

    return route


def client(server, fake_time, **options):
    return GitHubClient("test-token-not-real", transport=server.transport,
                        sleep=fake_time.sleep, clock=fake_time.clock, **options)


def discussions_only(server):
    server.on(f"/repos/{REPO}/issues", response(200, [], rate_headers()))
    return server


def test_every_page_of_discussions_comments_and_replies_is_read(db, server, fake_time):
    discussions_only(server).on("/graphql", graphql_router())
    items = list(client(server, fake_time).threads(REPO, discussions=True))
    records = [i for i in items if isinstance(i, DocumentRecord)]
    assert [r.key for r in records] == [f"{REPO}#9", f"{REPO}#8", f"{REPO}#7"]
    posts = [(p.external_id, p.author, p.details.get("reply_to")) for p in records[0].posts]
    assert posts == [
        ("D_kwDOFakeDs09", "bo-testwell", None),
        ("DC_kwDOFakeCm91", "ada-placeholder", None),
        ("DC_kwDOFakeRp91", "ada-placeholder", "DC_kwDOFakeCm91"),
        ("DC_kwDOFakeRp92", "cy-mockley", "DC_kwDOFakeCm91"),  # the replies' next page
        ("DC_kwDOFakeCm92", "deleted account", None)]  # the comments' next page
    posted = [json.loads(r.content) for r in server.requests if r.url.path == "/graphql"]
    assert len(posted) == 4 and all(r.method == "POST" for r in server.requests
                                    if r.url.path == "/graphql")
    assert server.requests[-1].headers["authorization"] == "Bearer test-token-not-real"


def test_since_stops_at_the_first_older_discussion(db, server, fake_time):
    discussions_only(server).on("/graphql", graphql_router())
    items = list(client(server, fake_time).threads(REPO, since="2025-10-01T00:00:00Z",
                                                   discussions=True))
    assert [i.key for i in items] == [f"{REPO}#9", f"{REPO}#8"]
    asked = [json.loads(r.content)["variables"] for r in server.requests
             if r.url.path == "/graphql" and "discussions(" in json.loads(r.content)["query"]]
    # The page holding the first older discussion is the last one asked for.
    assert [a["after"] for a in asked] == [None, "discussions-p1"]


def test_a_rate_limited_answer_waits_for_the_reset_and_asks_again(db, server, fake_time):
    reset = int(fake_time.now) + 300
    limited = response(200, fixture_bytes("github/graphql_rate_limited.json"),
                       rate_headers(remaining=0, reset=reset))
    discussions_only(server).on("/graphql", graphql_router({"discussions": [limited]}))
    items = list(client(server, fake_time).threads(REPO, discussions=True))
    assert len(items) == 3 and fake_time.sleeps == [301.0]


def test_a_secondary_limit_and_server_errors_are_waited_out(db, server, fake_time):
    secondary = response(403, fixture_bytes("github/error_429_secondary.json"),
                         {"retry-after": "30"})
    discussions_only(server).on("/graphql", graphql_router({
        "discussions": [secondary, response(502)],
        "replies": [response(200, b'{"data": {"node": {"rep', rate_headers())]}))
    items = list(client(server, fake_time).threads(REPO, discussions=True))
    assert len(items) == 3
    assert fake_time.sleeps == [30.0, 4.0, 2.0]  # retry-after; 502 (second try); cut short


def test_a_graphql_error_fails_the_import_with_githubs_message(db, server, fake_time):
    discussions_only(server).on("/graphql", graphql_router({
        "discussions": [answer("graphql_error.json")]}))
    with pytest.raises(GitHubError, match="Could not resolve to a Repository"):
        list(client(server, fake_time).threads(REPO, discussions=True))


def test_a_repository_without_discussions_has_none(db, server, fake_time):
    empty = response(200, {"data": {"repository": {"nameWithOwner": REPO, "discussions": {
        "pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": []}}}}, rate_headers())
    discussions_only(server).on("/graphql", graphql_router({"discussions": [empty]}))
    assert list(client(server, fake_time).threads(REPO, discussions=True)) == []


def test_the_import_stores_discussions_and_saves_them_for_an_offline_rerun(
        db, server, fake_time, tmp_path, monkeypatch):
    discussions_only(server).on("/graphql", graphql_router())
    monkeypatch.setitem(imports.CLIENTS, "github", lambda **kw: client(server, fake_time))
    saved = tmp_path / "threads.jsonl"
    counts = imports.run_import({"format": "github", "repository": REPO,
                                 "discussions": True, "save_to": str(saved)})
    assert counts["added"] == 3
    thread = Document.objects.get(key=f"{REPO}#9")
    assert thread.metadata["thread_type"] == "discussion" and thread.posts.count() == 5
    Document.objects.all().delete()
    again = imports.run_import({"format": "github_file", "path": str(saved)})
    assert again["added"] == 3 and Document.objects.get(key=f"{REPO}#9").posts.count() == 5


def test_discussions_must_be_asked_for_with_true_or_false():
    with pytest.raises(ValueError, match="'discussions' is true or false"):
        imports.check_params({"format": "github", "repository": REPO, "discussions": "yes"})

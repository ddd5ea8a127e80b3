"""Saved GitHub API JSON: one bundle per thread file, JSON Lines of bundles, or a directory."""

import json
from datetime import UTC, datetime

import pytest

from ingest.imports import run_import
from ingest.models import Document, Snapshot

from .conftest import FIXTURES, fixture_json

GITHUB = FIXTURES / "github"


def import_path(path, **params):
    errors = []
    counts = run_import({"format": "github_file", "path": str(path), **params},
                        log_error=errors.append)
    return counts, errors


def test_a_saved_issue_becomes_a_thread_with_its_posts_in_order(db):
    counts, errors = import_path(GITHUB / "saved" / "thread_41.json")
    assert (counts["added"], errors) == (1, [])
    thread = Document.objects.get(source="github", key="example-lab/lantern-probes#41")
    assert thread.kind == "thread"
    assert thread.url == "https://github.com/example-lab/lantern-probes/issues/41"
    assert thread.published == datetime(2025, 10, 1, 9, 12, 44, tzinfo=UTC)
    assert [(p.kind, p.author, p.author_role) for p in thread.posts.all()] == [
        ("opening", "ada-placeholder", "MEMBER"),
        ("comment", "example-bot[bot]", "NONE"),
        ("comment", "ada-placeholder", "MEMBER")]


def test_thread_metadata_has_state_labels_and_closing_events(db):
    import_path(GITHUB / "saved" / "thread_41.json")
    metadata = Document.objects.get().metadata
    assert {k: metadata[k] for k in ("repository", "number", "thread_type", "state",
                                     "state_reason", "merged", "labels", "closed_at")} == {
        "repository": "example-lab/lantern-probes", "number": 41, "thread_type": "issue",
        "state": "closed", "state_reason": "completed", "merged": False,
        "labels": ["bug", "area: probes"], "closed_at": "2025-10-03T17:05:10Z"}
    assert [e["event"] for e in metadata["events"]] == [
        "labeled", "cross-referenced", "closed", "some_future_event"]
    assert metadata["events"][1]["source"]["number"] == 42


def test_unknown_timeline_events_are_kept_as_they_came(db):
    import_path(GITHUB / "saved" / "thread_41.json")
    assert Document.objects.get().metadata["events"][-1] == {
        "event": "some_future_event", "actor": "ada-placeholder",
        "created_at": "2025-10-03T17:06:00Z"}


def test_a_pull_request_keeps_its_reviews_review_comments_and_merge(db):
    import_path(GITHUB / "saved" / "thread_42.json")
    thread = Document.objects.get()
    assert thread.metadata["thread_type"] == "pull_request"
    assert thread.metadata["merged"] is True
    assert [(p.kind, p.external_id) for p in thread.posts.all()] == [
        ("opening", "3300000042"), ("review_comment", "2950000001"),
        ("comment", "2900000042"), ("review", "3100000001")]
    reviewed = [e for e in thread.metadata["events"] if e["event"] == "reviewed"]
    assert reviewed[0]["state"] == "approved"
    assert "draft thoughts" not in json.dumps(thread.content())  # a pending review is private


def test_untrusted_bodies_are_stored_as_received(db):
    import_path(GITHUB / "saved" / "thread_41.json")
    opening = Document.objects.get().posts.get(kind="opening")
    assert opening.body == fixture_json("github/issue_41.json")["body"]
    assert "<script>alert('fixture')</script>\r\n" in opening.body


def test_json_lines_and_directories_of_bundles_are_read(db):
    counts, _ = import_path(GITHUB / "threads.jsonl")
    assert counts["added"] == 3
    counts, _ = import_path(GITHUB / "saved")
    assert (counts["added"], counts["unchanged"]) == (0, 2)


def test_a_deleted_account_is_marked_as_one_not_a_user_named_ghost(db):
    import_path(GITHUB / "threads.jsonl")
    thread = Document.objects.get(key="example-lab/lantern-probes#43")
    opening = thread.posts.get()
    assert (opening.author, opening.details) == ("deleted account", {"author_deleted": True})
    assert thread.metadata["author_deleted"] is True
    assert thread.metadata["labels"] == ["question"]  # labels may come as plain strings


def test_reimporting_with_a_new_comment_updates_the_thread_and_keeps_its_snapshot(db, tmp_path):
    import_path(GITHUB / "saved" / "thread_41.json")
    thread = Document.objects.get()
    first = thread.take_snapshot()
    bundle = fixture_json("github/saved/thread_41.json")
    bundle["comments"].append({**bundle["comments"][-1], "id": 2900000003,
                               "created_at": "2025-10-05T08:00:00Z",
                               "body": "Reopening? No: it is fixed."})
    (tmp_path / "thread_41.json").write_text(json.dumps(bundle))
    counts, _ = import_path(tmp_path / "thread_41.json")
    assert counts["updated"] == 1
    assert thread.posts.count() == 4
    assert len(Snapshot.objects.get(pk=first.pk).content["posts"]) == 3


def test_a_saved_github_error_fails_the_import_with_githubs_message(db, tmp_path):
    from ingest.load import SourceFailed

    (tmp_path / "thread_9.json").write_bytes((GITHUB / "error_410_deleted.json").read_bytes())
    with pytest.raises(SourceFailed) as failed:
        import_path(tmp_path / "thread_9.json")
    assert failed.value.error.reason == ("GitHub answered with an error instead of data: "
                                         "This issue was deleted (HTTP 410)")
    assert failed.value.counts["failed"] == 1


def test_a_bare_issue_object_is_a_thread_without_comments(db):
    counts, _ = import_path(GITHUB / "issue_41.json")
    assert counts["added"] == 1
    assert Document.objects.get().posts.count() == 1


@pytest.mark.parametrize("change, reason", [
    (lambda b: b["issue"].pop("number"), "issue has no integer 'number'"),
    (lambda b: b["issue"].update(created_at="yesterday"), "bad date in created_at: 'yesterday'"),
    (lambda b: b.update(comments={"not": "a list"}), "field 'comments' should be a list of objects"),
    (lambda b: b["issue"].update(body="z" * 300_000),
     "field 'issue 3300000041 body' is 300,000 characters, over the 262,144 limit"),
    (lambda b: b.pop("issue"), "missing field 'issue'"),
])
def test_a_broken_bundle_is_a_bad_record_and_the_next_line_still_imports(db, tmp_path, change,
                                                                           reason):
    bundle = fixture_json("github/saved/thread_41.json")
    change(bundle)
    good = fixture_json("github/saved/thread_42.json")
    (tmp_path / "threads.jsonl").write_text(json.dumps(bundle) + "\n" + json.dumps(good) + "\n")
    counts, errors = import_path(tmp_path / "threads.jsonl")
    assert (counts["added"], counts["failed"]) == (1, 1)
    assert errors[0].location == f"{tmp_path / 'threads.jsonl'} line 1"
    assert errors[0].reason == reason


def test_a_truncated_json_file_is_a_bad_record(db, tmp_path):
    text = (GITHUB / "saved" / "thread_41.json").read_text()
    (tmp_path / "thread_41.json").write_text(text[: len(text) // 2])
    counts, errors = import_path(tmp_path / "thread_41.json")
    assert counts["failed"] == 1
    assert errors[0].reason.startswith("malformed JSON")


def test_a_json_array_of_issues_as_gh_api_saves_it_is_read_item_by_item(db):
    counts, errors = import_path(GITHUB / "issues_page1.json")
    assert (counts["added"], errors) == (2, [])
    assert Document.objects.get(key="example-lab/lantern-probes#42").metadata["merged"] is True


def test_who_merged_a_pull_request_and_which_accounts_are_bots_are_kept(db):
    """Issue 40, finding 7: merged_by and each author's account type, as GitHub gives them."""
    import_path(GITHUB / "saved" / "thread_42.json")
    pull = Document.objects.get()
    assert pull.metadata["merged_by"] == "ada-placeholder"
    assert pull.metadata["author_type"] == "User"
    import_path(GITHUB / "saved" / "thread_41.json")
    issue = Document.objects.get(key="example-lab/lantern-probes#41")
    assert "merged_by" not in issue.metadata  # an issue is never merged
    assert [p.details.get("author_type") for p in issue.posts.all()] == ["User", "Bot", "User"]

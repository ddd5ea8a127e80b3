"""GitHub threads as faithful as the REST and GraphQL answers: pull-request branches,
every review with its state, review comments on their file and line with their reply
chain, edits, deleted accounts; the files people have (a folder of raw REST responses,
`gh api --paginate` output, saved GraphQL discussions); a source that failed fails."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingest.imports import run_import
from ingest.load import SourceFailed
from ingest.models import Document
from ingest.sources.github import part_of

from .conftest import FIXTURES

GITHUB = FIXTURES / "github"
FOLDER = GITHUB / "rest_folder"
PR = "example-lab/lantern-probes#44"


def import_path(path):
    errors = []
    counts = run_import({"format": "github_file", "path": str(path)}, log_error=errors.append)
    return counts, errors


@pytest.fixture
def folder(db):
    return import_path(FOLDER)


def test_a_folder_of_raw_rest_responses_is_assembled_into_whole_threads(folder):
    counts, errors = folder
    assert (counts["added"], counts["failed"]) == (2, 1)
    # Parts of a thread that is in no list are named, not stored as a bare thread.
    assert [(e.location.endswith("comments_46.json"), e.reason) for e in errors] == [
        (True, "parts of thread #46, but no issue or pull request #46 in the folder")]
    pr = Document.objects.get(key=PR)
    assert [p.kind for p in pr.posts.all()] == [
        "opening", "comment", "review", "review", "review_comment", "review_comment",
        "review_comment", "review", "review"]
    assert [e["event"] for e in pr.metadata["events"]] == ["closed", "head_ref_deleted"]


def test_a_pull_request_keeps_head_and_base_and_a_deleted_fork_is_marked(folder):
    metadata = Document.objects.get(key=PR).metadata
    assert metadata["head"] == {"label": "cy-mockford:fix/empty-window", "ref": "fix/empty-window",
                                "sha": "7c1d2e3f4a5b60718293a4b5c6d7e8f901a2b3c4",
                                "repo": None, "repo_deleted": True}
    assert metadata["base"]["repo"] == "example-lab/lantern-probes"
    assert (metadata["base"]["ref"], metadata["base"]["repo_deleted"]) == ("main", False)
    assert (metadata["merged"], metadata["merged_at"]) == (False, None)


def test_every_submitted_review_is_kept_with_its_state_empty_bodies_too(folder):
    reviews = Document.objects.get(key=PR).posts.filter(kind="review")
    assert [(r.author, r.details["state"], r.body) for r in reviews] == [
        ("ada-placeholder", "CHANGES_REQUESTED",
         "The guard hides the real bug; please test odd layers."),
        ("bo-testwell", "COMMENTED", ""), ("ada-placeholder", "DISMISSED", ""),
        ("bo-testwell", "APPROVED", "")]
    assert "never sent" not in json.dumps(Document.objects.get(key=PR).content())  # pending


def test_review_comments_keep_file_line_hunk_and_reply_chain(folder):
    first, reply, outdated = Document.objects.get(key=PR).posts.filter(kind="review_comment")
    assert {k: first.details[k] for k in ("path", "line", "original_line", "side", "outdated")} == {
        "path": "src/lantern/echo.py", "line": 10, "original_line": 10, "side": "RIGHT",
        "outdated": False}
    assert first.details["diff_hunk"].startswith("@@ -8,6 +8,9 @@")
    assert "in_reply_to" not in first.details
    assert reply.details["in_reply_to"] == first.external_id
    assert reply.details["updated"] == "2025-11-04T10:05:00Z"  # edited after posting
    assert ("line" not in outdated.details, outdated.details["original_line"],
            outdated.details["outdated"]) == (True, 7, True)
    assert (outdated.author, outdated.details["author_deleted"]) == ("deleted account", True)


def test_comment_edits_keep_their_time_and_unedited_ones_say_nothing(folder):
    comment = Document.objects.get(key=PR).posts.get(kind="comment")
    assert comment.details == {"updated": "2025-11-07T16:20:00Z", "author_type": "User"}
    issue = Document.objects.get(key="example-lab/lantern-probes#45")
    assert issue.posts.get(kind="comment").details == {"author_deleted": True}


def test_the_rest_ghost_and_a_null_user_are_one_deleted_account(folder):
    issue = Document.objects.get(key="example-lab/lantern-probes#45")
    assert [(p.author, p.details.get("author_deleted")) for p in issue.posts.all()] == [
        ("deleted account", True), ("deleted account", True)]
    content = issue.content()
    assert content["author"] == "deleted account" and content["author_deleted"] is True
    assert content["posts"][0]["author_deleted"] is True  # in the snapshot coders read


def test_a_user_really_named_ghost_is_not_taken_for_a_deleted_account(db, tmp_path):
    issue = json.loads((GITHUB / "issue_41.json").read_text())
    issue["user"] = {"login": "ghost", "id": 90000077}
    (tmp_path / "issue_41.json").write_text(json.dumps(issue))
    import_path(tmp_path / "issue_41.json")
    assert Document.objects.get().posts.get().author == "ghost"


def test_reimporting_the_folder_changes_nothing(folder):
    counts, _ = import_path(FOLDER)
    assert (counts["added"], counts["updated"], counts["unchanged"]) == (0, 0, 2)


@pytest.mark.parametrize("name, expected", [
    ("comments_41.json", ("comments", 41)), ("timeline-41.json", ("timeline", 41)),
    ("reviews_42.json", ("reviews", 42)), ("review_comments_42.json", ("review_comments", 42)),
    ("pull_42.json", ("pull", 42)), ("repos/o/r/issues/41/comments.json", ("comments", 41)),
    ("repos/o/r/pulls/42/comments.json", ("review_comments", 42)),
    ("repos/o/r/pulls/42.json", ("pull", 42)), ("issues_page2.json", None), ("issue_41.json", None),
    ("issues.json", None), ("threads.jsonl", None)])
def test_a_files_name_says_which_thread_and_endpoint_it_holds(name, expected):
    assert part_of(name) == expected


def test_the_repositorys_own_saved_pages_and_parts_are_read_as_a_folder(db, tmp_path):
    """The recorded API answers of the client tests, saved as files: three whole threads."""
    for name in ("issues_page1.json", "issues_page2.json", "comments_41.json", "comments_42.json",
                 "timeline_41.json", "timeline_42.json", "timeline_43.json", "pull_42.json",
                 "reviews_42.json", "review_comments_42.json"):
        (tmp_path / name).write_bytes((GITHUB / name).read_bytes())
    counts, errors = import_path(tmp_path)
    assert (counts["added"], errors) == (3, [])
    pr = Document.objects.get(key="example-lab/lantern-probes#42")
    assert [p.kind for p in pr.posts.all()] == ["opening", "review_comment", "comment", "review"]
    assert pr.metadata["merged"] is True and pr.metadata["head"]["repo"] == "bo-testwell/lantern-probes"


@pytest.mark.parametrize("layout", ["back_to_back", "slurp", "one_array", "objects"])
def test_gh_api_paginate_output_in_every_shape_is_read(db, tmp_path, layout):
    pages = [json.loads((GITHUB / f"issues_page{n}.json").read_text()) for n in (1, 2)]
    text = {"back_to_back": "".join(json.dumps(p, indent=2) for p in pages),
            "slurp": json.dumps(pages),
            "one_array": json.dumps(pages[0] + pages[1]),
            "objects": "\n".join(json.dumps(i) for p in pages for i in p)}[layout]
    (tmp_path / "issues.json").write_text(text)
    counts, errors = import_path(tmp_path / "issues.json")
    assert (counts["added"], errors) == (3, [])


def test_a_broken_item_in_a_paginated_file_is_located_and_ends_only_that_file(db, tmp_path):
    pages = [json.loads((GITHUB / f"issues_page{n}.json").read_text()) for n in (1, 2)]
    text = json.dumps(pages[0]) + json.dumps(pages[1])[:-40]
    (tmp_path / "issues.json").write_text(text)
    counts, errors = import_path(tmp_path / "issues.json")
    assert counts["added"] == 2
    assert [e.location for e in errors] == [f"{tmp_path / 'issues.json'} item 3"]
    assert errors[0].reason.startswith("malformed JSON: ")


def test_saved_graphql_discussions_are_threads_with_comments_replies_and_the_answer(db):
    counts, errors = import_path(GITHUB / "discussions.json")
    assert (counts["added"], errors) == (1, [])
    thread = Document.objects.get(key="example-lab/lantern-probes#7")
    assert thread.url == "https://github.com/example-lab/lantern-probes/discussions/7"
    assert {k: thread.metadata[k] for k in ("thread_type", "state", "category", "answered")} == {
        "thread_type": "discussion", "state": "open", "category": "Q&A", "answered": True}
    posts = list(thread.posts.all())
    assert [(p.kind, p.author) for p in posts] == [
        ("opening", "bo-testwell"), ("comment", "deleted account"), ("comment", "ada-placeholder"),
        ("comment", "ada-placeholder")]
    assert posts[1].details == {"author_deleted": True, "is_answer": False}
    assert posts[2].details == {"reply_to": "DC_kwDOFakeDc01", "updated": "2025-09-21T11:30:00Z",
                                "is_answer": False}
    assert posts[3].details == {"is_answer": True}
    assert thread.content()["posts"][2]["reply_to"] == thread.content()["posts"][1]["id"]


def test_a_saved_graphql_error_fails_the_import_with_githubs_message(db):
    with pytest.raises(SourceFailed, match="Could not resolve to a Repository"):
        import_path(GITHUB / "graphql_error.json")


def test_the_command_exits_non_zero_with_the_sources_message(db, tmp_path):
    (tmp_path / "issues.json").write_bytes((GITHUB / "error_403_forbidden.json").read_bytes())
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("ingest_github", "saved", str(tmp_path / "issues.json"), stdout=out, stderr=err)
    message = json.loads((GITHUB / "error_403_forbidden.json").read_text())["message"]
    assert message in str(failed.value) and "the source failed" in str(failed.value)
    assert out.getvalue().startswith("1 read: 0 added")


def test_a_source_error_among_good_files_keeps_the_good_ones_and_still_fails(db, tmp_path):
    """Partial success stays partial, counted: the threads read are written, then it fails."""
    (tmp_path / "issue_41.json").write_bytes((GITHUB / "issue_41.json").read_bytes())
    (tmp_path / "page_2.json").write_bytes((GITHUB / "error_429_secondary.json").read_bytes())
    with pytest.raises(SourceFailed) as failed:
        import_path(tmp_path)
    assert failed.value.counts["added"] == 1 and Document.objects.count() == 1
    assert "secondary rate limit" in str(failed.value)


def test_a_failed_source_fails_the_ingest_job(db, tmp_path):
    from workbench import jobs
    from workbench.models import Job

    (tmp_path / "issues.json").write_bytes((GITHUB / "error_410_deleted.json").read_bytes())
    job = Job.objects.create(kind="ingest", params={"format": "github_file",
                                                   "path": str(tmp_path / "issues.json")})
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "This issue was deleted (HTTP 410)" in job.error and str(tmp_path) not in job.error

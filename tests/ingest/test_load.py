"""Writing records: upserts on the natural key, whole records, and the study side's hooks."""

import json
from datetime import UTC, datetime

import pytest
from django.db import DatabaseError
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest import load
from ingest.load import import_records
from ingest.models import Document, Post
from ingest.records import Deletion, DocumentRecord, PostRecord, RecordError

WHEN = datetime(2025, 8, 4, 10, tzinfo=UTC)


def paper(n, **fields):
    metadata = {"abstract": f"Invented abstract {n}.", "authors": ["Ann Example"],
                "versions": [{"version": "v1", "created": WHEN.isoformat()}]}
    fields = {"title": f"Invented paper {n}", **fields}
    return DocumentRecord(kind="paper", source="arxiv", key=f"2508.{n:05d}",
                          published=WHEN, updated=WHEN,
                          metadata={**metadata, **fields.pop("metadata", {})},
                          location=f"test line {n}", **fields)


def thread(n, bodies=("Opening words.", "A reply.")):
    posts = [PostRecord(kind="opening" if i == 0 else "comment", external_id=str(100 * n + i),
                        author=f"user{i}", author_role="NONE", created=WHEN, body=body)
             for i, body in enumerate(bodies)]
    return DocumentRecord(kind="thread", source="github", key=f"example-lab/repo#{n}",
                          title=f"Invented thread {n}", published=WHEN, updated=WHEN,
                          metadata={"state": "open"}, posts=posts, location=f"thread {n}")


def test_importing_the_same_records_twice_creates_nothing(db):
    records = [paper(1), paper(2), thread(3)]
    import_records(records)
    counts = import_records([paper(1), paper(2), thread(3)])
    assert (counts["added"], counts["updated"], counts["unchanged"]) == (0, 0, 3)
    assert (Document.objects.count(), Post.objects.count()) == (3, 2)


def test_a_new_comment_updates_the_thread_posts(db):
    import_records([thread(3)])
    counts = import_records([thread(3, ("Opening words.", "A reply.", "A new reply."))])
    assert counts["updated"] == 1
    document = Document.objects.get()
    assert [p.body for p in document.posts.all()] == ["Opening words.", "A reply.", "A new reply."]


def test_an_update_never_changes_an_existing_snapshot(db):
    import_records([thread(3)])
    snapshot = Document.objects.get().take_snapshot()
    import_records([thread(3, ("Opening words, edited.",))])
    snapshot.refresh_from_db()
    assert [p["body"] for p in snapshot.content["posts"]] == ["Opening words.", "A reply."]


def test_a_paper_keeps_the_versions_an_earlier_import_saw(db):
    import_records([paper(1, metadata={"versions": [
        {"version": "v1", "created": "2025-08-04T10:00:00+00:00"},
        {"version": "v2", "created": "2025-09-01T10:00:00+00:00"}]})])
    import_records([paper(1, metadata={"versions": [
        {"version": "v1", "created": "2025-08-04T10:00:00+00:00"},
        {"version": "v3", "created": "2025-10-01T10:00:00+00:00"}]})])
    assert [v["version"] for v in Document.objects.get().metadata["versions"]] == ["v1", "v2", "v3"]


def test_a_record_is_written_whole_or_not_at_all(db, monkeypatch):
    """A database refusal while writing one thread's posts leaves neither the thread nor its posts."""
    create_posts = load._create_posts

    def refuse_boom(documents_and_posts):
        if any(p.body == "boom" for _, posts in documents_and_posts for p in posts):
            raise DatabaseError("invented refusal")
        create_posts(documents_and_posts)

    monkeypatch.setattr(load, "_create_posts", refuse_boom)
    errors = []
    counts = import_records([thread(1), thread(2, ("boom",)), thread(3)], log_error=errors.append)
    assert (counts["added"], counts["failed"]) == (2, 1)
    assert sorted(Document.objects.values_list("key", flat=True)) == [
        "example-lab/repo#1", "example-lab/repo#3"]
    assert Post.objects.count() == 4
    assert errors[0].location == "thread 2"
    assert "invented refusal" in errors[0].reason


def test_a_bad_record_never_aborts_the_run(db):
    errors = []
    counts = import_records([paper(1), RecordError("file line 2", "malformed JSON"), paper(3)],
                            log_error=errors.append)
    assert (counts["read"], counts["added"], counts["failed"]) == (3, 2, 1)
    assert [str(e) for e in errors] == ["file line 2: malformed JSON"]


def test_the_same_key_twice_in_a_batch_is_counted_as_a_duplicate(db):
    counts = import_records([paper(1, title="Earlier"), paper(1, title="Later")])
    assert (counts["added"], counts["duplicates"]) == (1, 1)
    assert Document.objects.get().title == "Later"


def test_the_screen_excludes_records_by_rule_and_writes_none_of_them(db):
    def screen(record):
        return "not_cs" if record.key.endswith("2") else None

    counts = import_records([paper(1), paper(2), paper(12)], screen=screen)
    assert counts["excluded"] == {"not_cs": 2}
    assert list(Document.objects.values_list("key", flat=True)) == ["2508.00001"]


def test_on_batch_receives_each_document_and_its_outcome(db):
    import_records([paper(1), paper(2)])
    batches = []
    import_records([paper(1), paper(2, title="Retitled"), paper(3)], on_batch=batches.append,
                   batch_size=2)
    ids = dict(Document.objects.values_list("key", "id"))
    assert batches == [
        [(ids["2508.00001"], "unchanged"), (ids["2508.00002"], "updated")],
        [(ids["2508.00003"], "added")],
    ]


def test_progress_is_reported_after_each_batch(db):
    seen = []
    import_records([paper(n) for n in range(5)], batch_size=2,
                   progress=lambda counts: seen.append(counts["read"]))
    assert seen == [2, 4, 5]


def test_a_progress_callback_that_raises_stops_after_the_batch_it_wrote(db):
    class Cancelled(Exception):
        pass

    def cancel(counts):
        raise Cancelled

    with pytest.raises(Cancelled):
        import_records([paper(n) for n in range(5)], batch_size=2, progress=cancel)
    assert Document.objects.count() == 2


def test_a_deletion_keeps_the_document_as_a_tombstone(db):
    import_records([paper(1)])
    counts = import_records([Deletion("arxiv", "2508.00001", "2025-09-15"),
                             Deletion("arxiv", "2508.99999", "2025-09-15")])
    # The second names a paper not held here: a deletion, never an unchanged document.
    assert (counts["deleted"], counts["deletions"], counts["unchanged"], counts["added"]) == (
        1, 2, 0, 0)
    document = Document.objects.get()
    assert document.metadata["deleted"] is True
    assert document.metadata["deleted_on"] == "2025-09-15"


def test_nul_bytes_are_dropped_as_postgresql_refuses_them(db):
    import_records([paper(1, title="Nul\x00 title", metadata={"abstract": "a\x00b"})])
    document = Document.objects.get()
    assert (document.title, document.metadata["abstract"]) == ("Nul title", "ab")


def test_a_lone_surrogate_from_a_cut_emoji_becomes_a_replacement_character(db):
    errors = []
    counts = import_records([thread(1, ("Cut emoji \ud83d here.",))], log_error=errors.append)
    assert (counts["added"], errors) == (1, [])
    assert Post.objects.get().body == "Cut emoji \ufffd here."


def test_reimporting_a_record_with_unstorable_text_is_unchanged(db):
    import_records([paper(1, title="Nul\x00 title")])
    counts = import_records([paper(1, title="Nul\x00 title")])
    assert counts["unchanged"] == 1


@pytest.mark.parametrize("change, reason", [
    ({"key": "k" * 201}, "key must be text of 1 to 200 characters"),
    ({"title": "  "}, "missing field 'title'"),
    ({"url": "https://example.org/" + "u" * 500}, "url must be text of 1 to 500 characters"),
    ({"kind": "video"}, "kind 'video' is not paper or thread"),
])
def test_a_record_that_does_not_fit_the_columns_is_a_bad_record(db, change, reason):
    record = paper(1)
    for field, value in change.items():
        setattr(record, field, value)
    errors = []
    import_records([record], log_error=errors.append)
    assert errors[0].reason.startswith(reason)
    assert errors[0].location == "test line 1"
    assert not Document.objects.exists()


def test_a_document_written_meanwhile_by_another_import_is_not_duplicated(db, monkeypatch):
    """Two imports racing: the batch insert hits the unique key, the records are retried one by one."""
    import_records([paper(1)])
    existing = load._existing
    calls = []

    def blind_first_time(items):
        calls.append(len(items))
        return {} if len(calls) == 1 else existing(items)

    monkeypatch.setattr(load, "_existing", blind_first_time)
    counts = import_records([paper(1, title="Retitled meanwhile"), paper(2)])
    assert (counts["added"], counts["updated"], counts["failed"]) == (1, 1, 0)
    assert Document.objects.count() == 2
    assert Document.objects.get(key="2508.00001").title == "Retitled meanwhile"


# The unstorable-text check runs on orjson's encoding of a record's metadata (records.py);
# it must say what the walk over every string says, whatever the value holds.
JSON_TEXT = st.text(alphabet=st.sampled_from(["a", "é", "\x00", "\\", "u", "0", '"', "\ud83d",
                                              "\U0001f600", "\n"]), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_TEXT, inner, max_size=4),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_the_fast_unstorable_check_agrees_with_the_walk(value):
    from ingest.records import _has_unstorable, _walk_unstorable

    assert _has_unstorable(value) == _walk_unstorable(value)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_metadata_is_written_as_json_would_write_it(value):
    from ingest.records import _has_unstorable, json_text

    if _has_unstorable(value):
        return  # replaced before it is written
    assert json.loads(json_text(value)) == json.loads(json.dumps(value))


def test_text_that_only_reads_like_an_escaped_nul_is_stored_as_it_is(db):
    abstract = "a path C:\\u0000 and a number 2**70 = 1180591620717411303424"
    import_records([paper(1, metadata={"abstract": abstract, "big": 2**70})])
    stored = Document.objects.get().metadata
    assert (stored["abstract"], stored["big"]) == (abstract, 2**70)

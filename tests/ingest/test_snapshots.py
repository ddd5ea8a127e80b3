"""Study items keep pointing at the snapshot that was coded."""

from ingest.models import Snapshot
from tests import factories


def test_taking_a_snapshot_of_unchanged_content_reuses_it(db):
    document = factories.thread(1)
    assert document.take_snapshot() == document.take_snapshot()
    assert Snapshot.objects.count() == 1


def test_changed_content_makes_a_new_snapshot_and_the_item_keeps_the_old(alpha, people):
    item = alpha.papers[0]
    factories.code(item, people["cora"])
    document = item.document
    document.metadata["abstract"] = "A revised invented abstract."
    document.save()
    newer = document.take_snapshot()
    item.refresh_from_db()
    assert newer.number == 2
    assert item.snapshot.number == 1
    assert item.snapshot.content["abstract"] == "An invented abstract for paper 0."


def test_thread_snapshot_holds_its_posts_in_order(db):
    document = factories.thread(2, posts=["First words.", "Second words.", "Third words."])
    content = document.take_snapshot().content
    assert [p["body"] for p in content["posts"]] == ["First words.", "Second words.", "Third words."]


def test_a_snapshot_is_frozen(db):
    import pytest

    snapshot = factories.thread(3).take_snapshot()
    snapshot.content = {"title": "tampered"}
    with pytest.raises(ValueError):
        snapshot.save()

"""The submit path's writes built once per process (workbench/prepared.py: Insert, Update, Delete):
what they store is what the ORM stored, signals still fire, and on PostgreSQL they are
prepared on the server like the hot reads (issue 13)."""

from datetime import timedelta

from django.db.models.signals import post_save, pre_delete
from django.utils import timezone

from coding.actions.submit import submit
from coding.labeling import queue
from coding.models import Assignment, Coding, Decision, Item, StoredDisagreement
from tests import factories
from tests.postgresql import on_postgresql, prepared_on_the_server

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
QUOTE = [{"question": "label", "field": "title", "quote": "Invented"}]

def test_a_submission_stores_every_field_of_the_coding_and_the_assignment(alpha, people):
    held = queue.assign(alpha.papers[0], people["cora"])
    held.draft, held.draft_saved_at = {"notes": "half done"}, timezone.now()
    Assignment.objects.filter(pk=held.pk).update(draft=held.draft,
                                                 draft_saved_at=held.draft_saved_at)
    opened = timezone.now() - timedelta(seconds=95)
    coding = submit(held, ANSWERS, notes="  Read twice. ", evidence=QUOTE, unsure=True,
                            started_at=opened)
    stored = Coding.objects.get(pk=coding.pk)
    for field in Coding._meta.concrete_fields:
        assert getattr(stored, field.attname) == getattr(coding, field.attname), field.name
    assert (stored.study_id, stored.revision, stored.phase) == (alpha.pk, 1, "independent")
    assert stored.values == ANSWERS and stored.notes == "Read twice." and stored.unsure
    assert stored.evidence[0]["quote"] == "Invented" and 95 <= stored.seconds_spent < 200
    assert not coding._state.adding and timezone.now() - stored.submitted_at < timedelta(minutes=1)
    held = Assignment.objects.get(pk=held.pk)
    assert held.status == "submitted" and held.finished_at is not None
    assert (held.leased_until, held.draft, held.draft_saved_at) == (None, None, None)
    assert held.first_seconds_spent == stored.seconds_spent

    # A revision keeps the first revision's seconds on the assignment (the queue page's).
    revision = submit(held, {**ANSWERS, "size_b": 13}, started_at=opened - timedelta(hours=1))
    assert revision.revision == 2 and revision.seconds_spent > 3600
    assert Assignment.objects.get(pk=held.pk).first_seconds_spent == stored.seconds_spent


def test_a_model_suggestion_served_before_submitting_makes_the_coding_assisted(alpha, people):
    held = queue.assign(alpha.papers[0], people["cora"])
    held.exposures.create(kind="suggestion", question_key="label", shown={"value": "analysis"})
    assert submit(held, ANSWERS).assisted
    other = queue.assign(alpha.papers[1], people["cora"])
    assert not submit(other, ANSWERS).assisted


def test_the_decisions_and_disagreements_of_a_completed_item_are_stored_with_their_keys(
        alpha, people):
    """Several rows in one INSERT (PostgreSQL's UNNEST form), a column of nulls among them."""
    item = alpha.papers[0]
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    factories.code(item, people["cora"])
    decisions = {d.question_key: d for d in Decision.objects.filter(item=item)}
    assert {"size_b", "failures", "code_released"} <= set(decisions)
    assert all(d.pk and d.decided_by_id is None and d.method == "unanimous"
               for d in decisions.values())
    rows = {row.question_key: row for row in StoredDisagreement.objects.filter(item=item)}
    assert set(rows) == {"label", "scope"}  # scope: not applicable to one of them
    assert rows["label"].groups and not rows["label"].decided


def test_listeners_of_save_and_delete_signals_still_hear_the_submission(alpha, people):
    heard = []

    def saved(sender, instance, created, **kwargs):
        heard.append(("saved", sender.__name__, created, instance.pk))

    def deleting(sender, instance, **kwargs):
        heard.append(("deleting", sender.__name__, instance.question_key))

    item = alpha.papers[0]
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    factories.code(item, people["cora"])
    post_save.connect(saved, sender=Coding)
    pre_delete.connect(deleting, sender=StoredDisagreement)
    try:
        revision = factories.code(item, people["cora"], label="rl_method", scope="general")
    finally:
        post_save.disconnect(saved, sender=Coding)
        pre_delete.disconnect(deleting, sender=StoredDisagreement)
    assert ("saved", "Coding", True, revision.pk) in heard
    assert ("deleting", "StoredDisagreement", "label") in heard


def test_raising_the_target_clears_the_stored_disagreements_at_the_next_submission(
        alpha, people):
    item = alpha.papers[0]
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    factories.code(item, people["cora"])
    assert StoredDisagreement.objects.filter(item=item).exists()
    Item.objects.filter(pk=item.pk).update(target=3)
    factories.code(item, people["cora"], size_b=13)  # a revision: the item is not complete
    assert not StoredDisagreement.objects.filter(item=item).exists()


@on_postgresql
def test_the_submissions_writes_are_prepared_once_per_connection(alpha, people):
    for paper in alpha.papers[:2]:
        for name in ("cora", "cyril"):
            submit(queue.assign(paper, people[name]), ANSWERS)
    assert queue.next_item(alpha, people["cora"]).item_id == alpha.papers[2].pk
    for fragment in ('INSERT INTO "coding_coding"', 'INSERT INTO "coding_assignment"',
                     'UPDATE "coding_assignment" SET "status" = \'submitted\'',
                     'UPDATE "coding_item" SET "taken"', 'INSERT INTO "coding_decision"'):
        assert len(prepared_on_the_server(fragment)) == 1, fragment

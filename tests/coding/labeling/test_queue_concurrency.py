"""Twenty coders at once against PostgreSQL: the queue's invariants hold under contention."""

import threading

import pytest
from django.db import connection, connections
from django.db.models import Count, Q

from coding.actions.submit import record_coding
from coding.labeling import queue
from coding.models import Assignment, Item, Role
from tests import factories

CODERS = 20
ITEMS = 30
ANSWERS = {"label": "analysis", "size_b": 1, "failures": ["none"], "code_released": "no"}

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="row locks with SKIP LOCKED are what this checks; SQLite serialises writers instead",
)


def code_until_done(study, coder, errors):
    try:
        while (assignment := queue.next_item(study, coder)) is not None:
            record_coding(assignment, ANSWERS)
    except Exception as error:  # reported to the main thread, which fails the test
        errors.append(error)
    finally:
        connections.close_all()


def test_twenty_coders_at_once_never_overfill_or_repeat_an_item(transactional_db):
    study = factories.study("Crowded study", overlap=2)
    codebook = factories.codebook(study)
    for n in range(ITEMS):
        factories.paper_item(study, codebook, n)
    coders = [factories.user(f"coder{n:02d}") for n in range(CODERS)]
    for coder in coders:
        factories.member(study, coder, Role.CODER)

    errors = []
    threads = [threading.Thread(target=code_until_done, args=(study, c, errors)) for c in coders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors

    per_item = Item.objects.filter(study=study).annotate(
        submitted=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
        held=Count("assignments", filter=Q(assignments__status=Assignment.Status.ACTIVE)))
    assert [(i.submitted, i.held, i.taken) for i in per_item] == [(2, 0, 2)] * ITEMS
    assert Assignment.objects.filter(item__study=study).count() == 2 * ITEMS
    pairs = Assignment.objects.values_list("item_id", "coder_id")
    assert len(set(pairs)) == len(pairs)


def test_a_submission_of_a_lapsed_item_and_the_same_coders_next_never_deadlock(
        transactional_db):
    """Issue 36: a coder's submit on a released assignment, against the same coder's
    parallel next: the submission locked its assignment, then waited for the item's row
    (queue.retake); next locked the item, then waited for the assignment to take the lapsed
    lease up again; PostgreSQL ended one of them (deadlock detected)."""
    from coding.labeling import codings

    study = factories.study("Lapsed study", overlap=2)
    codebook = factories.codebook(study)
    item = factories.paper_item(study, codebook, 1)
    cora = factories.user("cora")
    factories.member(study, cora, Role.CODER)
    held = queue.assign(item, cora)
    queue.release([(held.pk, item.pk)])  # the lease lapsed
    held.refresh_from_db()
    assert held.status == Assignment.Status.RELEASED

    locked, errors, took = threading.Event(), [], []

    def submit():
        """The submission's order: the assignment's row, then (retake) the item's."""
        from django.db import transaction
        try:
            with transaction.atomic():
                codings._LOCK_ASSIGNMENT.first(assignment=held.pk)
                locked.set()
                threading.Event().wait(0.5)  # next, meanwhile, locks the item
                took.append(queue.retake(held, status=Assignment.Status.SUBMITTED))
        except Exception as error:
            errors.append(error)
        finally:
            connections.close_all()

    def next_item():
        locked.wait(5)
        try:
            took.append(queue.next_item(study, cora))
        except Exception as error:
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit), threading.Thread(target=next_item)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors  # no DeadlockDetected
    held.refresh_from_db()
    item.refresh_from_db()
    assert held.status == Assignment.Status.SUBMITTED and item.taken == 1

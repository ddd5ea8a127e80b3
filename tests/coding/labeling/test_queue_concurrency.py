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

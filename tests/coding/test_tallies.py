"""The counts PostgreSQL keeps as items and assignments are written (coding/models/
tallies.py) equal the counts of the tables after every kind of write: the queue's
assignments, submissions, skips and releases, exclusions and restores, rounds, the
reliability sample, a new overlap, a bulk insert, deleting items and studies; and the
pages that show them read them in a fixed number of queries."""

import random

import pytest
from django.db import connection
from django.utils import timezone

from coding.actions.submit import submit
from coding.codebooks.versions import create_codebook
from coding.labeling import queue
from coding.adjudication import decisions as adjudication
from coding.models import Assignment, Item, Membership, StoredDisagreement, Study, Tally
from coding.models.tallies import live_tallies, tallies
from ingest.models import Document

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
kept = pytest.mark.skipif(connection.vendor != "postgresql",
                          reason="PostgreSQL keeps the counts by triggers; SQLite counts them")


def add_papers(study, n, start=0):
    book = study.codebooks.get(applies_to="paper")
    for i in range(start, start + n):
        document = Document.objects.create(kind="paper", source="tally", key=f"t{study.pk}.{i}",
                                           title=f"Invented paper {i}")
        queue.add_item(study, document, book)


def add_thread(study, n):
    book = study.codebooks.filter(applies_to="thread").first() or study.codebooks.first()
    document = Document.objects.create(kind="thread", source="tally", key=f"th{study.pk}.{n}",
                                       title=f"Invented thread {n}")
    queue.add_item(study, document, book)


def people_olive(study):
    return Membership.objects.get(study=study, role="owner").user


def step(study, rng, coders):
    """One write a study meets, chosen at random."""
    coder = rng.choice(coders)
    choice = rng.choices(range(11), weights=[1, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1])[0]
    items = list(Item.objects.filter(study=study).order_by("pk"))
    active = list(Assignment.objects.filter(study=study, status="active"))
    if choice == 0 or not items:
        add_papers(study, rng.randint(1, 3), start=rng.randrange(10**6))
    elif choice == 1:
        found = queue.next_item(study, coder)
        if found and rng.random() < 0.7:  # coders differ on the size now and then
            submit(found, {**ANSWERS, "size_b": rng.choice([7, 7, 13])})
    elif choice == 2 and active:
        queue.skip(rng.choice(active), "not a paper on this")
    elif choice == 3 and active:
        queue.release([(a.pk, a.item_id) for a in active[:1]])
    elif choice == 4:
        Item.objects.filter(pk=rng.choice(items).pk).update(deleted_at=timezone.now())
    elif choice == 5:
        Item.objects.filter(pk=rng.choice(items).pk).update(deleted_at=None)
    elif choice == 6:
        Item.objects.filter(pk=rng.choice(items).pk).update(
            in_reliability_sample=rng.random() < 0.5)
        queue.sync_targets(study)
    elif choice == 7:
        study.overlap = rng.choice([1, 2, 3])
        study.save(update_fields=["overlap"])
        queue.sync_targets(study)
    elif choice == 8:
        add_thread(study, rng.randrange(10**6))
    elif choice == 9:
        open_ = StoredDisagreement.objects.filter(study=study, decided=False).first()
        if open_:
            adjudication.decide(open_.item, open_.question_key, 7, people_olive(study),
                                rationale="the table says 7")
    elif choice == 10:
        adjudication.rebuild_disagreements(study, batch=3)


@kept
@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2])
def test_the_kept_counts_equal_the_tables_after_every_write(alpha, people, seed):
    rng = random.Random(seed)
    coders = [people["cora"], people["cyril"]]
    assert tallies(alpha) == live_tallies(alpha)  # the items the fixture made
    for coder, size in zip(coders, (7, 13)):  # a disagreement to start from
        submit(queue.assign(alpha.papers[0], coder), {**ANSWERS, "size_b": size})
    assert StoredDisagreement.objects.filter(study=alpha).exists()
    for n in range(100):
        step(alpha, rng, coders)
        assert tallies(alpha) == live_tallies(alpha), f"after step {n}"


@kept
@pytest.mark.django_db
def test_counts_are_folded_without_losing_one(alpha, people, monkeypatch):
    from coding.models import tallies as module

    monkeypatch.setattr(module, "COMPACT_AT", 5)
    add_papers(alpha, 12)
    before = Tally.objects.filter(study_id=alpha.pk).count()
    assert tallies(alpha) == live_tallies(alpha)  # read, then folded
    after = Tally.objects.filter(study_id=alpha.pk).count()
    assert after < before and after == len(live_tallies(alpha))
    add_papers(alpha, 2, start=100)
    assert tallies(alpha) == live_tallies(alpha)


@kept
@pytest.mark.django_db
def test_a_deleted_study_leaves_no_count_behind():
    study = Study.objects.create(name="Short-lived", slug="short-lived")
    create_codebook(study, {"name": "B", "applies_to": "paper", "questions": [
        {"key": "kind", "kind": "single", "text": "Kind?", "options": [{"value": "method"}]}]})
    add_papers(study, 3)
    assert tallies(study)
    pk = study.pk
    study.items.all().delete()  # as the admin must: a codebook protects the items
    study.delete()
    assert not Tally.objects.filter(study_id=pk).exists()


@pytest.mark.django_db
def test_the_counts_name_what_the_pages_show(alpha, people):
    add_papers(alpha, 4)
    add_thread(alpha, 1)
    found = queue.next_item(alpha, people["cora"])
    submit(found, ANSWERS)
    counts = tallies(alpha)
    papers = Item.objects.filter(study=alpha, document__kind="paper").count()
    assert counts["items:main:paper"] == papers
    assert counts["items:main:thread"] == 1
    assert counts[f"work:{people['cora'].pk}:submitted"] == 1
    assert sum(n for name, n in counts.items() if name.startswith("taken:")) == papers + 1


@kept
@pytest.mark.django_db
def test_the_command_finds_a_wrong_count_and_puts_it_right(alpha):
    from io import StringIO

    from django.core.management import call_command

    add_papers(alpha, 2)
    Tally.objects.create(study_id=alpha.pk, name="items:main:paper", n=5)  # a count gone wrong
    out = StringIO()
    call_command("recount_tallies", alpha.slug, stdout=out)
    assert "items:main:paper: kept" in out.getvalue() and "--fix" in out.getvalue()
    call_command("recount_tallies", alpha.slug, "--fix", stdout=out)
    assert tallies(alpha) == live_tallies(alpha)
    out = StringIO()
    call_command("recount_tallies", alpha.slug, stdout=out)
    assert "every kept count equals the tables'" in out.getvalue()

"""Disagreements as stored state (issue 13): kept by the transactions that record codings and
decisions, equal to a rebuild from scratch, read paged, at a cost that does not grow."""

import random
from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coding.actions.submit import submit
from coding.adjudication import decisions as adjudication
from coding.labeling import queue
from coding.models import Assignment, Coding, Item, Role, StoredDisagreement
from ingest.models import Document, Snapshot, content_sha256
from tests import factories
from tests.conftest import page_queries as queries

ANSWERS = {"size_b": 7, "failures": ["none"], "code_released": "no"}

FIELDS = ("item_id", "question_key", "position", "groups", "group_count", "coder_ids",
          "answer_tokens", "last_coded", "in_discussion", "decision_id", "decided")


def stored(study):
    return sorted(StoredDisagreement.objects.filter(study=study).values_list(*FIELDS))


def random_answers(rng):
    label = rng.choice(["analysis", "rl_method"])
    answers = {"label": label, "size_b": rng.choice([7, 13, "not_reported"]),
               "failures": rng.choice([["none"], ["entropy_collapse"], ["entropy_collapse", "none"]]),
               "code_released": rng.choice(["yes", "no"])}
    if label == "rl_method":
        answers["scope"] = rng.choice(["general", "embedded"])
    return answers


@pytest.mark.parametrize("seed", range(8))
def test_the_maintained_disagreements_equal_a_rebuild_after_any_sequence(alpha, people, seed):
    """Random submits, revisions, discussions and decisions, in any order: what the
    transactions kept is what a rebuild from codings and decisions finds."""
    rng = random.Random(seed)
    alpha.discussion_step = seed % 2 == 0
    alpha.overlap = 3 if seed % 3 == 0 else 2
    alpha.save()
    queue.sync_targets(alpha)
    for name in ("otto", "vera"):
        factories.member(alpha, people[name], Role.CODER)
    for n in range(3, 9):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    coders = [people[name] for name in ("cora", "cyril", "otto", "vera")]
    for _ in range(70):
        step = rng.random()
        if step < 0.55:
            coder = rng.choice(coders)
            held = queue.next_item(alpha, coder)
            if held is not None:
                submit(held, random_answers(rng))
        elif step < 0.8:
            done = list(Assignment.objects.filter(study=alpha, status="submitted"))
            if done:
                submit(rng.choice(done), random_answers(rng))
        else:
            rows = adjudication.disagreements(alpha, status="all")
            if rows:
                row = rng.choice(rows)
                deciders = [u for u in (people["ada"], people["olive"])
                            if adjudication.can_decide(row.item, u)]
                value = row.groups[0][0]
                if deciders and value not in (adjudication.MISSING, adjudication.NOT_APPLICABLE):
                    try:
                        adjudication.decide(row.item, row.question.key, value, deciders[0])
                    except ValidationError as refused:  # its parent's decision rules it out
                        assert "does not apply" in str(refused)
    kept = stored(alpha)
    assert kept, "the walk should leave some disagreements"
    call_command("rebuild_disagreements", alpha.slug, stdout=open("/dev/null", "w"))
    rebuilt = stored(alpha)
    # Decisions are compared by id; a rebuild reads the same current decisions.
    assert kept == rebuilt


@pytest.fixture
def split(alpha, people):
    """Six papers on which cora and cyril differ on the label (and so scope, size differs on
    half)."""
    for n in range(3, 6):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    items = list(alpha.items.order_by("pk"))
    for n, item in enumerate(items):
        factories.code(item, people["cora"], label="analysis")
        factories.code(item, people["cyril"], label="rl_method", scope="general",
                       size_b=7 if n % 2 else 13)
    return alpha


def test_the_review_list_pages_by_keyset_without_overlap_or_gaps(split, people, client_for):
    ada = client_for(people["ada"])
    everything = [(r.item.pk, r.question.key) for r in adjudication.disagreements(split)]
    assert len(everything) == 6 * 2 + 3  # label and scope everywhere, size on half
    seen, url = [], f"/api/studies/{split.slug}/disagreements/?limit=4&order=oldest"
    while url:
        page = ada.get(url).json()
        assert page["count"] == len(everything)
        seen += [(row["item"], row["question"]) for row in page["results"]]
        url = page["next"]
    assert sorted(seen) == sorted(everything) and len(seen) == len(set(seen))


def test_the_review_page_shows_a_page_and_a_link_to_the_next(split, people, client_for,
                                                              monkeypatch):
    from coding.adjudication import views as review

    monkeypatch.setattr(review, "PAGE_SIZE", 5)
    ada = client_for(people["ada"])
    first = ada.get(f"/studies/{split.slug}/review/").content.decode()
    assert "15 disagreements" in first and "5 on this page" in first and 'rel="next"' in first
    assert ada.get(f"/studies/{split.slug}/review/?after=garbage").status_code == 400


def test_a_decision_moves_its_row_from_open_to_decided(split, people):
    row = adjudication.disagreements(split, question="label")[0]
    adjudication.decide(row.item, "label", "analysis", people["ada"])
    assert (row.item.pk, "label") not in [(r.item.pk, r.question.key)
                                          for r in adjudication.disagreements(split)]
    decided = adjudication.disagreements(split, status="decided")
    # label = analysis rules scope out: that disagreement closes too, as not applicable.
    assert [(r.item.pk, r.question.key, r.decision.value, r.decision.method)
            for r in decided] == [(row.item.pk, "label", "analysis", "adjudicated"),
                                  (row.item.pk, "scope", None, "not_applicable")]


def test_filters_by_coders_and_category_read_the_stored_rows(split, people):
    assert len(adjudication.disagreements(split, coders=["cora", "cyril"])) == 15
    assert adjudication.disagreements(split, coders=["cora", "olive"]) == []
    assert {r.question.key for r in adjudication.disagreements(split, category="13")} == {"size_b"}


def grow(study, people, count):
    """`count` more papers on which cora and cyril differ, written in bulk, then the stored
    disagreements rebuilt (as after a bulk load)."""
    version = study.paper_codebook.current_version()
    start = Document.objects.count()
    documents = Document.objects.bulk_create([
        Document(kind=Document.Kind.PAPER, source="grow", key=f"2611.{start + n:05d}",
                 title=f"Invented paper {start + n}", url="",
                 published=datetime(2025, 1, 1, tzinfo=UTC), metadata={"abstract": "Invented."})
        for n in range(count)])
    snapshots = Snapshot.objects.bulk_create([
        Snapshot(document=d, number=1, content=content, sha256=content_sha256(content))
        for d in documents for content in [d.content()]])
    items = Item.objects.bulk_create([
        Item(study=study, document=d, snapshot=s, codebook=study.paper_codebook, taken=2,
             **queue.new_item_fields(study, d)) for d, s in zip(documents, snapshots)])
    assignments = Assignment.objects.bulk_create([
        Assignment(item=item, study_id=study.pk, coder=coder, status=Assignment.Status.SUBMITTED)
        for item in items for coder in (people["cora"], people["cyril"])])
    Coding.objects.bulk_create([
        Coding(assignment=a, revision=1, codebook_version=version,
               values={**ANSWERS, "label": "analysis"} if n % 2 else
               {**ANSWERS, "label": "rl_method", "scope": "general"})
        for n, a in enumerate(assignments)])
    adjudication.rebuild_disagreements(study)


REVIEW_LISTS = ["/studies/{slug}/review/", "/studies/{slug}/review/?order=question&status=all",
                "/api/studies/{slug}/disagreements/", "/api/studies/{slug}/disagreements/?order=oldest"]


def test_the_review_list_costs_the_same_queries_at_50_and_500_items(alpha, people, client_for):
    grow(alpha, people, 47)
    ada = client_for(people["ada"])
    urls = [path.format(slug=alpha.slug) for path in REVIEW_LISTS]
    small = [queries(ada, url) for url in urls]
    grow(alpha, people, 450)
    assert adjudication.disagreement_query(alpha).count() == 2 * 497
    assert [queries(ada, url) for url in urls] == small
    # A deep page costs what the first does.
    deep = ada.get(urls[2] + "?limit=100").json()
    for _ in range(5):
        deep = ada.get(deep["next"]).json()
    assert queries(ada, deep["next"]) == small[2]


def test_deciding_on_the_review_page_opens_the_next_open_item(split, people, client_for):
    ada = client_for(people["ada"])
    first = adjudication.disagreements(split)[0].item
    response = ada.post(f"/studies/{split.slug}/review/{first.pk}/",
                        {"d-label": '"analysis"', "partial": "1"})
    assert response.status_code == 302
    following = int(response["Location"].rstrip("/").split("/")[-1])
    open_items = {r.item.pk for r in adjudication.disagreements(split)}
    assert following != first.pk and following in open_items


def test_raising_the_overlap_takes_incomplete_items_off_the_review_list(
        split, django_capture_on_commit_callbacks):
    assert adjudication.disagreements(split)
    split.overlap = 3
    split.save()
    # What the settings page and the API do after a change; the rebuild is a job that
    # starts once the change commits.
    with django_capture_on_commit_callbacks(execute=True):
        queue.sync_targets(split)
    assert adjudication.disagreements(split) == []
    split.overlap = 2
    split.save()
    with django_capture_on_commit_callbacks(execute=True):
        queue.sync_targets(split)
    assert len(adjudication.disagreements(split)) == 15


def submit_statements(study, people):
    """Statements of one submission that completes a disagreeing item (cora after cyril)."""
    item = factories.paper_item(study, study.paper_codebook, 5000 + study.items.count())
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    held = queue.assign(item, people["cora"])
    with CaptureQueriesContext(connection) as captured:
        submit(held, {**ANSWERS, "label": "analysis"},
               evidence=[{"question": "label", "field": "title", "quote": "Invented"}])
    return len(captured)


def test_a_submission_costs_the_same_statements_at_50_and_500_items(alpha, people):
    """The coder's hot path settles the item and keeps its disagreements in the same
    transaction: what it costs depends on the item, never on the study."""
    grow(alpha, people, 47)
    small = submit_statements(alpha, people)
    grow(alpha, people, 450)
    assert submit_statements(alpha, people) == small <= 22

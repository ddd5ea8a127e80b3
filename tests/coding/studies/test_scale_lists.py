"""The codings and assignments lists page by keyset, and an overlap change rebuilds the
stored disagreements as a job (issue 13): walks that never skip or repeat a row while
codings keep coming in, the old ?offset= still answering, query counts that do not grow
with the study or the depth of the page, migration 0014's backfill, and the rebuild job
seen from the pages while it waits and once it is done."""

import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from coding.access import audit
from coding.actions.submit import record_coding
from coding.adjudication import decisions as adjudication
from coding.labeling import queue
from coding.models import Assignment, Coding, Role, StoredDisagreement
from tests import factories
from tests.test_query_counts import LARGE, SMALL, build_study
from workbench import paging
from workbench.models import Job

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}


def add_codings(study, people, n, start):
    """n new items of the study, each coded by cora: n new codings, submitted now."""
    made = []
    for k in range(n):
        item = factories.paper_item(study, study.paper_codebook, start + k)
        made.append(factories.code(item, people["cora"]).pk)
    return made


@pytest.fixture
def coded(alpha, people):
    """Alpha with 23 codings by cora and cyril, some of them second revisions."""
    for n in range(3, 12):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    for n, item in enumerate(alpha.items.order_by("pk")):
        factories.code(item, people["cora"])
        if n % 3:
            factories.code(item, people["cyril"], label="rl_method", scope="general")
        if n % 4 == 0:
            factories.code(item, people["cora"], size_b=13)  # a second revision
    return alpha


# --- the codings API ------------------------------------------------------------------

def test_the_codings_api_walks_by_keyset_without_gaps_or_repeats_while_codings_arrive(
        coded, people, client_for):
    olive = client_for(people["olive"])
    before = set(Coding.objects.filter(study=coded).values_list("pk", flat=True))
    seen, url, added, step = [], f"/api/studies/{coded.slug}/codings/?limit=4", [], 0
    while url:
        assert "offset=" not in url
        body = olive.get(url).json()
        assert body["previous"] is None and body["count_exact"] is True
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
        # Others submit between two pages: in id order they come after the walk.
        step += 1
        if step < 4:
            added += add_codings(coded, people, 2, start=100 + 10 * step)
    assert len(seen) == len(set(seen)), "a row came twice"
    assert seen == sorted(seen)
    assert before <= set(seen), "a row that existed when the walk began was skipped"
    assert set(seen) <= before | set(added)
    assert set(added) <= set(seen)  # arrivals land after the walk's place, so it reaches them


def test_the_codings_api_still_answers_offset_and_pages_other_orders(coded, people, client_for):
    olive = client_for(people["olive"])
    everything = list(Coding.objects.filter(study=coded).order_by("id").values_list("pk", flat=True))
    body = olive.get(f"/api/studies/{coded.slug}/codings/?limit=5&offset=5").json()
    assert [row["id"] for row in body["results"]] == everything[5:10]
    assert "offset=10" in body["next"] and "after=" not in body["next"]
    assert body["previous"] and "offset" not in body["previous"]  # back to the first page
    assert body["count"] == len(everything) and body["count_exact"] is True
    # Newest first, by keyset too.
    seen, url = [], f"/api/studies/{coded.slug}/codings/?limit=7&ordering=-id"
    while url:
        body = olive.get(url).json()
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
    assert seen == everything[::-1]
    # By submission time (ties broken by id), by keyset on both.
    seen, url = [], f"/api/studies/{coded.slug}/codings/?limit=6&ordering=submitted_at"
    while url:
        body = olive.get(url).json()
        assert "after=" in (body["next"] or "after=")
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
    assert sorted(seen) == everything and len(seen) == len(set(seen))


@pytest.mark.parametrize("token", ["nonsense", "WyJ4Il0", "WzEsMl0", "WyIyMDI2LTAxLTAxIl0",
                                   "e30", "WzEuNV0", "W3RydWVd",
                                   "WzEwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDBd"])  # [10**30]
def test_a_token_that_is_not_one_is_a_located_400(coded, people, client_for, token):
    olive = client_for(people["olive"])
    for url in (f"/api/studies/{coded.slug}/codings/?after={token}",
                f"/api/studies/{coded.slug}/codings/?after={token}&ordering=submitted_at",
                f"/api/studies/{coded.slug}/assignments/?after={token}"):
        response = olive.get(url)
        assert response.status_code == 400, url
        assert "after" in response.json()


def test_a_coder_walks_only_their_own_codings(coded, people, client_for):
    cora = client_for(people["cora"])
    mine = set(Coding.objects.filter(study=coded, assignment__coder=people["cora"])
               .values_list("pk", flat=True))
    seen, url = [], f"/api/studies/{coded.slug}/codings/?limit=3"
    while url:
        body = cora.get(url).json()
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
    assert sorted(seen) == sorted(mine)


def test_the_assignments_api_walks_by_keyset_too(coded, people, client_for):
    olive = client_for(people["olive"])
    everything = list(Assignment.objects.filter(study=coded).order_by("id")
                      .values_list("pk", flat=True))
    seen, url = [], f"/api/studies/{coded.slug}/assignments/?limit=4"
    while url:
        body = olive.get(url).json()
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
    assert seen == everything
    # finished_at may be empty, so that order pages by offset, as before.
    body = olive.get(f"/api/studies/{coded.slug}/assignments/?limit=4&ordering=finished_at").json()
    assert "offset=4" in body["next"]


def test_a_long_list_says_its_count_is_a_lower_bound(coded, people, client_for, monkeypatch):
    monkeypatch.setattr(paging, "COUNT_LIMIT", 5)
    monkeypatch.setattr(paging.Paging, "count_limit", 5)
    olive = client_for(people["olive"])
    body = olive.get(f"/api/studies/{coded.slug}/codings/?limit=3").json()
    assert body["count"] == 6 and body["count_exact"] is False
    page = olive.get(f"/studies/{coded.slug}/codings/").content.decode()
    assert "More than 5 submitted revisions" in page


def test_the_review_list_and_its_apis_count_up_to_the_bound(coded, people, client_for,
                                                              monkeypatch):
    """The review page, the disagreements API and the audit API count the stored rows up
    to the bound, and say when a count is a lower bound; under it they count exactly."""
    disagreements = StoredDisagreement.objects.filter(study=coded, decided=False).count()
    assert disagreements > 3
    for name in ("vera", "otto", "ada", "cora"):
        audit.record(people["olive"], coded, "member.role", name, user=name, role="viewer")
    olive = client_for(people["olive"])
    api = {"review": f"/api/studies/{coded.slug}/disagreements/?limit=2",
           "audit": f"/api/studies/{coded.slug}/audit/?limit=2"}
    exact = {name: olive.get(url).json() for name, url in api.items()}
    assert exact["review"]["count"] == disagreements and exact["review"]["count_exact"] is True
    assert exact["audit"]["count"] >= 4 and exact["audit"]["count_exact"] is True
    page = olive.get(f"/studies/{coded.slug}/review/").content.decode()
    assert f"{disagreements} disagreements between independent codings" in page

    monkeypatch.setattr(paging, "COUNT_LIMIT", 3)
    if connection.vendor == "postgresql":
        # Unfiltered, the review list's count is kept by the database (coding/models/
        # tallies.py): exact past any bound. Counted as a filtered list is from here on.
        body = olive.get(api["review"]).json()
        assert (body["count"], body["count_exact"]) == (disagreements, True)
        monkeypatch.setattr(adjudication, "kept", lambda: False)
    for name, url in api.items():
        body = olive.get(url).json()
        assert (body["count"], body["count_exact"]) == (4, False), name
        assert len(body["results"]) == 2 and body["next"], name
    page = olive.get(f"/studies/{coded.slug}/review/").content.decode()
    assert "More than 3 disagreements between independent codings" in page


# --- the codings page -----------------------------------------------------------------

def older_link(html):
    found = re.search(r'href="\?after=([^"]+)" rel="next"', html)
    return found and found.group(1)


def row_keys(html):
    return re.findall(r"<td><a href=\"[^\"]+\"><code>([^<]+)</code>", html)


def test_the_codings_page_walks_newest_first_by_keyset_while_codings_arrive(
        coded, people, client_for):
    olive = client_for(people["olive"])
    total = Coding.objects.filter(study=coded).count()
    url = f"/studies/{coded.slug}/codings/"
    first = olive.get(url).content.decode()
    assert f"{total} submitted revisions, newest first" in first
    assert "Page 1 of" not in first and "← Newest" not in first
    rows, html, pages = [], first, 0
    ids = list(Coding.objects.filter(study=coded).order_by("-id")
               .values_list("assignment__item__document__key", flat=True))
    while True:
        rows += row_keys(html)
        token = older_link(html)
        if not token:
            break
        pages += 1
        add_codings(coded, people, 1, start=300 + pages)  # newer: never on a later page
        html = olive.get(f"{url}?after={token}").content.decode()
        assert "← Newest" in html
    assert pages == 0 or rows == ids  # fewer than 50: one page
    assert rows == ids[:len(rows)] and len(rows) == total


def test_the_codings_page_pages_past_fifty(alpha, people, client_for):
    add_codings(alpha, people, 55, start=3)
    olive = client_for(people["olive"])
    url = f"/studies/{alpha.slug}/codings/"
    html = olive.get(url).content.decode()
    newest = list(Coding.objects.filter(study=alpha).order_by("-id")
                  .values_list("assignment__item__document__key", flat=True))
    assert row_keys(html) == newest[:50]
    html = olive.get(f"{url}?after={older_link(html)}").content.decode()
    assert row_keys(html) == newest[50:] and older_link(html) is None
    # A token edited by hand: the first page, not an error.
    assert row_keys(olive.get(f"{url}?after=garbage").content.decode()) == newest[:50]


# --- query counts: not with the study's size, nor with the page's depth -------------------

@pytest.fixture
def studies(db):
    return {size: build_study(size) for size in (SMALL, LARGE)}


def deep(client, url, steps):
    """The URL `steps` pages into a keyset list, by its own next links."""
    for _ in range(steps):
        response = client.get(url)
        if "/api/" in url:
            url = response.json()["next"]
        else:
            url = url.split("?")[0] + "?after=" + older_link(response.content.decode())
    return url


@pytest.mark.parametrize("who, url, steps", [
    ("olive", "/studies/{s}/codings/", 0), ("olive", "/studies/{s}/codings/", 1),
    ("cora", "/studies/{s}/codings/", 0),
    ("olive", "/api/studies/{s}/codings/?limit=20", 0),
    ("olive", "/api/studies/{s}/codings/?limit=20", 2),
    ("cora", "/api/studies/{s}/codings/?limit=20", 1),
    ("olive", "/api/studies/{s}/assignments/?limit=20", 2),
    ("olive", "/studies/{s}/queue/", 0),
    ("ada", "/studies/{s}/review/", 0),
])
def test_keyset_pages_take_the_same_queries_at_any_size_and_depth(studies, client, who, url,
                                                                   steps):
    counts = {}
    for size, study in studies.items():
        client.force_login(study.people[who])
        start = deep(client, url.format(s=study.slug), steps)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(start)
        assert response.status_code == 200
        counts[size] = len(queries)
    assert counts[SMALL] == counts[LARGE], counts


# --- migration 0014's backfill ---------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_migration_0014_copies_first_seconds_and_studies(people):
    alpha = factories.study("Backfilled", owner=people["olive"])
    for name in ("cora", "cyril"):
        factories.member(alpha, people[name], Role.CODER)
    codebook = factories.codebook(alpha)
    other = factories.study("Other", owner=people["olive"])
    factories.member(other, people["cora"], Role.CODER)
    other_codebook = factories.codebook(other)
    for study, book in ((alpha, codebook), (other, other_codebook)):
        for n in range(4):
            item = factories.paper_item(study, book, n + (10 if study is other else 0))
            held = queue.assign(item, people["cora"])
            record_coding(held, ANSWERS, seconds_spent=30 + n)
            if n % 2:
                record_coding(held, {**ANSWERS, "size_b": 13}, seconds_spent=999)  # not first
            if n == 3:
                queue.skip(queue.assign(item, people["cyril"]), "Off topic")  # no coding
    unspent = queue.assign(factories.paper_item(alpha, codebook, 50), people["cyril"])
    record_coding(unspent, ANSWERS)  # no seconds given
    expected_seconds = dict(Assignment.objects.values_list("pk", "first_seconds_spent"))
    expected_study = dict(Coding.objects.values_list("pk", "study_id"))
    assert sorted(set(expected_seconds.values()), key=str) == [30, 31, 32, 33, None]
    assert set(expected_study.values()) == {alpha.pk, other.pk}

    executor = MigrationExecutor(connection)
    executor.migrate([("coding", "0013_study_setup")])
    try:
        executor = MigrationExecutor(connection)
        executor.migrate([("coding", "0014_scale_lists")])
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert dict(Assignment.objects.values_list("pk", "first_seconds_spent")) == expected_seconds
    assert dict(Coding.objects.values_list("pk", "study_id")) == expected_study


def test_codings_written_in_bulk_get_their_study(coded):
    assignment = Assignment.objects.filter(study=coded, status="submitted").first()
    made = Coding.objects.bulk_create([Coding(assignment=assignment, revision=9,
                                              codebook_version=coded.paper_codebook
                                              .current_version(), values=ANSWERS)])
    assert Coding.objects.get(pk=made[0].pk).study_id == coded.pk


# --- an overlap change rebuilds the disagreements as a job --------------------------------

@pytest.fixture
def split(alpha, people):
    """Six papers on which cora and cyril differ on the label."""
    for n in range(3, 6):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    for item in alpha.items.order_by("pk"):
        factories.code(item, people["cora"], label="analysis")
        factories.code(item, people["cyril"], label="rl_method", scope="general")
    return alpha


def stored(study):
    return sorted(StoredDisagreement.objects.filter(study=study)
                  .values_list("item_id", "question_key", "group_count", "decided"))


def test_an_overlap_change_rebuilds_the_disagreements_in_a_job_the_owner_can_follow(
        split, people, client_for, django_capture_on_commit_callbacks):
    olive = client_for(people["olive"])
    before = stored(split)
    assert before
    with django_capture_on_commit_callbacks(execute=True):
        response = olive.patch(f"/api/studies/{split.slug}/", {"overlap": 3},
                               content_type="application/json")
    assert response.status_code == 200
    job = Job.objects.get(kind="rebuild_disagreements")
    assert job.status == Job.Status.DONE and job.created_by == people["olive"]
    assert job.params == {"study": split.pk} and job.done == job.total == split.items.count()
    assert job.result == {"study": split.slug, "disagreements": 0}
    assert stored(split) == []  # no item has the three codings it now needs
    assert olive.get(f"/api/jobs/{job.pk}/").status_code == 200
    # Back to two: every disagreement returns, as a rebuild from scratch finds them.
    with django_capture_on_commit_callbacks(execute=True):
        olive.patch(f"/api/studies/{split.slug}/", {"overlap": 2}, content_type="application/json")
    assert stored(split) == before
    assert queue.rebuilding(split) is None
    assert "being rebuilt" not in olive.get(f"/studies/{split.slug}/review/").content.decode()


def test_while_the_rebuild_waits_the_pages_say_so(split, people, client_for):
    olive = client_for(people["olive"])
    # Without its commit (the test's transaction stays open) the job stays queued.
    response = olive.patch(f"/api/studies/{split.slug}/", {"overlap": 3},
                           content_type="application/json")
    assert response.status_code == 200
    job = queue.rebuilding(split)
    assert job is not None and job.status == Job.Status.QUEUED
    for url in (f"/studies/{split.slug}/review/", f"/studies/{split.slug}/queue/"):
        page = olive.get(url).content.decode()
        assert "The disagreements are being rebuilt" in page, url
        assert f"/jobs/{job.pk}/" in page  # olive started it: she can follow it
    ada = client_for(people["ada"])
    page = ada.get(f"/studies/{split.slug}/review/").content.decode()
    assert "being rebuilt" in page and f"/jobs/{job.pk}/" not in page
    # A second change while it waits adds no second job: the queued one reads the targets.
    olive = client_for(people["olive"])
    olive.patch(f"/api/studies/{split.slug}/", {"overlap": 2}, content_type="application/json")
    assert Job.objects.filter(kind="rebuild_disagreements").count() == 1
    # Another study's pages say nothing.
    assert queue.rebuilding(factories.study("Quiet", owner=people["olive"])) is None


def test_the_rebuild_keeps_what_a_submission_during_it_settled(
        split, people, django_capture_on_commit_callbacks):
    """A coding recorded between two batches of a rebuild is in the result: batches lock
    their items, and each one reads codings as they are then."""
    items = list(split.items.order_by("pk"))
    extra = factories.paper_item(split, split.paper_codebook, 99)
    factories.code(extra, people["cora"], label="analysis")
    calls = []

    def progress(done, total):
        if not calls:  # after the first batch: cyril completes the last item, disagreeing
            factories.code(extra, people["cyril"], label="rl_method", scope="general")
        calls.append((done, total))

    made = adjudication.rebuild_disagreements(split, batch=2, progress=progress)
    assert calls[-1] == (len(items) + 1, len(items) + 1) and len(calls) == 4
    assert extra.pk in {row[0] for row in stored(split)}
    assert made == StoredDisagreement.objects.filter(study=split).count()
    maintained = stored(split)
    adjudication.rebuild_disagreements(split)
    assert stored(split) == maintained

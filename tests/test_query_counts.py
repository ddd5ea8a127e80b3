"""Query counts do not grow with the study (issue 13).

Every page and API list a coder, adjudicator, owner or viewer uses is requested in
a study of 50 items and in one of 500, built alike in bulk, and must take the same
number of queries in both; the owner's pages the same with 3 coders and with 6. A
count that grows with the study is an N+1 (a query per row or per coder) or a page
that loads every row; at 100,000 items either is what makes a page slow. Counts,
never wall-clock times: times belong to benchmarks/, counts can be held exactly.

The summaries that now count from grouped queries and `Item.taken` are checked
against the same figures counted row by row, and the API's count, which stops at
`Paging.count_limit` rows, against what it promises (`count_exact`).

(The review list, the disagreements API and the review item page are rebuilt on
stored disagreements and tested with them, not here.)
"""

import random
import statistics
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models import Count, F, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from coding import queue
from coding.models import Assignment, Coding, Decision, Item, Membership, Role
from coding.overview import study_overview
from ingest.models import Document, Snapshot, content_sha256
from tests import factories
from workbench.paging import Paging

SMALL, LARGE = 50, 500
CODERS = ("cora", "cyril", "otto")


ROLES = {"olive": Role.OWNER, "cora": Role.CODER, "cyril": Role.CODER, "otto": Role.CODER,
         "ada": Role.ADJUDICATOR, "vera": Role.VIEWER}


def build_study(size, coders=CODERS):
    """A study of `size` main items coded in pairs by the coders (overlap 2), with a
    calibration item, a few skips and second revisions, a deleted item, decisions, and
    an item held by each coder (one of them also submitted by another); every row
    written in bulk, `Item.taken` as the queue keeps it. Its people are its own (named
    after the study), so each one's home page lists this study alone."""
    tag = f"{size}-{len(coders)}"
    names = {**{k: v for k, v in ROLES.items() if v != Role.CODER},
             **{name: Role.CODER for name in coders}}
    people = {name: factories.user(f"{name}-{tag}") for name in names}
    study = factories.study(f"Counted study {tag}", owner=people["olive"], overlap=2,
                            show_feedback=True, feedback_shows_reasons=True)
    for name, role in names.items():
        factories.member(study, people[name], role)
    codebook = factories.codebook(study)
    version = codebook.current_version()
    documents = Document.objects.bulk_create([
        Document(kind=Document.Kind.THREAD if n % 10 == 3 else Document.Kind.PAPER,
                 source="counted", key=f"{tag}.{n:05d}", title=f"Invented paper {n} of {tag}",
                 url="", published=datetime(2025, 1 + n % 12, 1 + n % 28, tzinfo=UTC),
                 metadata={"abstract": f"Invented abstract {n}.", "authors": ["Ann Example"]})
        for n in range(size + 1)])
    snapshots = Snapshot.objects.bulk_create([
        Snapshot(document=d, number=1, content=content, sha256=content_sha256(content))
        for d in documents for content in [d.content()]])
    calibration = documents[0]
    items = Item.objects.bulk_create([
        Item(study=study, document=d, snapshot=s, codebook=codebook,
             **queue.new_item_fields(study, d, Item.Round.CALIBRATION if d is calibration
                                     else Item.Round.MAIN),
             reference_values={"label": "analysis", "code_released": "no"}
             if d is calibration else None)
        for d, s in zip(documents, snapshots)])
    calibration_item, *main_items = items
    coders = [people[name] for name in coders]
    now = timezone.now()
    # The last tenth of the items is left for the queue; each coder holds one of them.
    coded = main_items[:size - size // 10]
    held = main_items[size - size // 10:][:len(coders)]
    rows = [(calibration_item, coder, "submitted") for coder in coders]
    for n, item in enumerate(coded):
        pair = [coders[n % len(coders)], coders[(n + 1) % len(coders)]]
        rows += [(item, coder, "submitted") for coder in pair]
        if n % 7 == 0:
            rows.append((item, coders[(n + 2) % len(coders)], "skipped"))
    rows += [(item, coder, "active") for item, coder in zip(held, coders)]
    rows.append((held[0], coders[1], "submitted"))  # full, but one coder is still on it
    assignments = Assignment.objects.bulk_create([
        Assignment(item=item, study_id=item.study_id, coder=coder, status=status,
                   opened_at=now - timedelta(minutes=5),
                   leased_until=now + timedelta(hours=1) if status == "active" else None,
                   finished_at=now if status != "active" else None,
                   skip_reason="Off topic" if status == "skipped" else "")
        for item, coder, status in rows])
    taken = {}
    for a in assignments:
        if a.status in ("active", "submitted"):
            taken[a.item_id] = taken.get(a.item_id, 0) + 1
    for item in items:
        item.taken = taken.get(item.pk, 0)
    Item.objects.bulk_update(items, ["taken"])
    Item.objects.filter(pk=coded[5].pk).update(deleted_at=now)
    codings = []
    for n, a in enumerate(x for x in assignments if x.status == "submitted"):
        values = ({"label": "analysis", "size_b": n % 70, "failures": ["none"],
                   "code_released": "yes" if n % 3 else "no"} if n % 4 else
                  {"label": "rl_method", "scope": "general", "size_b": "not_reported",
                   "failures": ["entropy_collapse"], "code_released": "no"})
        codings.append(Coding(assignment=a, revision=1, codebook_version=version,
                              seconds_spent=None if n % 13 == 5 else 30 + n * 7 % 90,
                              values=values))
        if n % 11 == 0:
            codings.append(Coding(assignment=a, revision=2, codebook_version=version,
                                  seconds_spent=10 + n % 40, values=values, notes="Revised."))
    Coding.objects.bulk_create(codings)
    # As record_coding keeps it: the first revision's seconds, on the assignment.
    for a in assignments:
        a.first_seconds_spent = next((c.seconds_spent for c in codings
                                      if c.assignment_id == a.pk and c.revision == 1), None)
    Assignment.objects.bulk_update(assignments, ["first_seconds_spent"])
    Decision.objects.bulk_create([
        Decision(item=item, question_key=key, revision=1, value=value,
                 method=Decision.Method.ADJUDICATED if n % 2 else Decision.Method.UNANIMOUS,
                 decided_by=people["ada"] if n % 2 else None,
                 rationale="Invented reason." if n % 2 else "")
        for n, item in enumerate(coded)
        for key, value in (("label", "rl_method"), ("code_released", "yes"))])
    study.people = people
    study.held = {a.coder_id: a for a in assignments if a.status == "active"}
    return study


@pytest.fixture
def studies(db):
    return {size: build_study(size) for size in (SMALL, LARGE)}


def count_queries(client, method, url):
    with CaptureQueriesContext(connection) as queries:
        response = getattr(client, method)(url)
    assert response.status_code in (200, 201, 302), (url, response.status_code)
    return len(queries), queries


# (who, method, url with {s} for the study's slug and {held} for the user's held assignment)
ENDPOINTS = [
    *[(who, "get", "/") for who in ("olive", "cora", "ada", "vera")],
    *[(who, "get", "/studies/{s}/") for who in ("olive", "cora", "ada", "vera")],
    ("olive", "get", "/studies/{s}/queue/"),
    *[(who, "get", "/studies/{s}/codings/") for who in ("olive", "cora", "ada")],
    *[(who, "get", "/studies/{s}/agreement/") for who in ("olive", "ada", "vera")],
    *[(who, "get", "/studies/{s}/export/") for who in ("olive", "ada", "vera")],
    ("cora", "get", "/studies/{s}/code/"),
    ("cora", "get", "/studies/{s}/code/{held}/"),
    ("cora", "get", "/studies/{s}/feedback/"),
    *[(who, "get", "/jobs/") for who in ("olive", "cora")],
    *[(who, "get", "/api/studies/") for who in ("olive", "cora")],
    *[(who, "get", "/api/studies/{s}/") for who in ("olive", "cora")],
    *[(who, "get", "/api/studies/{s}/codings/") for who in ("olive", "cora", "ada")],
    ("olive", "get", "/api/studies/{s}/codings/?offset=100&limit=20"),
    *[(who, "get", "/api/studies/{s}/items/") for who in ("olive", "ada", "vera")],
    *[(who, "get", "/api/studies/{s}/assignments/") for who in ("olive", "cora", "ada")],
    *[(who, "get", "/api/studies/{s}/members/") for who in ("olive", "cora", "vera")],
    *[(who, "get", "/api/studies/{s}/codebooks/") for who in ("olive", "cora", "vera")],
    *[(who, "get", "/api/studies/{s}/decisions/") for who in ("olive", "ada", "vera")],
    ("olive", "get", "/api/studies/{s}/decisions/?history=1"),
    ("olive", "get", "/api/studies/{s}/queue/"),
    ("cora", "get", "/api/studies/{s}/assignments/{held}/"),
    ("cora", "post", "/api/studies/{s}/next/"),
    ("cora", "get", "/api/studies/{s}/feedback/"),
    *[(who, "get", "/api/jobs/") for who in ("olive", "cora")],
    ("olive", "get", "/studies/{s}/settings/"),
    *[(who, "get", "/studies/{s}/codebooks/{codebook}/") for who in ("olive", "cora")],
    ("cora", "get", "/studies/{s}/code/previous/"),
    ("olive", "get", "/studies/{s}/import/"),
    ("olive", "get", "/studies/{s}/catalog/"),
    ("olive", "get", "/api/studies/{s}/catalog/"),
    ("olive", "get", "/api/studies/{s}/screening/"),
    *[(who, "get", "/api/studies/{s}/agreement/") for who in ("olive", "vera")],
    ("olive", "get", "/api/studies/{s}/agreement/history/"),
    ("olive", "get", "/api/tokens/"),
]


def request_counts(studies, client, who, method, url, warm=True):
    counts = {}
    for key, study in studies.items():
        person = study.people[who]
        client.force_login(person)
        held = study.held.get(person.pk)
        target = url.format(s=study.slug, held=held.pk if held else "",
                            codebook=study.codebooks.get().pk)
        if warm:
            count_queries(client, method, target)  # sessions, caches, content types
        counts[key], queries = count_queries(client, method, target)
        counts[key, "sql"] = [q["sql"] for q in queries.captured_queries]
    return counts


def assert_same(counts, first, second):
    assert counts[first] == counts[second], (
        f"{counts[first]} queries at {first}, {counts[second]} at {second}", counts[second, "sql"])


@pytest.mark.parametrize("who,method,url", ENDPOINTS)
def test_queries_do_not_grow_with_the_study(studies, client, who, method, url):
    assert_same(request_counts(studies, client, who, method, url), SMALL, LARGE)


def test_reserving_the_next_item_does_not_grow_with_the_study(studies, client):
    """A coder who holds nothing yet: next/ releases lapsed leases, finds the round and
    locks an item (calibration first, then the main round). An item waits at the
    newcomer's own place in the queue order in both studies: past it the walk wraps
    round, one query more whatever the study's size."""
    for study in studies.values():
        newcomer = factories.user(f"nina-{study.slug}")
        factories.member(study, newcomer, Role.CODER)
        study.people["nina"] = newcomer
        # Warm what the first request of a process fills (content types, the session) with a
        # request that reserves nothing, so both sizes are counted warm.
        client.force_login(newcomer)
        client.get(f"/api/studies/{study.slug}/")
        calibration = Item.objects.get(study=study, round="calibration")
        waiting = Item.objects.filter(study=study, round="main", taken=0).order_by("pk").first()
        Item.objects.filter(pk__in=[calibration.pk, waiting.pk]).update(
            random_key=queue.coder_offset(study, newcomer))
    assert_same(request_counts(studies, client, "nina", "post", "/api/studies/{s}/next/",
                               warm=False), SMALL, LARGE)  # the calibration item
    Membership.objects.filter(user__username__startswith="nina-").update(calibration_waived=True)
    Assignment.objects.filter(coder__username__startswith="nina-").update(
        status="submitted", leased_until=None)
    assert_same(request_counts(studies, client, "nina", "post", "/api/studies/{s}/next/",
                               warm=False), SMALL, LARGE)  # a main-round item


MORE_CODERS = ("cora", "cyril", "otto", "cody", "cleo", "cary")


@pytest.mark.parametrize("who,url", [("olive", "/studies/{s}/queue/"),
                                     ("olive", "/api/studies/{s}/queue/"),
                                     ("olive", "/"), ("olive", "/studies/{s}/")])
def test_the_owners_pages_do_not_grow_with_the_coders(db, client, who, url):
    """The queue page once ran a query per coder (their calibration score)."""
    studies = {"3 coders": build_study(SMALL), "6 coders": build_study(SMALL, MORE_CODERS)}
    assert_same(request_counts(studies, client, who, "get", url), "3 coders", "6 coders")


# --- the summaries count what counting row by row counts --------------------------

def summary_row_by_row(study):
    """coding.queue.queue_summary as it was before issue 13: a query per coder and per
    round, submitted assignments counted item by item, every seconds value in Python."""
    coders = (Membership.objects.filter(study=study, role=Role.CODER, deleted_at__isnull=True)
              .select_related("user").order_by("user__username"))
    counts = {row["coder"]: row for row in Assignment.objects.filter(item__study=study)
              .values("coder").annotate(
                  done=Count("pk", filter=Q(status="submitted")),
                  skipped=Count("pk", filter=Q(status="skipped")),
                  active=Count("pk", filter=Q(status="active")))}
    seconds = {}
    for coder_id, spent in (Coding.objects.filter(assignment__item__study=study, revision=1)
                            .exclude(seconds_spent=None)
                            .values_list("assignment__coder", "seconds_spent")):
        seconds.setdefault(coder_id, []).append(spent)
    per_coder = [{
        "coder": m.user, "calibration_waived": m.calibration_waived,
        **{k: counts.get(m.user_id, {}).get(k, 0) for k in ("done", "skipped", "active")},
        "median_seconds": statistics.median(seconds[m.user_id]) if seconds.get(m.user_id) else None,
        "calibration_score": queue.calibration_score(study, m.user),
    } for m in coders]
    rounds = []
    for round in ("calibration", "main"):
        items = Item.objects.alive().filter(study=study, round=round).annotate(
            submitted=Count("assignments", filter=Q(assignments__status="submitted")))
        wanted = F("target") if round == "main" else len(per_coder)
        row = {"round": round, "items": items.count(),
               "in_sample": items.filter(in_reliability_sample=True).count(),
               "complete": items.filter(submitted__gte=wanted).count()}
        row["left"] = row["items"] - row["complete"]
        rounds.append(row)
    return {"coders": per_coder, "rounds": rounds}


def card_row_by_row(study):
    """The pool and progress of coding.overview.study_overview before issue 13."""
    pool = study.items.alive().aggregate(
        papers=Count("id", filter=Q(document__kind="paper")),
        threads=Count("id", filter=Q(document__kind="thread")))
    coded = (Assignment.objects.filter(item__study=study, status="submitted")
             .values("item").annotate(n=Count("id")))
    return {"pool": pool, "progress": {"coded_once": coded.count(),
                                        "fully_coded": coded.filter(n__gte=study.overlap).count(),
                                        "overlap": study.overlap}}


@pytest.mark.parametrize("coders", [CODERS, MORE_CODERS])
def test_the_queue_summary_and_the_study_card_count_what_counting_row_by_row_counts(db, coders):
    study = build_study(SMALL, coders)
    # An item whose target was lowered below the coders it has, and a deleted one held now.
    lowered = Item.objects.filter(study=study, round="main", taken=2).order_by("pk")[3]
    Item.objects.filter(pk=lowered.pk).update(target=1)
    held = next(iter(study.held.values()))
    Item.objects.filter(pk=held.item_id).update(deleted_at=timezone.now())
    summary = queue.queue_summary(study)
    assert summary == summary_row_by_row(study)
    assert {row["median_seconds"] for row in summary["coders"]} - {None}
    card = study_overview(study, study.people["olive"])
    assert {k: card[k] for k in ("pool", "progress")} == card_row_by_row(study)
    assert card["pool"]["threads"] and card["progress"]["fully_coded"]


@pytest.mark.parametrize("seed", range(20))
def test_the_median_of_a_histogram_is_the_median_of_its_values(seed):
    rng = random.Random(seed)
    values = [rng.randint(1, 12) for _ in range(rng.randint(1, 30))]
    histogram = {}
    for value in values:
        histogram[value] = histogram.get(value, 0) + 1
    found = queue.median(histogram)
    assert found == statistics.median(values) and type(found) is type(statistics.median(values))
    assert queue.median({}) is None


# --- paging: the count stops at Paging.count_limit rows and says so ---------------

@pytest.fixture
def nine_items(alpha):
    for n in range(3, 9):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    return alpha


def test_a_list_longer_than_the_count_limit_has_a_lower_bound_and_says_so(
        nine_items, people, client_for, monkeypatch):
    monkeypatch.setattr(Paging, "count_limit", 5)
    api = client_for(people["olive"])
    url = f"/api/studies/{nine_items.slug}/items/"
    first = api.get(url, {"limit": 2}).json()
    assert (first["count"], first["count_exact"]) == (6, False) and first["next"]
    deep = api.get(url, {"limit": 2, "offset": 6}).json()
    assert (deep["count"], deep["count_exact"]) == (9, False) and deep["next"]
    last = api.get(url, {"limit": 2, "offset": 8}).json()
    assert (last["count"], last["count_exact"], last["next"]) == (9, True, None)
    beyond = api.get(url, {"limit": 2, "offset": 20}).json()
    assert (beyond["count"], beyond["count_exact"], beyond["next"], beyond["results"]) \
        == (6, False, None, [])
    seen, page = [], first
    while True:
        seen += [row["id"] for row in page["results"]]
        if not page["next"]:
            break
        page = api.get(page["next"]).json()
    assert len(seen) == len(set(seen)) == 9


def test_a_list_within_the_count_limit_is_counted_exactly(nine_items, people, client_for):
    api = client_for(people["olive"])
    url = f"/api/studies/{nine_items.slug}/items/"
    for offset in (0, 4, 8, 30):
        page = api.get(url, {"limit": 4, "offset": offset}).json()
        assert (page["count"], page["count_exact"]) == (9, True)
    assert api.get(url, {"kind": "thread"}).json() | {"results": None} == {
        "count": 0, "count_exact": True, "next": None, "previous": None, "results": None}


def test_the_schema_documents_the_count_exact_flag(people, client_for):
    schema = client_for(people["olive"]).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    page = schema["components"]["schemas"]["PaginatedItemList"]
    assert page["required"] == ["count", "count_exact", "results"]
    assert page["properties"]["count_exact"]["type"] == "boolean"

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

Every read route is counted here or by a test beside its feature, or says why it needs
none (`test_every_read_route_has_a_query_count_test`): a new page fails until it is.
The review list and the disagreements API read stored disagreements and are counted
with them (tests/coding/adjudication/test_stored_disagreements.py).
"""

import copy
import random
import re
import statistics
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.db import connection, transaction
from django.db.models import Count, F, Q
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import resolve
from django.utils import timezone

from coding.actions.submit import submit
from coding.labeling import queue
from coding.models import Assignment, Coding, Decision, Item, Membership, Role
from coding.studies.overview import study_overview
from ingest.models import Document, Snapshot, content_sha256
from tests import factories
from tests.test_permission_matrix import TABLE, routes
from workbench.models import Job
from workbench.paging import Paging
from workbench.tokens import create_token

SMALL, LARGE = 50, 500
CODERS = ("cora", "cyril", "otto")
MORE_CODERS = ("cora", "cyril", "otto", "cody", "cleo", "cary")


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
    # For the item pages (a coded item with decisions), a job's and a token's page.
    study.reviewed = coded[1]
    study.job = Job.objects.create(kind="agreement", created_by=people["olive"],
                                   params={"study": study.pk, "study_slug": study.slug})
    study.token = create_token(people["olive"], "counted")[0]
    return study


@pytest.fixture(scope="module")
def built_studies(django_db_setup, django_db_blocker):
    """The counted studies (50 and 500 items with 3 coders, 50 with 6), built once for the
    module inside a transaction rolled back at its end. Each test runs in a savepoint
    within it (pytest-django's `db`), so whatever one test's requests change is undone
    before the next, as if each had built its own."""
    with (django_db_blocker.unblock(),
          override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]),
          transaction.atomic()):
        yield {SMALL: build_study(SMALL), LARGE: build_study(LARGE),
               MORE_CODERS: build_study(SMALL, MORE_CODERS)}
        transaction.set_rollback(True)


@pytest.fixture
def built(built_studies, db):
    """The module's studies as this test's own objects: what a test sets on one (a person
    added to `people`) is gone for the next."""
    def own(study):
        study = copy.copy(study)
        study.people = dict(study.people)
        return study

    return {key: own(study) for key, study in built_studies.items()}


@pytest.fixture
def studies(built):
    return {size: built[size] for size in (SMALL, LARGE)}


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
    ("olive", "get", "/api/tokens/{token}/"),
    ("olive", "get", "/account/tokens/"),
    *[(who, "get", "/jobs/{job}/") for who in ("olive",)],
    ("olive", "get", "/api/jobs/{job}/"),
    ("olive", "get", "/studies/{s}/audit/"),
    ("olive", "get", "/api/studies/{s}/audit/"),
    ("olive", "get", "/api/studies/{s}/invites/"),
    *[(who, "get", "/studies/{s}/review/{item}/") for who in ("olive", "ada")],
    ("ada", "get", "/api/studies/{s}/items/{item}/review/"),
    *[(who, "get", "/studies/{s}/codebooks/{codebook}/v1/") for who in ("olive", "cora")],
    ("cora", "get", "/studies/{s}/codebooks/{codebook}/v1/file/yaml/"),
    ("cora", "get", "/api/studies/{s}/codebooks/{codebook}/versions/1/"),
    ("cora", "get", "/api/studies/{s}/codebooks/{codebook}/versions/1/file/"),
    ("olive", "get", "/studies/{s}/codebooks/import/"),
    *[(who, "get", "/api/studies/{s}/raters/") for who in ("olive", "vera")],
    ("olive", "get", "/api/studies/{s}/comparisons/"),
]

# Read routes whose query counts a test beside their feature holds (file::test), with
# data only that feature builds (stored disagreements, a catalog, raters, calibration).
COUNTED_BESIDE = {
    **dict.fromkeys([
        "studies/<slug:slug>/review/", "api/studies/<slug:slug>/disagreements/"],
        "tests/coding/adjudication/test_stored_disagreements.py::"
        "test_the_review_list_costs_the_same_queries_at_50_and_500_items"),
    **dict.fromkeys([
        "studies/<slug:slug>/calibration/", "api/studies/<slug:slug>/calibration/"],
        "tests/coding/labeling/test_calibration_setup.py::"
        "test_the_page_costs_the_same_queries_at_50_and_500_items"),
    **dict.fromkeys([
        "studies/<slug:slug>/catalog/edit/", "api/studies/<slug:slug>/methods/",
        "api/studies/<slug:slug>/frameworks/"],
        "tests/coding/catalog/test_catalog_edit.py::"
        "test_the_edit_page_and_lists_cost_the_same_queries_whatever_the_catalog_size"),
    **dict.fromkeys([
        "studies/<slug:slug>/codebooks/", "studies/<slug:slug>/codebooks/<int:codebook_id>/edit/",
        "studies/<slug:slug>/codebooks/<int:codebook_id>/publish/"],
        "tests/coding/codebooks/test_codebook_editor.py::"
        "test_editor_pages_do_not_query_more_with_more_items"),
    "studies/<slug:slug>/members/":
        "tests/coding/studies/test_members.py::test_the_members_page_costs_the_same_with_more_members",
    **dict.fromkeys([
        "studies/<slug:slug>/raters/", "studies/<slug:slug>/comparisons/<int:comparison_id>/"],
        "tests/coding/raters/test_raters.py::test_rater_pages_cost_the_same_queries_at_any_size"),
    **dict.fromkeys([
        "studies/<slug:slug>/raters/<slug:name>/model/",
        "studies/<slug:slug>/raters/<slug:name>/validation/",
        "api/studies/<slug:slug>/raters/<slug:name>/model/",
        "api/studies/<slug:slug>/raters/<slug:name>/model/preview/",
        "api/studies/<slug:slug>/raters/<slug:name>/model/runs/",
        "api/studies/<slug:slug>/raters/<slug:name>/model/runs/<int:run_id>/",
        "api/studies/<slug:slug>/raters/<slug:name>/validation/"],
        "tests/coding/model_raters/test_doors.py::"
        "test_model_rater_pages_and_lists_cost_the_same_queries_at_any_size"),
    "api/studies/<slug:slug>/assisted-rounds/": "tests/coding/labeling/test_assisted_rounds.py::"
        "test_the_assisted_rounds_list_costs_the_same_queries_at_any_size",
    **dict.fromkeys([
        "studies/<slug:slug>/frameworks/<int:framework_id>/",
        "api/studies/<slug:slug>/frameworks/<int:framework_id>/"],
        "tests/coding/catalog/test_landings_history.py::"
        "test_catalog_and_framework_pages_take_the_same_queries_for_3_and_12_methods"),
    "api/account/language/":
        "tests/coding/accounts/test_languages.py::test_the_api_reads_and_sets_your_own_language",
    **dict.fromkeys([
        "studies/<slug:slug>/inclusion/", "api/studies/<slug:slug>/inclusion/"],
        "tests/coding/inclusion/test_inclusion.py::test_page_api_and_command_agree"),
    **dict.fromkeys([
        "studies/<slug:slug>/items/", "studies/<slug:slug>/items/<int:item_id>/",
        "api/studies/<slug:slug>/items/<int:item_id>/"],
        "tests/coding/items/test_item_browser.py::"
        "test_the_item_pages_cost_the_same_queries_at_any_size"),
    **dict.fromkeys([
        "studies/<slug:slug>/screening-round/", "api/studies/<slug:slug>/screening-round/"],
        "tests/coding/screening/test_screening_pages.py::"
        "test_the_page_and_api_cost_the_same_queries_at_any_size"),
    "api/studies/<slug:slug>/inclusion/lists/":
        "tests/coding/inclusion/test_inclusion_lists.py::"
        "test_the_lists_and_a_list_analysis_cost_the_same_queries_at_any_list_size",
}

# Read routes no query-count test holds, and why none is needed.
NOT_COUNTED = {
    "login/": "Django's login form: no study data",
    "account/": "the requester's own account and language: no study data",
    "account/password/": "Django's password form for the requester",
    "account/password/done/": "a fixed page",
    "password_reset/": "Django's reset form: no study data",
    "password_reset/done/": "a fixed page",
    "reset/<str:uidb64>/<str:token>/": "one account by its id (an indexed row)",
    "reset/done/": "a fixed page",
    "api/schema/": "the API's description, from the code, not the database",
    "api/docs/": "a static page that loads the schema",
    "api/codebook-format/v1/": "the codebook file format's JSON Schema, a constant",
    "studies/new/": "a form to create a study: reads only who asks",
    "invite/<str:invite_token>/": "one invite by its token (an indexed row)",
    "invite/": "one invite by the token the session holds (an indexed row)",
    "studies/<slug:slug>/exports/<int:job_id>/download/": "streams one finished export file",
    "api/studies/<slug:slug>/exports/<int:job_id>/download/": "streams one finished export file",
    "studies/<slug:slug>/backups/<int:backup_id>/download/": "streams one finished backup file",
    "api/studies/<slug:slug>/backups/<int:backup_id>/download/": "streams one finished backup file",
    "api/studies/<slug:slug>/codebooks/<int:codebook_id>/draft/": "one draft version's "
        "questions, as the editor's pages counted in test_codebook_editor.py",
    "api/studies/<slug:slug>/comparisons/<int:comparison_id>/": "the comparison page's figures "
        "(counted in test_raters.py) as JSON",
    "api/studies/<slug:slug>/methods/<int:method_id>/": "one method with its option names",
    "metrics": "Prometheus figures from maintained counters and grouped queries, for a "
               "scraper with a token (tests/workbench/test_probes.py holds its count)",
}


def request_counts(studies, client, who, method, url, warm=True):
    counts = {}
    for key, study in studies.items():
        person = study.people[who]
        client.force_login(person)
        held = study.held.get(person.pk)
        target = url.format(s=study.slug, held=held.pk if held else "",
                            codebook=study.codebooks.get().pk, item=study.reviewed.pk,
                            job=study.job.pk, token=study.token.pk)
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


def route_of(url):
    """The route text of a URL as tests/test_permission_matrix.py names its rows."""
    route = resolve(urlsplit(url).path).route
    return route.replace("(?P<slug>[^/.]+)", "<slug:slug>").replace("^", "").replace("$", "")


def counts_queries(test_id):
    """Whether the test named "path::name" exists and holds a query count."""
    path, name = test_id.split("::")
    source = (Path(__file__).resolve().parents[1] / path).read_text()
    found = re.search(rf"^def {name}\(.*?(?=^def |\Z)", source, re.S | re.M)
    return bool(found) and bool(re.search(
        r"CaptureQueriesContext|num_queries|assertNumQueries|queries\(|page_queries\(",
        found.group()))


def test_every_read_route_has_a_query_count_test():
    """A page or API route anyone may GET (its permission row lets someone in) is counted
    here, by a test beside its feature (COUNTED_BESIDE), or says why not (NOT_COUNTED):
    a new read route fails this until its count is held."""
    reads = {route for route in routes() if "Y" in TABLE.get(route, {}).get("GET", "")}
    here = {route_of(url.format(s="s", held=1, codebook=1, item=1, job=1, token=1))
            for _, _, url in ENDPOINTS}
    missing = reads - here - set(COUNTED_BESIDE) - set(NOT_COUNTED)
    assert sorted(missing) == [], "read routes without a query-count test"
    assert sorted(set(COUNTED_BESIDE) - reads) == []
    assert sorted(set(NOT_COUNTED) - set(routes())) == [], "reasons for routes that are gone"
    assert sorted(set(COUNTED_BESIDE) & here) == [] and sorted(set(NOT_COUNTED) & here) == []
    assert [t for t in set(COUNTED_BESIDE.values()) if not counts_queries(t)] == []


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


@pytest.mark.parametrize("who,url", [("olive", "/studies/{s}/queue/"),
                                     ("olive", "/api/studies/{s}/queue/"),
                                     ("olive", "/"), ("olive", "/studies/{s}/")])
def test_the_owners_pages_do_not_grow_with_the_coders(built, client, who, url):
    """The queue page once ran a query per coder (their calibration score)."""
    studies = {"3 coders": built[SMALL], "6 coders": built[MORE_CODERS]}
    assert_same(request_counts(studies, client, who, "get", url), "3 coders", "6 coders")


# --- the summaries count what counting row by row counts --------------------------

def summary_row_by_row(study):
    """coding.labeling.queue.queue_summary as it was before issue 13: a query per coder and per
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
    """The pool and progress of coding.studies.overview.study_overview before issue 13."""
    pool = study.items.alive().aggregate(
        papers=Count("id", filter=Q(document__kind="paper")),
        threads=Count("id", filter=Q(document__kind="thread")))
    coded = (Assignment.objects.filter(item__study=study, status="submitted")
             .values("item").annotate(n=Count("id")))
    return {"pool": pool, "progress": {"coded_once": coded.count(),
                                        "fully_coded": coded.filter(n__gte=study.overlap).count(),
                                        "overlap": study.overlap}}


@pytest.mark.parametrize("coders", [CODERS, MORE_CODERS])
def test_the_queue_summary_and_the_study_card_count_what_counting_row_by_row_counts(
        built, coders):
    study = built[SMALL if coders == CODERS else MORE_CODERS]
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


# --- the coder's hot path, statement by statement -------------------------------------

# next item + submit: the statements each costs (savepoints included), pinned so that a
# statement added to the hot path is a decision, not an accident (issue 13's 25 ms target
# is met or missed by these). See docs/performance.md, the row "Submit path at 1M items, paced".
NEXT_ITEM_STATEMENTS = 8  # held already? lapsed leases; the round; savepoint, lock an item,
                          # insert the assignment, taken + 1, release
SUBMIT_STATEMENTS = {
    # the published version (its questions cached per process); savepoint, lock the
    # assignment, its last revision and a model's suggestion shown? (one statement), insert
    # the coding, update the assignment, lock the item, its codings (and whether it has
    # decisions and stored disagreements); release; after commit: is the agreement job due?
    "first of two": 10,
    # complete: also the agreed decisions inserted (its decisions read only if it has any)
    "completing, agreeing": 11,
    # ... and its stored disagreements written (cleared first only if it had any)
    "completing, differing": 12,
}


def hot_path_counts(study, capture):
    """{step: statements} for a newcomer's next item, and submissions of items that had no
    coder (the first of two), one coder and the same answers, or different ones."""
    people = [factories.user(f"{name}-{study.slug}") for name in ("nina", "nora", "nell")]
    for person in people:
        Membership.objects.create(study=study, user=person, role=Role.CODER,
                                  calibration_waived=True)
    nina, nora, nell = people
    answers = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
    quote = [{"question": "label", "field": "abstract", "quote": "Invented abstract"}]

    def submitted(assignment, values, evidence=()):
        assignment = Assignment.objects.select_related("item__study", "item__snapshot").get(
            pk=assignment.pk)
        with CaptureQueriesContext(connection) as queries, capture(execute=True):
            submit(assignment, values, evidence=evidence)
        return len(queries)

    # Nina's first item is the calibration item, placed at her place in the queue order
    # (past it the walk wraps round: one statement more, at any size).
    Item.objects.filter(study=study, round="calibration").update(
        random_key=queue.coder_offset(study, nina))
    counts = {}
    with CaptureQueriesContext(connection) as queries:
        held = queue.next_item(study, nina)
    counts["next item"] = len(queries)
    submitted(held, answers)  # and the process's caches are warm, as in a served process
    fresh = list(Item.objects.filter(study=study, round="main", taken=0).order_by("pk")[:2])
    counts["first of two"] = submitted(queue.assign(fresh[0], nina), answers, quote)
    counts["completing, agreeing"] = submitted(queue.assign(fresh[0], nora), answers, quote)
    submitted(queue.assign(fresh[1], nina), answers)
    counts["completing, differing"] = submitted(queue.assign(fresh[1], nell),
                                                {**answers, "code_released": "yes"})
    return counts


def test_next_item_and_submit_take_the_pinned_statements_at_any_size(
        studies, django_capture_on_commit_callbacks):
    counts = {size: hot_path_counts(study, django_capture_on_commit_callbacks)
              for size, study in studies.items()}
    assert counts[SMALL] == counts[LARGE] == {"next item": NEXT_ITEM_STATEMENTS,
                                              **SUBMIT_STATEMENTS}

"""Who may do what, written out: every page and API endpoint × every role × every method.

The table below is the specification. Each row is a URL pattern; each method maps to
one letter per role, in the order of ROLES:

    anonymous, outsider (member of another study only), viewer, coder B, coder A,
    adjudicator, owner

    Y  allowed: the request reaches the view's work (2xx, a redirect that is not to the
       login page, or a 400 that names what is wrong with the input)
    L  not logged in: sent to the login page (pages) or 401 (API)
    F  refused: 403
    N  not found: 404 (the study, or the object, does not exist for this person)
    M  method not allowed: 405

Methods a row does not list are expected to be refused with 405 after the login check
("LMMMMMM"). The URL objects belong to coder A (cora), the owner (olive) or the study,
so coder B (cyril) meets someone else's assignment. A new URL without a row fails
`test_every_url_has_a_row`.
"""

import functools

import pytest
from django.db import transaction
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver

from coding.export.jobs import start_export
from coding.labeling import queue
from coding.models import Framework, Role
from tests import factories, permission_rows
from tests.conftest import make_alpha, make_beta, make_people
from workbench.models import ApiToken

ROLES = ["anonymous", "outsider", "viewer", "coder_b", "coder_a", "adjudicator", "owner"]
PEOPLE = {"outsider": "otto", "viewer": "vera", "coder_b": "cyril", "coder_a": "cora",
          "adjudicator": "ada", "owner": "olive"}
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
DEFAULT = "LMMMMMM"

# Django's admin and the static files are not ours to specify: the admin lets in only
# staff (tests/test_pages.py checks that a study owner who is not staff is refused).
NOT_OURS = ("admin/", "static/")

TABLE = {
    # --- signing in, documentation, your own tokens and jobs ---
    # Django's login page: anyone may read and post it; a logged-in person is sent home
    # whatever the method.
    "login/": {"GET": "YYYYYYY", "POST": "YYYYYYY", "PUT": "YYYYYYY", "PATCH": "MYYYYYY",
               "DELETE": "MYYYYYY"},
    # Logging out is a POST that ends on the login page.
    "logout/": {"GET": "MMMMMMM", "POST": "LLLLLLL", "PUT": "MMMMMMM", "PATCH": "MMMMMMM",
                "DELETE": "MMMMMMM"},
    # The schema and its documentation page describe the API, not any study's data.
    "api/schema/": {"GET": "YYYYYYY", "POST": "MMMMMMM", "PUT": "MMMMMMM", "PATCH": "MMMMMMM",
                    "DELETE": "MMMMMMM"},
    "api/docs/": {"GET": "YYYYYYY", "POST": "MMMMMMM", "PUT": "MMMMMMM", "PATCH": "MMMMMMM",
                  "DELETE": "MMMMMMM"},
    # The language switcher: anyone, the login page too; a POST only.
    "language/": {"GET": "MMMMMMM", "POST": "YYYYYYY", "PUT": "MMMMMMM", "PATCH": "MMMMMMM",
                  "DELETE": "MMMMMMM"},
    # The "codebook as written" switch, kept per person: anyone signed in, a POST only.
    "language/original/": {"POST": "LYYYYYY"},
    "": {"GET": "LYYYYYY"},
    "account/tokens/": {"GET": "LYYYYYY", "POST": "LYYYYYY"},
    "account/tokens/<int:pk>/revoke/": {"POST": "LNNNNNY"},  # the owner's token
    "api/tokens/": {"GET": "LYYYYYY", "POST": "LYYYYYY"},
    "api/tokens/<int:pk>/": {"GET": "LNNNNNY", "DELETE": "LNNNNNY"},
    "jobs/": {"GET": "LYYYYYY"},  # everyone's own jobs only (tests/workbench/test_jobs.py)
    "api/jobs/": {"GET": "LYYYYYY"},
    "jobs/<int:pk>/": {"GET": "LNNNNNY"},  # the owner's export job
    "jobs/<int:pk>/cancel/": {"POST": "LNNNNNY"},
    "api/jobs/<int:pk>/": {"GET": "LNNNNNY"},
    "api/jobs/<int:pk>/cancel/": {"POST": "LNNNNNY"},

    # --- the study: every member sees it; only owners change it ---
    "studies/<slug:slug>/": {"GET": "LNYYYYY"},
    "studies/<slug:slug>/settings/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "studies/<slug:slug>/codebooks/<int:codebook_id>/": {"GET": "LNYYYYY"},
    "studies/<slug:slug>/codebooks/<int:codebook_id>/v<int:number>/": {"GET": "LNYYYYY"},
    "api/studies/<slug:slug>/": {"GET": "LNYYYYY", "PUT": "LNFFFFY", "PATCH": "LNFFFFY"},
    # Items as a list would unblind coders: they meet items one at a time.
    "api/studies/<slug:slug>/items/": {"GET": "LNYFFYY"},

    # --- coding: coders only, and only their own assignment (coder B meets A's: 404) ---
    # GET only shows the held item or a button: reserving takes a POST (tests/coding/labeling/test_integrity.py).
    "studies/<slug:slug>/code/": {"GET": "LNFYYFF", "POST": "LNFYYFF"},
    "studies/<slug:slug>/code/previous/": {"GET": "LNFYYFF"},
    "studies/<slug:slug>/code/<int:pk>/": {"GET": "LNFNYFF", "POST": "LNFNYFF"},
    "studies/<slug:slug>/code/<int:pk>/draft/": {"POST": "LNFNYFF"},
    "studies/<slug:slug>/code/<int:pk>/skip/": {"POST": "LNFNYFF"},
    "studies/<slug:slug>/feedback/": {"GET": "LNFYYFF"},
    "api/studies/<slug:slug>/next/": {"POST": "LNFYYFF"},
    "api/studies/<slug:slug>/assignments/<int:pk>/": {"GET": "LNFNYFF"},
    "api/studies/<slug:slug>/assignments/<int:pk>/submit/": {"POST": "LNFNYFF"},
    "api/studies/<slug:slug>/assignments/<int:pk>/draft/": {"PUT": "LNFNYFF"},
    "api/studies/<slug:slug>/assignments/<int:pk>/skip/": {"POST": "LNFNYFF"},
    "api/studies/<slug:slug>/feedback/": {"GET": "LNFYYFF"},
    # Codings and assignments: a coder's own, all for adjudicators and owners, none for viewers.
    "studies/<slug:slug>/codings/": {"GET": "LNFYYYY"},
    "api/studies/<slug:slug>/codings/": {"GET": "LNFYYYY"},
    "api/studies/<slug:slug>/assignments/": {"GET": "LNFYYYY"},

    # --- the queue and imports: owners ---
    "studies/<slug:slug>/queue/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "studies/<slug:slug>/import/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/queue/": {"GET": "LNFFFFY"},
    "api/studies/<slug:slug>/reliability-sample/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/imports/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/screening/": {"GET": "LNYFFYY"},

    # --- review: adjudicators and owners; decisions also readable by viewers ---
    "studies/<slug:slug>/review/": {"GET": "LNFFFYY"},
    "studies/<slug:slug>/review/<int:item_id>/": {"GET": "LNFFFYY", "POST": "LNFFFYY"},
    "api/studies/<slug:slug>/disagreements/": {"GET": "LNFFFYY"},
    "api/studies/<slug:slug>/items/<int:item_id>/review/": {"GET": "LNFFFYY",
                                                           "POST": "LNFFFYY"},
    "api/studies/<slug:slug>/decisions/": {"GET": "LNYFFYY"},

    # --- agreement: never coders (it would tell them how the others answered) ---
    "studies/<slug:slug>/agreement/": {"GET": "LNYFFYY"},
    "studies/<slug:slug>/agreement/recompute/": {"POST": "LNFFFYY"},
    "api/studies/<slug:slug>/agreement/": {"GET": "LNYFFYY"},
    "api/studies/<slug:slug>/agreement/history/": {"GET": "LNYFFYY"},
    "api/studies/<slug:slug>/agreement/recompute/": {"POST": "LNFFFYY"},

    # --- export: owners, adjudicators, viewers; a bundle only to whoever made it ---
    "studies/<slug:slug>/export/": {"GET": "LNYFFYY", "POST": "LNYFFYY"},
    "api/studies/<slug:slug>/exports/": {"POST": "LNYFFYY"},
    "studies/<slug:slug>/export/qdpx/": {"POST": "LNYFFYY"},
    "api/studies/<slug:slug>/exports/qdpx/": {"POST": "LNYFFYY"},
    "studies/<slug:slug>/exports/<int:job_id>/download/": {"GET": "LNNFFNY"},
    "api/studies/<slug:slug>/exports/<int:job_id>/download/": {"GET": "LNNFFNY"},

    # --- catalog and landings: never coders (inclusion is the outcome they code blind) ---
    "studies/<slug:slug>/catalog/": {"GET": "LNYFFYY"},
    "studies/<slug:slug>/frameworks/<int:framework_id>/": {"GET": "LNYFFYY",
                                                          "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/catalog/": {"GET": "LNYFFYY"},
}
# The study-setup areas keep their rows beside them (tests/permission_rows/).
AREA_ROWS = permission_rows.rows()
assert not set(TABLE) & set(AREA_ROWS), "a route has a row here and in tests/permission_rows"
TABLE.update(AREA_ROWS)


def routes(resolver=None, prefix=""):
    """Every URL pattern of the project as its route text, e.g. 'studies/<slug:slug>/'."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        # The API router writes regexes ("^studies/(?P<slug>[^/.]+)/$"): read them as routes.
        text = str(entry.pattern).replace("(?P<slug>[^/.]+)", "<slug:slug>")
        route = prefix + text.removeprefix("^").removesuffix("$")
        if route.startswith(NOT_OURS):
            continue
        if isinstance(entry, URLResolver):
            yield from routes(entry, route)
        elif isinstance(entry, URLPattern):
            yield route


def test_every_url_has_a_row():
    found = set(routes())
    assert sorted(found - set(TABLE)) == [], "URLs without a row in the permission table"
    assert sorted(set(TABLE) - found) == [], "rows for URLs that no longer exist"


@pytest.fixture(scope="module")
def shared_world(django_db_setup, django_db_blocker):
    """The people, alpha, beta and the objects for every path parameter, built once for the
    module's ~600 tests inside a transaction that is rolled back at the module's end. Each
    test runs in a savepoint within it (pytest-django's `db`), so whatever one test's
    requests change is undone before the next test, as if each had built its own world."""
    with (django_db_blocker.unblock(),
          override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]),
          transaction.atomic()):
        people = make_people()
        alpha = make_alpha(people)
        make_beta(people)
        # Coder A's lease must outlive the module on a slow machine (30 minutes by default).
        alpha.lease_minutes = 24 * 60
        alpha.save(update_fields=["lease_minutes"])
        cora, cyril = people["cora"], people["cyril"]
        item = alpha.papers[0]
        mine = queue.assign(item, cora)
        factories.code(item, cyril, label="rl_method", scope="general")
        theirs = queue.assign(alpha.papers[1], cyril)
        framework = Framework.objects.create(study=alpha, name="Alpha RL",
                                             repository="lab/alpha-rl")
        token, _ = ApiToken.objects.create(people["olive"], name="owner script")
        values = {
            "slug": alpha.slug, "pk": mine.pk, "item_id": item.pk,
            "codebook_id": alpha.paper_codebook.pk, "number": 1, "framework_id": framework.pk,
            "token_pk": token.pk, "theirs": theirs.pk,
        }
        values.update(permission_rows.values(values, alpha, people))
        yield alpha, people, values
        transaction.set_rollback(True)


@pytest.fixture
def people(shared_world, db):
    """The shared world's people (conftest's `people` would make a second set each test)."""
    return shared_world[1]


@pytest.fixture
def world(shared_world, db, django_capture_on_commit_callbacks):
    """Objects for every path parameter, owned as the module docstring says."""
    alpha, people, values = shared_world
    # Made only for the rows that need it, once per test (rolled back with the test).
    return {**values, "job_id": functools.cache(
        lambda: finished_export(alpha, people["olive"], django_capture_on_commit_callbacks))}


def finished_export(study, owner, on_commit):
    with on_commit(execute=True):  # the job runs in-process once its row is committed
        job = start_export(study, owner, shapes=["wide"], fmt="csv")
    return job.pk


def fill(route, world):
    """The route with real ids: <int:pk> is a job, a token or coder A's assignment."""
    values = dict(world)
    if route.startswith(("jobs/", "api/jobs/")):
        values["pk"] = world["job_id"]
    elif route.startswith(("account/tokens/", "api/tokens/")):
        values["pk"] = world["token_pk"]
    url = "/" + route
    for name, value in values.items():
        for converter in ("slug", "int", "str"):
            marker = f"<{converter}:{name}>"
            if marker in url:
                url = url.replace(marker, str(value() if callable(value) else value))
    assert "<" not in url, f"no value for a parameter of {route}"
    return url


def outcome(response):
    status = response.status_code
    if status in (401,) or (status == 302 and response["Location"].startswith("/login/")):
        return "L"
    return {403: "F", 404: "N", 405: "M"}.get(status, "Y" if status < 500 and status != 429 else "!")


def observe(route, method, world, people):
    seen = ""
    for role in ROLES:
        client = Client()
        if role != "anonymous":
            client.force_login(people[PEOPLE[role]])
        url = fill(route, world)
        response = client.generic(method, url, data="{}", content_type="application/json")
        seen += outcome(response)
    return seen


CASES = [(route, method) for route in TABLE for method in METHODS]


@pytest.mark.parametrize("route,method", CASES, ids=[f"{m} /{r}" for r, m in CASES])
def test_who_may_do_what(route, method, world, people):
    expected = TABLE[route].get(method, DEFAULT)
    assert observe(route, method, world, people) == expected, (
        f"{method} /{route}: roles {' '.join(ROLES)}")

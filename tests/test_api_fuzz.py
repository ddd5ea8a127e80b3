"""Property-based fuzzing of the REST API against its own OpenAPI schema (Schemathesis).

Schemathesis reads /api/schema/ from the app in-process (WSGI, in the test's thread, so
over the test's own database connection) and makes one test per operation. Each test
sends the operation's coverage cases (every boundary and invalid value the schema
implies, one parameter at a time; a fixed set) and EXAMPLES_PER_OPERATION generated
cases, valid and invalid. The check: no response is a server error (and, once the schema
declares its error responses, that every status is a documented one: see CHECKS).

The requests come from people of the alpha study (conftest) holding API tokens: each
generated case is sent by the owner, a coder or the adjudicator (drawn with the case);
each coverage case once, by the person the operation is for. They meet real data:
codings that disagree, a decision, an open assignment, a finished export, a framework.
Path parameters are mostly real (alpha's slug, ids of rows that exist, some of them
another person's), sometimes another study's or whatever Schemathesis generated, so most
requests get past the 404 to the view's real work.

Jobs started through the API (exports, imports, history scans, agreement) run in-process
when the request's work "commits"; the live import clients are replaced by ones that fail
at once, so no request reaches, or waits for, the network.

`pytest -s` prints how each operation answered (status: count) at the end.

The fuzzer's findings, each fixed where it arose, are the regression tests in
tests/test_api_fuzz_findings.py (apart: they build their own rows, and this module's world
stays open until its last test).
"""

import traceback
from collections import Counter, defaultdict
from types import SimpleNamespace

import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core.signals import got_request_exception, request_finished, request_started
from django.db import DatabaseError, close_old_connections, transaction
from django.test import TestCase, override_settings
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import TestPhase
from schemathesis.specs.openapi.checks import status_code_conformance

from coding.adjudication import decisions as adjudication
from coding.export.jobs import start_export
from coding.labeling import queue
from coding.models import Assignment, Framework
from ingest import imports
from ingest.clients.http import FetchError
from tests import permission_rows
from tests.conftest import make_alpha, make_beta, make_people
from tests.factories import code
from workbench.models import ApiToken
from workbench.wsgi import application

EXAMPLES_PER_OPERATION = 25
ROLES = ("olive", "cora", "ada")  # owner, coder, adjudicator of alpha
# Operations only a coder can use; the rest are the owner's (or anyone's).
CODER_OPERATIONS = ("/next/", "/assignments/{id}/", "/feedback/")


def operation_role(path):
    """Who the operation is for: sends its coverage cases, and comes first in the draw."""
    return "cora" if any(part in path for part in CODER_OPERATIONS) else "olive"


# --- the data the requests meet ----------------------------------------------------------

def _offline_client(**_):
    raise FetchError("no network in the API fuzz test")


@pytest.fixture(scope="module")
def shared_world(django_db_setup, django_db_blocker, tmp_path_factory):
    """Alpha with work in every state; the people's tokens; the ids paths draw from. Built
    once for the module's operations inside a transaction rolled back at its end: each
    operation's test runs in a savepoint within it (pytest-django's `db`), and each case
    in a savepoint of its own (test_no_server_error), so every operation starts from the
    same rows, as if each had built its own."""
    # Exports and uploads go to the module's folder, not var/.
    storages = {**django_settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": tmp_path_factory.mktemp("fuzz-stored"), "allow_overwrite": True}}}
    with (django_db_blocker.unblock(),
          override_settings(STORAGES=storages, PASSWORD_HASHERS=[
              "django.contrib.auth.hashers.MD5PasswordHasher"]),
          transaction.atomic()):
        yield build_world()
        transaction.set_rollback(True)


def build_world():
    people = make_people()
    alpha, beta = make_alpha(people), make_beta(people)
    # The open assignment's lease must outlive the module on a slow machine.
    alpha.lease_minutes = 24 * 60
    alpha.save(update_fields=["lease_minutes"])
    cora, cyril, ada, olive = (people[n] for n in ("cora", "cyril", "ada", "olive"))
    first, second, third = alpha.papers
    code(first, cora, label="analysis")
    code(first, cyril, label="rl_method", scope="general")  # a disagreement
    code(second, cora)
    code(second, cyril)
    adjudication.decide(first, "label", "analysis", ada, "The abstract says so.")
    held = queue.next_item(alpha, cora)  # an open assignment
    framework = Framework.objects.create(study=alpha, name="ExampleFramework",
                                         repository="example/framework")
    with TestCase.captureOnCommitCallbacks(execute=True):
        export = start_export(alpha, olive, shapes=["long", "decisions"], fmt="csv")

    headers, own_tokens, spare_tokens = {}, set(), []
    for role in ROLES:
        token, key = ApiToken.objects.create(people[role], name="fuzz")
        headers[role] = {"Authorization": f"Token {key}"}
        own_tokens.add(token.pk)
        spare_tokens += [ApiToken.objects.create(people[role], name=f"spare {n}")[0].pk
                         for n in range(2)]
    spare_tokens.append(ApiToken.objects.create(people["otto"], name="otto's")[0].pk)

    # The setup areas' new path parameters (method_id, invite_id …), from their permission rows.
    area_values = permission_rows.values(
        {"slug": alpha.slug, "framework_id": framework.pk, "item_id": first.pk,
         "codebook_id": alpha.paper_codebook.pk, "number": 1, "job_id": export.pk},
        alpha, people)
    return SimpleNamespace(
        headers=headers, own_tokens=own_tokens, real={
            **{name: [value() if callable(value) else value]
               for name, value in area_values.items()},
            "slug": [alpha.slug] * 4 + [beta.slug],
            "token": spare_tokens,
            "job": [export.pk],
            "item": [item.pk for item in (first, second, third)],
            "framework": [framework.pk],
            "codebook_id": [alpha.paper_codebook.pk],
            "number": [1, 2],
            "assignment": [held.pk, *Assignment.objects.filter(item__study=alpha)
                           .exclude(pk=held.pk).order_by("pk").values_list("pk", flat=True)],
        })


@pytest.fixture
def world(shared_world, db, monkeypatch):
    """The module's world, in this test's savepoint; no request reaches the network."""
    for fmt in imports.CLIENTS:
        monkeypatch.setitem(imports.CLIENTS, fmt, _offline_client)
    return shared_world


def real_values(path, name):
    """Values of a path parameter that exist, the likeliest to get far first."""
    if name == "slug":
        kind = "slug"
    elif path.startswith("/api/tokens/"):
        kind = "token"
    elif path.startswith("/api/jobs/") or name == "job_id":
        kind = "job"
    elif name == "item_id":
        kind = "item"
    elif name == "framework_id":
        kind = "framework"
    elif "/assignments/{id}/" in path:
        kind = "assignment"
    elif name in current.world.real:
        kind = name
    else:
        raise AssertionError(f"no real values for {name} in {path}")
    return current.world.real[kind]


def not_a_live_token(path, value):
    """The fuzzer may revoke tokens, but not one it is sending."""
    if path.startswith("/api/tokens/") and str(value) in map(str, current.world.own_tokens):
        return current.world.real["token"][0]
    return value


# --- the schema, read from the app ----------------------------------------------------------

# Read once at collection (building the schema reads no rows). The hooks below run while
# a test generates its cases, when `current.world` holds that test's rows. (Schemathesis'
# schemathesis.pytest.from_fixture would load it inside each test instead, but that loader
# still sets Node._nodeid, which pytest 9 no longer has.)
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
current = SimpleNamespace(world=None)


# Every answer is checked for a server error, and that its status is one the schema
# documents (workbench.schema.document_errors adds the error answers to every operation).
CHECKS = [not_a_server_error, status_code_conformance]


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    """Generated cases: a real value most of the time, else the generated one."""
    if current.world is None or not isinstance(path_parameters, dict):
        return st.just(path_parameters)
    path = context.operation.path
    return st.fixed_dictionaries({
        name: st.sampled_from([*real_values(path, name), not_a_live_token(path, generated)])
        for name, generated in path_parameters.items()
    })


# Bodies the schema cannot describe (answers depend on the study's codebook): generated
# JSON bodies of these operations are sometimes replaced by, or merged with, a valid one,
# so submissions, decisions and imports also get past validation.
JSON = "application/json"
ANSWERS = {"label": "rl_method", "scope": "general", "size_b": 7,
           "failures": ["entropy_collapse"], "code_released": "yes", "note": "Invented."}
VALID_BODIES = {
    "POST /api/studies/{slug}/assignments/{id}/submit/": {"values": ANSWERS, "notes": "Sure."},
    "PUT /api/studies/{slug}/assignments/{id}/draft/": {"values": ANSWERS},
    "POST /api/studies/{slug}/items/{item_id}/review/": {
        "question": "label", "value": "rl_method", "rationale": "Section 3 says so."},
    "POST /api/studies/{slug}/imports/": {
        "source": {"format": "arxiv_api", "search_query": "cat:cs.LG"},
        "screening": {"categories": ["cs.LG"], "query": "policy"}},
    "POST /api/studies/{slug}/reliability-sample/": {"share": 0.5, "seed": 7},
    "PATCH /api/studies/{slug}/": {"overlap": 3, "discussion_step": True, "show_feedback": True},
}


@schema.hook
def flatmap_case(context, case):
    """Generated cases: sent by someone of alpha, half the time by the operation's own
    person; for the operations above, two times in three with a valid JSON body (alone, or
    over the generated one)."""
    if current.world is None:
        return st.just(case)
    own = operation_role(context.operation.path)
    roles = [own, *(role for role in ROLES if role != own)]
    senders = st.sampled_from([own] * (len(roles) - 1) + roles)
    valid = VALID_BODIES.get(context.operation.label)
    bodies = [None]  # None: the generated body as it is
    if valid:
        generated = case.body if isinstance(case.body, dict) and case.media_type == JSON else {}
        bodies += [valid, {**generated, **valid}]

    def prepared(role, body):
        case.headers = {**(case.headers or {}), **current.world.headers[role]}
        if body is not None:
            case.media_type, case.body = JSON, body
        return case

    return st.tuples(senders, st.sampled_from(bodies)).map(lambda drawn: prepared(*drawn))


def is_generated(case):
    return case.meta is not None and case.meta.phase.name == TestPhase.FUZZING


def prepare_coverage_case(case):
    """Coverage cases are made at collection, before the rows exist: those aimed at the
    body or query get a real path (those aimed at the path keep theirs), and all are sent
    by the operation's own person."""
    path = case.operation.path
    if case.path_parameters:
        if case.meta.phase.data.parameter_location == ParameterLocation.PATH:
            case.path_parameters = {name: not_a_live_token(path, value)
                                    for name, value in case.path_parameters.items()}
        else:
            case.path_parameters = {name: real_values(path, name)[0]
                                    for name in case.path_parameters}
    case.headers = {**(case.headers or {}), **current.world.headers[operation_role(path)]}


# --- the test -----------------------------------------------------------------------------------

@pytest.fixture
def fuzz(world):
    """Give the hooks this test's rows; keep the test's connection open across requests
    (a finished request closes it otherwise; Django's test client prevents that too)."""
    current.world = world
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield world
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
        current.world = None


@pytest.fixture
def server_errors():
    """Tracebacks of the exceptions the app answered with a 500, shown with a failure."""
    seen = []

    def record(sender, request=None, **kwargs):
        seen.append(traceback.format_exc())

    got_request_exception.connect(record, weak=False)
    yield seen
    got_request_exception.disconnect(record)


STATUSES = defaultdict(Counter)


@pytest.fixture(scope="module", autouse=True)
def print_statuses():
    yield
    for label, counts in sorted(STATUSES.items()):
        print(f"{label}: {dict(sorted(counts.items()))}")


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
          # The world is the module's, each operation's test in a savepoint (each starts from
          # the same rows); schema-driven bodies are large and slow to generate by nature.
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large, HealthCheck.large_base_example,
                                 HealthCheck.filter_too_much])
def test_no_server_error(case, fuzz, server_errors, django_capture_on_commit_callbacks):
    if not is_generated(case):
        prepare_coverage_case(case)
    seen = len(server_errors)
    try:
        # Jobs run when the request's work commits. A request that broke the database
        # transaction (PostgreSQL) is rolled back alone, so the next case starts clean.
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            response = case.call()
    except DatabaseError:
        pass
    STATUSES[case.operation.label][response.status_code] += 1
    try:
        case.validate_response(response, checks=CHECKS)
    except FailureGroup as failure:
        for error in server_errors[seen:]:
            failure.add_note(error)
        raise

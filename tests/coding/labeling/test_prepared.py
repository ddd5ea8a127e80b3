"""The coder's hot statements (workbench/prepared.py): prepared on PostgreSQL, seen by the query
counters, the same rows as the ORM's; and the after-submit agreement check built on them."""

import pytest
from django.db import connection
from django.forms.models import model_to_dict
from django.http import Http404
from django.test.utils import CaptureQueriesContext

from coding.access.roles import access_assignment
from coding.actions.submit import submit
from coding.agreement import snapshots
from coding.labeling import codings, queue
from coding.models import AgreementSnapshot, Assignment, Coding
from tests import factories
from tests.postgresql import on_postgresql, prepared_on_the_server
from workbench.models import Job


def test_a_statement_gives_the_orm_rows_and_the_query_counters_see_it(alpha, people):
    coding = factories.code(alpha.papers[0], people["cora"])
    with CaptureQueriesContext(connection) as captured:
        for _ in range(3):
            assert codings._AFTER_LOCK.first(assignment=coding.assignment_id) == (1, "independent",
                                                                              False, False)
        assert codings._AFTER_LOCK.first(assignment=coding.assignment_id + 999) is None
    assert len(captured) == 4
    assert all('"coding_assignment"."id" =' in query["sql"] for query in captured)


def test_a_coder_gets_their_assignment_with_what_the_coding_page_shows_in_one_statement(
        alpha, beta, people, django_assert_num_queries):
    """access_assignment reads the assignment, its item, snapshot, codebook and document in one
    prepared statement: each the same row as the ORM's select_related loads; another coder's
    assignment, or one asked for under another study, does not exist."""
    cora, cyril = people["cora"], people["cyril"]
    mine = queue.next_item(alpha, cora)
    Assignment.objects.filter(pk=mine.pk).update(draft={"values": {"label": "analysis"}})
    theirs = queue.next_item(alpha, cyril)
    with django_assert_num_queries(1):
        got = access_assignment(cora, alpha, mine.pk)
    orm = (Assignment.objects.select_related("item__snapshot", "item__codebook",
                                             "item__document").get(pk=mine.pk))
    assert got.item.study is alpha
    for read, expected in ((got, orm), (got.item, orm.item), (got.item.snapshot, orm.item.snapshot),
                           (got.item.codebook, orm.item.codebook),
                           (got.item.document, orm.item.document)):
        assert type(read) is type(expected)
        assert model_to_dict(read) == model_to_dict(expected)
        assert read.pk == expected.pk and not read._state.adding
    assert got.draft == {"values": {"label": "analysis"}}  # JSON as the ORM converts it
    assert got.leased_until == orm.leased_until  # an aware datetime
    for user, study, pk in ((cora, alpha, theirs.pk), (cyril, alpha, mine.pk),
                            (cora, beta, mine.pk), (cora, alpha, mine.pk + 999)):
        with pytest.raises(Http404):
            access_assignment(user, study, pk)


@on_postgresql
def test_on_postgresql_a_statement_is_prepared_once_per_connection(alpha, people):
    coding = factories.code(alpha.papers[0], people["cora"])
    assert connection.connection.prepare_threshold is not None  # the settings' option
    for _ in range(3):
        codings._AFTER_LOCK.first(assignment=coding.assignment_id)
    found = prepared_on_the_server('AS "read_others" FROM "coding_assignment"')
    assert len(found) == 1  # one prepared statement, run again by name
    # Django's own queries stay client-side and are never prepared.
    list(Coding.objects.filter(pk=coding.pk).values_list("revision"))
    assert not prepared_on_the_server('"coding_coding"."id" = ')


@on_postgresql
def test_on_postgresql_a_statement_is_planned_once_not_at_each_of_its_first_runs(alpha, people):
    """PostgreSQL plans a prepared statement's first five runs for their values; a coder's
    connection runs each hot statement only a few times a minute, so the settings ask for
    the generic plan from the first run (benchmarks/results/performance-history.md,
    "Sixth run: the generic plan from the first run")."""
    coding = factories.code(alpha.papers[0], people["cora"])
    for _ in range(3):
        codings._AFTER_LOCK.first(assignment=coding.assignment_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                       "WHERE statement LIKE %s", ['%AS "read_others" FROM "coding_assignment"%'])
        (generic, custom), = cursor.fetchall()
    assert custom == 0 and generic >= 3  # (the coding's own submission ran it too)


@on_postgresql
def test_only_the_slots_are_bound_the_constants_are_written_into_the_statement(alpha, people):
    """A constant bound as a parameter would keep the generic plan off partial indexes
    (status = 'active'), so PostgreSQL would plan every run again."""
    from coding.adjudication import decisions as adjudication

    coding = factories.code(alpha.papers[0], people["cora"])
    with CaptureQueriesContext(connection) as captured:
        rows = adjudication._ITEM_CODINGS.rows(item=coding.assignment.item_id)
    assert len(rows) == 1 and rows[0][-1] == 1  # one coding, one submitted assignment
    sql = captured[0]["sql"]
    assert "'submitted'" in sql and "$2" in sql and "$3" not in sql  # the item, twice
    assert prepared_on_the_server("'submitted'")


@on_postgresql
def test_without_a_prepare_threshold_nothing_is_prepared(alpha, people):
    coding = factories.code(alpha.papers[0], people["cora"])
    raw = connection.connection
    threshold, raw.prepare_threshold = raw.prepare_threshold, None
    try:
        with connection.cursor() as cursor:
            cursor.execute("DEALLOCATE ALL")
        assert codings._AFTER_LOCK.first(assignment=coding.assignment_id) == (1, "independent",
                                                                              False, False)
        assert not prepared_on_the_server('"coding_coding"')
    finally:
        raw.prepare_threshold = threshold


def test_the_agreement_check_is_one_statement(alpha, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert snapshots.schedule_agreement(alpha) is None


def test_the_agreement_job_comes_at_the_nth_independent_coding_of_the_study(
        alpha, beta, people, settings):
    settings.AGREEMENT_SNAPSHOT_EVERY = 2
    factories.code(alpha.papers[0], people["cora"])
    # Another study's codings and a later, informed revision are not the study's new
    # independent codings.
    other = factories.paper_item(beta, factories.codebook(beta), 9)
    factories.code(other, people["otto"])
    factories.code(other, people["otto"])
    revision = factories.code(alpha.papers[0], people["cora"])
    Coding.objects.filter(pk=revision.pk).update(phase=Coding.Phase.INFORMED)
    assert snapshots.schedule_agreement(alpha) is None
    factories.code(alpha.papers[1], people["cora"])
    job = snapshots.schedule_agreement(alpha)
    assert job is not None and job.kind == "agreement"
    # Debounced while that job waits; another study's waiting job does not hold this one.
    assert snapshots.schedule_agreement(alpha) is None
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE)
    Job.objects.create(kind="agreement", params={"study": beta.pk})
    assert snapshots.schedule_agreement(alpha) is not None


def test_after_a_snapshot_the_count_starts_again(alpha, people, settings):
    settings.AGREEMENT_SNAPSHOT_EVERY = 2
    first = factories.code(alpha.papers[0], people["cora"])
    second = factories.code(alpha.papers[0], people["cyril"])
    AgreementSnapshot.objects.create(study=alpha, round="main", n_codings=2,
                                     last_coding_id=second.pk, report={}, summary={})
    assert first.pk < second.pk
    assert snapshots.schedule_agreement(alpha) is None
    factories.code(alpha.papers[1], people["cora"])
    assert snapshots.schedule_agreement(alpha) is None
    factories.code(alpha.papers[1], people["cyril"])
    assert snapshots.schedule_agreement(alpha) is not None


def test_a_submission_schedules_after_its_commit(alpha, people, settings,
                                                django_capture_on_commit_callbacks):
    settings.AGREEMENT_SNAPSHOT_EVERY = 1
    assignment = queue.assign(alpha.papers[0], people["cora"])
    answers = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submit(assignment, answers)
    assert not Job.objects.filter(kind="agreement").exists()
    for callback in callbacks:
        callback()
    assert Job.objects.filter(kind="agreement").count() == 1

"""A submission sent twice is recorded once (issue 43, finding 1): ten parallel submits of
one assignment gave ten 201s and revisions 1-10. The coding page writes a key of its own
into its form and the API takes an Idempotency-Key header; the same key on the same
assignment, in parallel or replayed later, is the same submission."""

import uuid

import pytest
from rest_framework.test import APIClient

from coding.labeling import queue
from coding.models import Coding, Decision, Role
from tests import factories
from tests.conftest import at_once
from tests.postgresql import on_postgresql

ANSWERS = {"values": {"label": "analysis", "size_b": 7, "failures": ["none"],
                      "code_released": "no"}}


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def held(transactional_db):
    owner, coder = factories.user("olive"), factories.user("cora")
    study = factories.study("Doubled study", owner=owner, overlap=1)
    factories.member(study, owner, Role.OWNER)
    factories.member(study, coder, Role.CODER)
    item = factories.paper_item(study, factories.codebook(study), 1)
    return study, coder, queue.assign(item, coder)


def submit_url(study, assignment):
    return f"/api/studies/{study.slug}/assignments/{assignment.pk}/submit/"


@on_postgresql  # SQLite serialises writers: the sequential replay below stands for it there
def test_ten_parallel_submits_with_one_key_record_one_revision(held):
    study, coder, assignment = held
    key = str(uuid.uuid4())
    responses = at_once(*[lambda: api(coder).post(submit_url(study, assignment), ANSWERS,
                                                  format="json", HTTP_IDEMPOTENCY_KEY=key)
                          for _ in range(10)])
    errors = [r for r in responses if isinstance(r, Exception)]
    assert not errors, errors
    statuses = [response.status_code for response in responses]
    assert sorted(statuses) == [200] * 9 + [201]
    assert list(Coding.objects.values_list("revision", flat=True)) == [1]
    settled = list(Decision.objects.filter(item=assignment.item).values_list(
        "question_key", "revision"))
    assert settled and {revision for _key, revision in settled} == {1}  # settled once
    assert len({key for key, _revision in settled}) == len(settled)


def test_ten_submits_in_a_row_with_one_key_record_one_revision(held):
    study, coder, assignment = held
    statuses = [api(coder).post(submit_url(study, assignment), ANSWERS, format="json",
                                HTTP_IDEMPOTENCY_KEY="one-key-for-all").status_code
                for _ in range(10)]
    assert statuses == [201] + [200] * 9
    assert list(Coding.objects.values_list("revision", flat=True)) == [1]


def test_a_replayed_submit_after_a_revision_is_still_not_recorded_again(held):
    study, coder, assignment = held
    url, first, second = submit_url(study, assignment), "key-first-000", "key-second-00"
    assert api(coder).post(url, ANSWERS, format="json",
                           HTTP_IDEMPOTENCY_KEY=first).status_code == 201
    changed = {"values": {**ANSWERS["values"], "size_b": 9}}
    assert api(coder).post(url, changed, format="json",
                           HTTP_IDEMPOTENCY_KEY=second).status_code == 201
    replay = api(coder).post(url, ANSWERS, format="json", HTTP_IDEMPOTENCY_KEY=first)
    assert replay.status_code == 200
    assert list(Coding.objects.order_by("revision").values_list("revision", "values__size_b")) \
        == [(1, 7), (2, 9)]
    # Without a key each submission is a revision, as before.
    assert api(coder).post(url, ANSWERS, format="json").status_code == 201
    assert Coding.objects.count() == 3
    bad = api(coder).post(url, ANSWERS, format="json", HTTP_IDEMPOTENCY_KEY="no spaces!")
    assert bad.status_code == 400 and "Idempotency-Key" in bad.json()
    assert Coding.objects.count() == 3


def test_the_coding_page_sent_twice_records_once(held, client):
    study, coder, assignment = held
    client.force_login(coder)
    page = client.get(f"/studies/{study.slug}/code/{assignment.pk}/").content.decode()
    key = page.split('name="submission" value="')[1][:32]
    form = {"q-label": "analysis", "q-size_b": "7", "q-failures": "none",
            "q-code_released": "no", "submission": key}
    first = client.post(f"/studies/{study.slug}/code/{assignment.pk}/", form)
    again = client.post(f"/studies/{study.slug}/code/{assignment.pk}/", form)
    assert first.status_code == again.status_code == 302
    assert Coding.objects.count() == 1

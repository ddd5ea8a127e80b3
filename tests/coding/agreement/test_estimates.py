"""Estimates between full reports (issue 42): alpha's coincidences kept by a full report,
a batch of new codings taken out as they were and put back as they are, give the alpha a
full report of the same codings gives, on every kind of question; the page, the API and
the exports say which figures are estimates, and the scheduler sends one while the full
report waits."""

import random

import pytest
from django.contrib.auth import get_user_model

from coding.agreement import estimates, snapshots
from coding.agreement.reliability import study_report
from coding.codebooks.versions import create_codebook, draft_new_version, publish
from coding.export.bundle import agreement_freshness
from coding.models import AgreementSnapshot, Assignment, Coding, Item, Membership, Role, Study
from ingest.models import Document, Snapshot
from tests.coding.agreement.test_spacing import code_both, sent  # noqa: F401  a fixture
from workbench.models import Job

CODEBOOK = {
    "name": "Fresh", "applies_to": "paper",
    "questions": [
        {"key": "kind", "kind": "single", "text": "Kind of work?",
         "options": [{"value": "method"}, {"value": "analysis"}, {"value": "tool"}]},
        {"key": "depth", "kind": "single", "level": "ordinal", "text": "How deep?",
         "options": [{"value": "low"}, {"value": "mid"}, {"value": "high"}]},
        {"key": "scope", "kind": "single", "text": "Scope?",
         "show_if": {"question": "kind", "in": ["method"]},
         "options": [{"value": "general"}, {"value": "embedded"}]},
        {"key": "size", "kind": "number", "level": "interval", "text": "Largest model (B)",
         "options": [{"value": "not_reported"}]},
        {"key": "ratio", "kind": "number", "level": "ratio", "text": "Speed-up"},
        {"key": "tags", "kind": "multiple", "text": "Failures",
         "options": [{"value": "collapse"}, {"value": "drift"}, {"value": "none"}]},
        {"key": "note", "kind": "text", "text": "Anything else"},
    ],
}
CODERS = ("ann", "bo", "cy")


def answers(rng):
    """One coder's answers, some questions left unanswered."""
    kind = rng.choice(["method", "analysis", "tool"])
    given = {"kind": kind, "depth": rng.choice(["low", "mid", "high"]),
             "size": rng.choice([0.5, 1.5, 7, 13, 70, "not_reported"]),
             "ratio": rng.choice([1, 1.5, 2, 4]),
             "tags": rng.sample(["collapse", "drift", "none"], rng.randint(0, 2)),
             "note": rng.choice(["", "see the appendix"])}
    if kind == "method":
        given["scope"] = rng.choice(["general", "embedded"])
    return {key: value for key, value in given.items() if rng.random() > 0.1}


class Fresh:
    """A study made from nothing: a codebook of every kind of question, three coders."""

    def __init__(self, n_items):
        self.study = Study.objects.create(name="Fresh", slug=f"fresh-{Study.objects.count()}")
        self.book = create_codebook(self.study, CODEBOOK)
        self.version = self.book.current_version()
        User = get_user_model()
        self.coders = [User.objects.get_or_create(username=name)[0] for name in CODERS]
        Membership.objects.bulk_create(Membership(study=self.study, user=u, role=Role.CODER)
                                       for u in self.coders)
        self.items = []
        self.add_items(n_items)
        self.assignments = {}
        self.revisions = {}

    def add_items(self, n):
        start = len(self.items)
        documents = Document.objects.bulk_create(
            Document(kind=Document.Kind.PAPER, source="fresh", key=f"{self.study.pk}.{i}",
                     title=f"Invented paper {i}") for i in range(start, start + n))
        kept = Snapshot.objects.bulk_create(
            Snapshot(document=d, number=1, content={}, sha256=f"{d.pk:064x}") for d in documents)
        self.items += Item.objects.bulk_create(
            Item(study=self.study, document=d, snapshot=s, codebook=self.book,
                 round=Item.Round.MAIN, target=3, taken=0) for d, s in zip(documents, kept))

    def code(self, pairs, rng, phase=Coding.Phase.INDEPENDENT):
        """Codings of (item, coder) pairs, random answers; a pair coded before gets its
        next revision."""
        rows = []
        for item, coder in pairs:
            key = (item.pk, coder.pk)
            if key not in self.assignments:
                self.assignments[key] = Assignment.objects.create(
                    item=item, coder=coder, status=Assignment.Status.SUBMITTED)
            self.revisions[key] = self.revisions.get(key, 0) + 1
            rows.append(Coding(assignment=self.assignments[key], revision=self.revisions[key],
                               codebook_version=self.version, values=answers(rng),
                               phase=phase))
        Coding.objects.bulk_create(rows)


def alphas(report):
    return {q["key"]: (q["alpha"]["value"] if q.get("alpha") else None, q["units"],
                       q.get("values"))
            for book in report["codebooks"] for q in book["questions"]}


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_estimate_gives_the_alpha_a_full_report_gives(seed):
    rng = random.Random(seed)
    fresh = Fresh(40)
    coders = fresh.coders
    fresh.code([(item, c) for item in fresh.items[:30] for c in coders[:2]], rng)
    fresh.code([(item, coders[2]) for item in fresh.items[:10]], rng)
    snapshots.take_snapshot(fresh.study, force=True)
    full = AgreementSnapshot.objects.get(study=fresh.study)
    assert set(full.counts) == {f"{fresh.book.pk}:{key}" for key in
                                ("kind", "depth", "scope", "size", "ratio", "tags")}
    assert "cells" not in str(full.report)  # kept apart from what the page reads

    # A batch: new items, a third coder on old ones (units that become pairable), an
    # independent revision (replaces its earlier one), a reconciliation (never counts).
    fresh.add_items(10)
    fresh.code([(item, c) for item in fresh.items[40:] for c in rng.sample(coders, 2)], rng)
    fresh.code([(item, coders[2]) for item in fresh.items[10:20]], rng)
    fresh.code([(fresh.items[0], coders[0]), (fresh.items[35 % 30], coders[1])], rng)
    fresh.code([(fresh.items[1], coders[1])], rng, phase=Coding.Phase.RECONCILIATION)

    result = estimates.estimate(fresh.study)
    assert result["new_codings"] == 20 + 10 + 2
    estimate = AgreementSnapshot.objects.get(pk=result["snapshots"][0])
    newest = Coding.objects.filter(phase=Coding.Phase.INDEPENDENT).latest("pk")
    assert estimate.estimate and estimate.last_coding_id == newest.pk
    expected = study_report(fresh.study, n_boot=10)["rounds"]["main"]
    got, want = alphas(estimate.report), alphas(expected)
    for key in want:
        if key == "note":
            continue
        assert got[key][1:] == want[key][1:], key
        assert got[key][0] == pytest.approx(want[key][0], abs=1e-9), key
    assert estimate.n_codings == expected["n_codings"]
    for key in ("n_codings", "items", "items_with_two_or_more", "coders"):
        assert estimate.report[key] == expected[key], key
    # Only alpha is estimated: the intervals are the full report's, and say so.
    q = next(q for q in estimate.report["codebooks"][0]["questions"] if q["key"] == "kind")
    assert q["alpha"]["estimate"] is True
    old = next(q for q in full.report["codebooks"][0]["questions"] if q["key"] == "kind")
    assert (q["alpha"]["low"], q["alpha"]["high"]) == (old["alpha"]["low"], old["alpha"]["high"])
    assert estimate.report["estimate"]["base_last_coding_id"] == full.last_coding_id


@pytest.mark.django_db
def test_estimates_start_from_the_newest_full_report_and_never_from_each_other():
    rng = random.Random(7)
    fresh = Fresh(30)
    pairs = [(item, c) for item in fresh.items for c in fresh.coders[:2]]
    fresh.code(pairs[:20], rng)
    snapshots.take_snapshot(fresh.study, force=True)
    assert estimates.estimate(fresh.study) == {"snapshots": [],
                                               "note": "no new independent codings"}
    for batch in (pairs[20:30], pairs[30:44]):
        fresh.code(batch, rng)
        estimates.estimate(fresh.study)
    newest = AgreementSnapshot.objects.get(estimate=True)  # the newest replaced the first
    assert newest.report["estimate"]["new_codings"] == 24  # both batches, from the full one
    assert _same(newest.report, fresh.study)


def _same(report, study):
    want = alphas(study_report(study, n_boot=10)["rounds"]["main"])
    got = alphas(report)
    return all(got[k][1:] == want[k][1:] and (got[k][0] is None) == (want[k][0] is None)
               and (got[k][0] is None or abs(got[k][0] - want[k][0]) < 1e-9) for k in want)


@pytest.mark.django_db
def test_a_changed_codebook_gets_no_estimate():
    rng = random.Random(3)
    fresh = Fresh(20)
    fresh.code([(item, c) for item in fresh.items[:10] for c in fresh.coders[:2]], rng)
    snapshots.take_snapshot(fresh.study, force=True)
    publish(draft_new_version(fresh.book))
    fresh.code([(item, c) for item in fresh.items[10:] for c in fresh.coders[:2]], rng)
    estimates.estimate(fresh.study)
    estimate = AgreementSnapshot.objects.get(estimate=True)
    book = estimate.report["codebooks"][0]
    assert "codebook changed" in book["estimate"]
    assert not any(q["alpha"].get("estimate") for q in book["questions"] if q.get("alpha"))


@pytest.mark.django_db
def test_the_page_and_api_show_the_estimate_and_the_exports_the_full_report(client):
    rng = random.Random(5)
    fresh = Fresh(20)
    fresh.code([(item, c) for item in fresh.items[:10] for c in fresh.coders[:2]], rng)
    snapshots.take_snapshot(fresh.study, force=True)
    full = AgreementSnapshot.objects.get(study=fresh.study)
    fresh.code([(item, c) for item in fresh.items[10:] for c in fresh.coders[:2]], rng)
    estimates.estimate(fresh.study)
    owner = get_user_model().objects.create(username="olive")
    Membership.objects.create(study=fresh.study, user=owner, role=Role.OWNER)
    client.force_login(owner)

    page = client.get(f"/studies/{fresh.study.slug}/agreement/").content.decode()
    assert 'id="agreement-estimate"' in page and "20 independent codings" in page
    assert "†" in page
    doc = client.get(f"/api/studies/{fresh.study.slug}/agreement/").json()
    assert doc["estimate"]["new_codings"] == 20 and doc["freshness"]["new_codings"] == 0
    assert doc["text"] is None and "estimates of alpha" in doc["text_withheld"]
    # The exports read the full report: 20 codings came after it.
    assert snapshots.stored_report(fresh.study)["last_coding_id"] == full.last_coding_id
    assert agreement_freshness(fresh.study)["new_codings"] == 20
    # The lines over time are the full reports'.
    assert len(snapshots.history(fresh.study, "main")) == 1


@pytest.mark.django_db
def test_while_the_full_report_waits_an_estimate_is_sent(
        alpha, people, settings, sent, django_capture_on_commit_callbacks):  # noqa: F811
    settings.AGREEMENT_SNAPSHOT_EVERY = 2
    settings.AGREEMENT_JOB_SHARE = 0.25
    code_both(alpha, people, alpha.papers[0], django_capture_on_commit_callbacks)
    Job.objects.all().delete()  # the full report that job would take, taken here
    sent.clear()
    snapshots.take_snapshot(alpha, force=True)
    AgreementSnapshot.objects.update(seconds=8.0)  # a slow report, just now
    code_both(alpha, people, alpha.papers[1], django_capture_on_commit_callbacks)
    full = Job.objects.get(kind="agreement")
    quick = Job.objects.get(kind="agreement_estimate")
    assert [countdown for _, countdown in sent] == [pytest.approx(24, abs=4), None]
    assert (full.status, quick.status) == (Job.Status.QUEUED, Job.Status.QUEUED)
    # No second estimate while one waits; the full report keeps waiting.
    code_both(alpha, people, alpha.papers[2], django_capture_on_commit_callbacks)
    assert Job.objects.count() == 2
    # The estimate ran: alpha is up to date, the full report still waits its turn.
    from workbench import jobs

    jobs.run(quick.pk)
    estimate = AgreementSnapshot.objects.get(estimate=True)
    assert estimate.report["estimate"]["new_codings"] == 4
    assert snapshots.schedule_agreement(alpha) is None  # nothing new since the estimate
    assert Job.objects.filter(kind="agreement").get().status == Job.Status.QUEUED

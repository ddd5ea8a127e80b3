"""Agreement over time: snapshots of the reliability report, taken by a background job.

A coder's submission never waits for the report, which is heavy on a large study.
`schedule_agreement` runs once the submission has committed and enqueues the "agreement"
job only when enough new independent codings have arrived since the last snapshot and no
agreement job is already waiting or running for the study (the debounce). It asks both in
one statement, built once per process and prepared on PostgreSQL (workbench/prepared.py):
"is the N-th new independent coding there?" reads at most N rows of the study's codings
by their (study, id) index, whatever the study's size. Built through the ORM on every
submission, the two checks were 30% of a submission's CPU (issue 13).

Snapshots do not starve the coders: a job that reads every coding of a large study took
half of what 50 coders got on two cores when one followed another (issue 43). So an
automatic snapshot waits, queued, in proportion to how long the last report took
(`rest_left`, settings.AGREEMENT_JOB_SHARE, a quarter of the time by default).

Meanwhile the figures do not fall behind: while a full report waits, each batch of new
codings is followed by an estimate (job "agreement_estimate", estimates.py): alpha's
point values brought up to date from the items those codings touched, in a second or two
at a million items. The page and the API show the newest estimate over its full report
and say what is behind; exports and the methods text read full reports only.
"""

import math
import time
from datetime import datetime

from django.conf import settings
from django.db.models import Exists, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from coding.agreement.reliability import ROUNDS, study_report
from coding.models import AgreementSnapshot, Coding, Study
from coding.models.tallies import tallies
from workbench import jobs
from workbench.models import Job
from workbench.prepared import Slot, Statement

KIND = "agreement"
ESTIMATE = "agreement_estimate"


def snapshot_every():
    """New independent codings between two automatic snapshots."""
    return getattr(settings, "AGREEMENT_SNAPSHOT_EVERY", 20)


def schedule_agreement(study):
    """Enqueue the agreement job if it is due; the job, or None. Cheap: see the module."""
    every = snapshot_every()
    now = timezone.now()
    waiting, estimating, due, taken_at, seconds = _due(every).first(
        study=study.pk, study_in_params=study.pk, stale=now - jobs.STALE_AFTER)
    if not due:
        return None
    if jobs.runs_in_process():
        # Tasks run in-process in this mode, so sending the job now would compute the
        # report inside the coder's request. The row waits for the next person who
        # opens the agreement page (run_waiting), or for a recompute.
        return None if waiting else Job.objects.create(kind=KIND, params=_params(study))
    wait = rest_left(taken_at, seconds, now)
    full = None
    if not waiting:
        full = (jobs.enqueue(KIND, _params(study), countdown=wait, message=jobs.SPACED_OUT)
                if wait else jobs.enqueue(KIND, _params(study)))
    if (wait or waiting) and taken_at is not None and not estimating:
        # The full report waits: the figures follow the codings meanwhile (a full report
        # from before the estimates kept no coincidences: the job says so and does nothing).
        return jobs.enqueue(ESTIMATE, _params(study))
    return full


def rest_left(taken_at, seconds, now):
    """Seconds the next automatic snapshot waits before it starts, so that snapshots take
    at most settings.AGREEMENT_JOB_SHARE of the time while coders submit: the last report's
    `seconds` x (1/share - 1), counted from when it was `taken_at`; 0 when that has passed.
    At most half the stale-job timeout (a queued job unclaimed for that long is sent again).

    A job that waits is queued, so no other is enqueued meanwhile (the debounce); when it
    starts it reads every coding submitted until then. The owner's Recompute never waits.
    """
    if taken_at is None or not seconds:
        return 0
    share = settings.AGREEMENT_JOB_SHARE
    left = seconds * (1 / share - 1) - (now - taken_at).total_seconds()
    return min(max(left, 0), jobs.STALE_AFTER.total_seconds() / 2)


_DUE = {}


def _due(every):
    """The statement asking (a job waiting?, `every` new independent codings in?)."""
    if every not in _DUE:
        def build(study, study_in_params, stale):
            alive = Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING,
                                                    heartbeat_at__gte=stale)
            jobs_ = Job.objects.filter(alive, params__study=study_in_params)
            snapshots = AgreementSnapshot.objects.filter(study_id=study)
            last = snapshots.order_by("-last_coding_id").values("last_coding_id")[:1]
            # The spacing counts from the newest full report: estimates take no time.
            newest = snapshots.filter(estimate=False).order_by("-last_coding_id")
            # The every-th new coding (OFFSET every - 1), unordered: there are at least
            # `every` when it exists, and no row past the every-th is read.
            nth = Coding.objects.filter(study_id=study, phase=Coding.Phase.INDEPENDENT,
                                        pk__gt=Coalesce(Subquery(last), Value(0))
                                        ).order_by()[max(every, 1) - 1:max(every, 1)]
            return (Study.objects.filter(pk=study).order_by()
                    .annotate(waiting=Exists(jobs_.filter(kind=KIND)),
                              estimating=Exists(jobs_.filter(kind=ESTIMATE)), due=Exists(nth),
                              taken_at=Subquery(newest.values("created_at")[:1]),
                              seconds=Subquery(newest.values("seconds")[:1]))
                    .values_list("waiting", "estimating", "due", "taken_at", "seconds"))
        _DUE[every] = Statement(Study, build, Slot("study"), Slot("study_in_params", "json"),
                                Slot("stale", datetime))
    return _DUE[every]


def recompute(study, user=None):
    """Take a snapshot now (the owner's "Recompute"): a job, even with nothing new."""
    return jobs.enqueue(KIND, _params(study, force=True), user=user)


def _params(study, force=False):
    return {"study": study.pk, "study_slug": study.slug, "force": force}


def waiting_job(study):
    """The study's queued or running agreement job. A running one whose worker stopped
    reporting is not waited for, or a dead worker would stop every later snapshot."""
    alive = Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING,
                                            heartbeat_at__gte=timezone.now() - jobs.STALE_AFTER)
    return Job.objects.filter(alive, kind=KIND, params__study=study.pk).order_by("-id").first()


def last_failure(study, computed_at=None):
    """The newest agreement job of the study when it failed after the figures shown were
    computed (`computed_at`, ISO 8601, or None when none were): {at, error}, else None.
    The page then says the figures are older than the failed try, not that there are none."""
    job = (Job.objects.filter(kind=KIND, params__study=study.pk).order_by("-id")
           .only("status", "finished_at", "error").first())
    if job is None or job.status != Job.Status.FAILED:
        return None
    at = job.finished_at
    if computed_at and at and at.isoformat() <= computed_at:
        return None
    return {"at": at.isoformat() if at else None, "error": job.error[:300]}


def run_waiting(study):
    """Where tasks run in-process, run the study's waiting agreement job (see above)."""
    job = waiting_job(study)
    if jobs.runs_in_process() and job and job.status == Job.Status.QUEUED:
        jobs.run(job.pk)


def new_codings(study, limit=None, estimates=True):
    """Independent codings (any round) newer than the last snapshot (the last full report
    without `estimates`), counted up to `limit`.

    One query; bounded, so the coder's request pays for at most `limit` rows.
    """
    snapshots = AgreementSnapshot.objects.filter(study=study)
    if not estimates:
        snapshots = snapshots.filter(estimate=False)
    last = snapshots.order_by("-last_coding_id").values("last_coding_id")[:1]
    # No ORDER BY: Coding's default ordering (assignment, revision) would make the bounded
    # count sort every new coding first (1.2 s on a 1M-item study) for rows it only counts.
    # By the coding's own study, a range of its (study, id) index: through the item, the
    # count read every newer coding of every other study (0.6 s on the agreement page of
    # a 1k-item study beside a 100k one).
    rows = Coding.objects.filter(study=study, pk__gt=Coalesce(Subquery(last), Value(0)),
                                 phase=Coding.Phase.INDEPENDENT).order_by()
    return rows[:limit].count() if limit else rows.count()


def take_snapshot(study, *, force=False, progress=None):
    """Compute the report and keep one snapshot per round that has codings.

    Without `force` nothing happens when no independent coding arrived since the last
    snapshot, so a job delivered twice adds no second snapshot.
    """
    # The study's kept counts read, so folded, while coders work even if no page is read
    # (coding/models/tallies.py): their deltas stay few whoever opens a page next.
    tallies(study)
    if not force and new_codings(study, limit=1, estimates=False) == 0:
        return {"snapshots": [], "note": "no new independent codings"}
    started = time.monotonic()
    report = study_report(study, progress=progress, counts=True)
    seconds = time.monotonic() - started
    counts = {round: _counts(part) for round, part in report["rounds"].items()}
    parts = {round: finite(part) for round, part in report["rounds"].items()
             if part["n_codings"]}
    rows = AgreementSnapshot.objects.bulk_create(
        AgreementSnapshot(study=study, round=round, n_codings=part["n_codings"],
                          last_coding_id=report["last_coding_id"], report=part,
                          summary=summarise(part), seconds=seconds, counts=counts[round])
        for round, part in parts.items())
    return {"snapshots": [row.pk for row in rows], "n_codings": report["n_codings"]}


def _counts(part):
    """The questions' coincidences, taken out of the round's report (the snapshot keeps
    them apart: the page never reads them)."""
    return {f"{book['id']}:{q['key']}": q.pop("counts")
            for book in part["codebooks"] for q in book["questions"] if "counts" in q}


def finite(part):
    """The round's report with every number finite: a figure the data cannot give is
    undefined (None), never NaN or infinity, which JSON cannot hold. The coefficients say
    why where they know (`undefined`); a figure that came out non-finite anyway is named in
    `not_finite` by its place in the report, so the page and the API can say so."""
    places = []

    def walk(value, place):
        if isinstance(value, float) and not math.isfinite(value):
            places.append(place)
            return None
        if isinstance(value, dict):
            return {key: walk(item, f"{place}.{key}" if place else str(key))
                    for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(item, f"{place}[{n}]") for n, item in enumerate(value)]
        return value

    kept = walk(part, "")
    if places:
        kept["not_finite"] = places
    return kept


def summarise(part):
    """Alpha per question of one round: all the lines over time need."""
    return {f"{book['id']}:{q['key']}": {key: q["alpha"][key] for key in ("value", "low", "high")}
            | {"units": q["units"]}
            for book in part["codebooks"] for q in book["questions"] if q.get("alpha")}


def latest(study, estimates=False):
    """{round: newest full snapshot} for the rounds that have one; with `estimates`, the
    newest estimate made from it instead where there is one (estimates.py)."""
    found = {}
    for round in ROUNDS:
        rows = AgreementSnapshot.objects.filter(study=study, round=round).defer("counts")
        snapshot = rows.filter(estimate=False).order_by("-created_at", "-id").first()
        if snapshot and estimates:
            newer = (rows.filter(estimate=True, last_coding_id__gt=snapshot.last_coding_id,
                                 report__estimate__base_last_coding_id=snapshot.last_coding_id)
                     .order_by("-last_coding_id", "-id").first())
            snapshot = newer or snapshot
        if snapshot:
            found[round] = snapshot
    return found


def history(study, round):
    """[(n_codings, created_at, summary)] oldest first: the points of the lines over time,
    one per full report (an estimate has no interval to draw)."""
    return list(AgreementSnapshot.objects.filter(study=study, round=round, estimate=False)
                .order_by("created_at", "id").values_list("n_codings", "created_at", "summary"))


def stored_report(study, estimates=False):
    """The newest snapshots as one report (the shape of reliability.study_report), or None.
    With `estimates`, the newest estimates where there are (the page's and the API's
    figures; `estimate` then says from which full report), else full reports only (the
    exports and the methods text: every figure of one computation)."""
    snapshots = latest(study, estimates)
    if not snapshots:
        return None
    newest = max(snapshots.values(), key=lambda s: (s.created_at, s.pk))
    estimate = next((s.report["estimate"] for s in snapshots.values() if s.estimate), None)
    return {"study": study.slug, "computed_at": newest.created_at.isoformat(),
            "n_codings": sum(s.report["n_codings"] for s in snapshots.values()),
            "last_coding_id": max(s.last_coding_id for s in snapshots.values()),
            "estimate": estimate,
            "rounds": {round: snapshots[round].report if round in snapshots else empty_round(round)
                       for round in ROUNDS}}


def empty_round(round):
    return {"round": round, "n_codings": 0, "items": 0, "items_with_two_or_more": 0,
            "coders": [], "decisions": {}, "codebooks": []}

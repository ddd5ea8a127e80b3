"""The assignment queue: which item a coder codes next, and the leases that hold it.

Invariants, kept under concurrency:
- a coder never gets an item they already coded, skipped or hold;
- a main-round item never has more active-or-submitted assignments than its target;
- an item reserved for a coder returns to the pool when the lease lapses.

`Item.taken` counts active plus submitted assignments. It only changes inside a
transaction that holds the item's row lock (SELECT … FOR UPDATE SKIP LOCKED on
PostgreSQL; SQLite's IMMEDIATE transactions serialise writers), or by a
conditional UPDATE that can succeed once per assignment.
"""

import hashlib
import random
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, JSONField, OuterRef, Subquery
from django.utils import timezone
from django.utils.translation import gettext

from coding.access.archive import check_open
from coding.labeling import ranked
from coding.models import Assignment, Coding, Item, Membership, Role
from coding.models.tallies import tallies
from workbench import jobs
from workbench.models import Job
from workbench.prepared import Insert, Slot, Statement, Update, fields, instance

ACTIVE, SUBMITTED, SKIPPED, RELEASED = (
    Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED,
    Assignment.Status.RELEASED,
)
CALIBRATION, MAIN = Item.Round.CALIBRATION, Item.Round.MAIN
# Released expired leases per call of next_item: bounded work on the hot path.
RELEASE_BATCH = 200


def unit_hash(*parts):
    """A stable number in [0, 1) from the parts: the seeded order of items and coders."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def coder_offset(study, coder):
    return unit_hash(study.queue_seed, "coder", coder.pk)


def new_item_fields(study, document, round=MAIN):
    """Queue fields of an item about to be added to the study's pool."""
    return {
        "random_key": unit_hash(study.queue_seed, document.pk),
        "target": study.overlap if round == MAIN else 0,
        "round": round,
    }


def add_item(study, document, codebook, round=MAIN, **fields):
    return Item.objects.create(
        study=study, document=document, snapshot=document.take_snapshot(),
        codebook=codebook, **new_item_fields(study, document, round), **fields,
    )


# The hot statements of next_item, built once per process (workbench.prepared).
_ASSIGNMENT, _ITEM = fields(Assignment), fields(Item)
_CURRENT = Statement(Assignment, lambda study, coder: (
    Assignment.objects.filter(study_id=study, coder_id=coder, status=ACTIVE)
    .order_by("created_at").values_list(*_ASSIGNMENT, *(f"item__{f}" for f in _ITEM))[:1]),
    Slot("study"), Slot("coder"))


def current_assignment(study, coder):
    """The coder's active assignment in the study (at most one: a unique index), with its item."""
    row = _CURRENT.first(study=study.pk, coder=coder.pk)
    if row is None:
        return None
    assignment = instance(Assignment, row[:len(_ASSIGNMENT)])
    assignment.item = instance(Item, row[len(_ASSIGNMENT):])
    return assignment


def next_item(study, coder):
    """The coder's open assignment, or a newly reserved one; None when nothing is left.

    Each call renews the lease of the assignment it returns (a new reservation
    starts with a full one). An archived study hands out nothing (StudyArchived).
    """
    check_open(study)
    assignment = current_assignment(study, coder)
    if assignment is not None:
        extend_lease(assignment, study)
        return assignment
    release_expired(study)
    round = coder_round(study, coder)
    if not round:
        return None
    try:
        return _reserve(study, coder, round)
    except IntegrityError:
        # A parallel request of the same coder reserved an item first (the database holds
        # one active item per coder and study): that one is theirs, nothing else is taken.
        return current_assignment(study, coder)


def extend_lease(assignment, study=None):
    now = timezone.now()
    lease = now + timedelta(minutes=(study or assignment.item.study).lease_minutes)
    _EXTEND.run(assignment=assignment.pk, lease=lease)
    assignment.leased_until = lease


_EXTEND = Update(Assignment, lambda assignment, lease: (
    Assignment.objects.filter(pk=assignment, status=ACTIVE), {"leased_until": lease}),
    Slot("assignment"), Slot("lease", datetime))


@transaction.atomic
def _reserve(study, coder, round):
    served, rank = "", None
    if round == MAIN and (study.screening or {}).get("question"):
        if study.screening.get("stopped"):
            return None  # the owner stopped screening: what is left stays not screened
        item, served, rank = ranked.pick(study, coder, _lock_next_item)
    else:
        item = _lock_next_item(study, coder, round)
    if item is None:
        return None
    now = timezone.now()
    fields = {"status": ACTIVE, "leased_until": now + timedelta(minutes=study.lease_minutes),
              "opened_at": now, "served": served, "served_rank": rank}
    # A lapsed lease of the same coder is taken up again rather than duplicated. Its row
    # is locked without waiting: the coder's own submission of it may hold it this very
    # moment, and that submission then waits for this item's row (queue.retake), which
    # this transaction holds: a deadlock, PostgreSQL ending one of the two. The
    # submission takes the item back itself; here nothing is reserved.
    if item.lapsed:
        lapsed = (Assignment.objects.select_for_update(skip_locked=True, of=("self",))
                  .filter(item=item, coder=coder, status=RELEASED).first())
        if lapsed is None:
            return None
        Assignment.objects.filter(pk=lapsed.pk).update(**fields)
        assignment = Assignment.objects.get(pk=lapsed.pk)
    else:
        # Built once per process (workbench.prepared), as the two statements below; the
        # model's save() would only copy the study, which is given.
        assignment = _INSERT_ASSIGNMENT.create(
            Assignment(item=item, study=study, coder=coder, **fields))
    _TAKE.run(item=item.pk)
    item.taken += 1
    assignment.item = item
    return assignment


_INSERT_ASSIGNMENT = Insert(Assignment)
_TAKE = Update(Item, lambda item: (Item.objects.filter(pk=item), {"taken": F("taken") + 1}),
               Slot("item"))


def _lock_next_item(study, coder, round):
    """Lock the first eligible item in the coder's order, skipping rows others hold.

    The coder walks the study's random permutation (Item.random_key) from their
    own offset and wraps around; higher priority comes first. The item comes
    annotated with `lapsed`: whether the coder holds a released assignment of it.
    """
    offset = coder_offset(study, coder)
    for part in ("from", "before"):
        row = _lock_statement(round, part).first(study=study.pk, coder=coder.pk, offset=offset)
        if row is not None:
            item = instance(Item, row[:-1])
            item.lapsed = row[-1]
            return item
    return None


_LOCKS = {}


def _lock_statement(round, part):
    """The statement locking the next item of `round` at or after the coder's offset
    ("from") or before it ("before", the wrap-around), built once per process."""
    if (round, part) not in _LOCKS:
        def build(study, coder, offset):
            mine = Assignment.objects.filter(item=OuterRef("pk"), coder_id=coder)
            eligible = (Item.objects.alive().filter(study_id=study, round=round)
                        .exclude(Exists(mine.exclude(status=RELEASED))))
            if round == MAIN:
                eligible = eligible.filter(taken__lt=F("target"))
            # The highest priority with an eligible item, computed inside the same statement.
            top = eligible.order_by("-priority").values("priority")[:1]
            eligible = (eligible.filter(priority=Subquery(top))
                        .annotate(lapsed=Exists(mine.filter(status=RELEASED))))
            eligible = eligible.filter(**{f"random_key__{'gte' if part == 'from' else 'lt'}": offset})
            return (eligible.order_by("random_key").select_for_update(skip_locked=True, of=("self",))
                    .values_list(*_ITEM, "lapsed")[:1])
        _LOCKS[round, part] = Statement(Item, build, Slot("study"), Slot("coder"),
                                        Slot("offset", float))
    return _LOCKS[round, part]


def release_expired(study, now=None):
    """Return items whose lease lapsed to the pool. Safe to run from many requests at once."""
    now = now or timezone.now()
    # Runs on every next_item, so it starts from the small partial index of active
    # leases and checks the study row by row: given a join, SQLite's planner would
    # rather walk every item of the study.
    expired = _EXPIRED.rows(study=study.pk, now=now)
    # A lease renewed since it was read is no longer lapsed: the update checks again.
    return release(expired, leased_until__lt=now) if expired else 0


_EXPIRED = Statement(Assignment, lambda study, now: (
    Assignment.objects.filter(Exists(Item.objects.filter(pk=OuterRef("item_id"), study_id=study)),
                              status=ACTIVE, leased_until__lt=now)
    .order_by().values_list("pk", "item_id")[:RELEASE_BATCH]),
    Slot("study"), Slot("now", datetime))


def release(held, **still):
    """Return held items to the pool: `held` is (assignment id, item id) pairs of active
    assignments. Each is released once however many requests try at once, and only if it
    is still active (and matches `still`). Drafts stay on the assignment. Returns how many."""
    released = 0
    for pk, item_id in list(held):
        with transaction.atomic():
            if Assignment.objects.filter(pk=pk, status=ACTIVE, **still).update(
                    status=RELEASED, leased_until=None):
                Item.objects.filter(pk=item_id).update(taken=F("taken") - 1)
                released += 1
    return released


@transaction.atomic
def skip(assignment, reason):
    """The coder passes on the item; the slot goes back to the pool, never to them again."""
    check_open(assignment.item.study)
    if not reason.strip():
        raise ValueError(gettext("Say why you skip this item."))
    if Assignment.objects.filter(pk=assignment.pk, status=ACTIVE).update(
            status=SKIPPED, skip_reason=reason.strip(), finished_at=timezone.now(),
            leased_until=None, draft=None):
        Item.objects.filter(pk=assignment.item_id).update(taken=F("taken") - 1)
        return True
    return False


@transaction.atomic
def retake(assignment, status=ACTIVE):
    """Hold a lapsed or skipped assignment again, as `status` (SUBMITTED when a submission
    takes it back); False if the item filled up meanwhile. Under the item's row lock."""
    item = Item.objects.select_for_update(of=("self",)).get(pk=assignment.item_id)
    if item.round == MAIN and item.taken >= item.target:
        return False
    if Assignment.objects.filter(pk=assignment.pk, status__in=[RELEASED, SKIPPED]).update(
            status=status, finished_at=None,
            **({"opened_at": timezone.now()} if status == ACTIVE else {})):
        Item.objects.filter(pk=item.pk).update(taken=F("taken") + 1)
    assignment.refresh_from_db()
    if status == ACTIVE:
        extend_lease(assignment)
    return True


@transaction.atomic
def assign(item, coder):
    """Reserve a given item for a coder (an owner's hand assignment, demo data, tests)."""
    item = Item.objects.select_for_update(of=("self",)).get(pk=item.pk)
    if item.round == MAIN and item.taken >= item.target:
        raise ValueError(f"{item} already has {item.taken} of {item.target} coders")
    now = timezone.now()
    try:
        with transaction.atomic():
            assignment = Assignment.objects.create(
                item=item, study_id=item.study_id, coder=coder, status=ACTIVE, opened_at=now,
                leased_until=now + timedelta(minutes=item.study.lease_minutes))
    except IntegrityError as error:
        raise ValueError(f"{coder} already holds an item of this study or of {item}") from error
    Item.objects.filter(pk=item.pk).update(taken=F("taken") + 1)
    return assignment


# --- rounds and calibration ---------------------------------------------------

def left_for(study, coder, round, cap=1000):
    """How many items of `round` the coder could still be given, counted up to `cap` (a
    bounded count: the coding page shows "1000+" rather than scan a large study)."""
    mine = Assignment.objects.filter(item=OuterRef("pk"), coder=coder).exclude(status=RELEASED)
    eligible = Item.objects.alive().filter(study=study, round=round).exclude(Exists(mine))
    if round == MAIN:
        eligible = eligible.filter(taken__lt=F("target"))
    return eligible.values("pk")[:cap].count()


def coder_round(study, coder):
    """The round the coder codes now: calibration first, then main once passed or waived.

    One statement, run on every next_item: a row per calibration item (a handful) with
    whether the coder finished it, their latest answers to it and whether their
    calibration is waived; none when the study has no calibration round."""
    rows = _CALIBRATION.rows(study=study.pk, coder=coder.pk)
    if not rows:
        return MAIN
    if not all(finished for _, finished, _, _ in rows):
        return CALIBRATION
    if rows[0][3]:
        return MAIN
    return MAIN if passed(study, [(reference, answers) for reference, _, answers, _ in rows
                                  if answers is not None]) else None


def _calibration_rows(study, coder):
    mine = Assignment.objects.filter(item=OuterRef("pk"), coder_id=coder)
    # The first submission, when independent: revisions after it never change the score
    # (issue 36: each revision moved the shown percentage exactly when an answer matched,
    # an oracle), and a first coding made after reading another coder's is not counted.
    answers = (Coding.objects.filter(assignment__item=OuterRef("pk"), assignment__coder_id=coder,
                                     phase=Coding.Phase.INDEPENDENT)
               .order_by("revision").values("values")[:1])
    waived = Membership.objects.filter(study_id=study, user_id=coder, role=Role.CODER,
                                       calibration_waived=True)
    return (Item.objects.alive().filter(study_id=study, round=CALIBRATION)
            .annotate(finished=Exists(mine.filter(status__in=[SUBMITTED, SKIPPED])),
                      answers=Subquery(answers, output_field=JSONField()),
                      waived=Exists(waived))
            .order_by().values_list("reference_values", "finished", "answers", "waived"))


_CALIBRATION = Statement(Item, _calibration_rows, Slot("study"), Slot("coder"))


def score(answered):
    """Share of the answers matching the reference answers, over [(reference values,
    answers)]; None when nothing is compared."""
    compared = [reference[key] == values.get(key)
                for reference, values in answered for key in (reference or {})]
    return sum(compared) / len(compared) if compared else None


def passed(study, answered):
    found = score(answered)
    return found is not None and found >= study.calibration_threshold


def calibration_score(study, coder):
    """Share of the coder's calibration answers that match the reference answers, each
    item's first submission counted (revisions change nothing)."""
    return score([(reference, answers) for reference, _, answers, _
                  in _CALIBRATION.rows(study=study.pk, coder=coder.pk) if answers is not None])


# --- reliability sample -------------------------------------------------------

REBUILD = "rebuild_disagreements"  # the job kind (coding.jobs)


def sync_targets(study, user=None):
    """After an overlap change: items in the reliability sample want `overlap` coders.

    Which items are complete changed with their targets, and so did their stored
    disagreements: they are rebuilt by a job (coding.jobs, started once this transaction
    commits; `user` follows its progress), not in the request, since at 100,000 items
    that takes minutes. Until it is done `rebuilding(study)` says so, and the review list
    and the queue page show it."""
    changed = Item.objects.filter(study=study, round=MAIN, in_reliability_sample=True).exclude(
        target=study.overlap).update(target=study.overlap)
    changed += Item.objects.filter(study=study, round=MAIN, in_reliability_sample=False).exclude(
        target=1).update(target=1)
    if changed and not rebuilding(study, status=(Job.Status.QUEUED,)):
        # A rebuild still queued will read the new targets; a running one may have passed
        # items whose target changed now, so another one follows it.
        jobs.enqueue(REBUILD, {"study": study.pk}, user=user)
    return changed


def rebuilding(study, status=(Job.Status.QUEUED, Job.Status.RUNNING)):
    """The newest queued or running job rebuilding the study's stored disagreements, or
    None. One query on the small set of unfinished jobs."""
    return (Job.objects.filter(kind=REBUILD, status__in=status, params__study=study.pk)
            .order_by("-pk").first())


def stratum(item, field):
    value = item.snapshot.content.get(field) if field != "kind" else item.document.kind
    if isinstance(value, list):
        value = value[0] if value else None
    return str(value)


@transaction.atomic
def draw_reliability_sample(study, *, plan, share=None, count=None, stratify_by="", seed=None,
                            user=None):
    """Choose which main-round items get `overlap` coders; the rest get one.

    Drawn at random from `seed` (recorded on the study), in proportion to each
    stratum of `stratify_by` when given. Items already coded by more than one
    coder stay in the sample. `plan(study)` gives the sample-size plan the draw answered,
    kept with it (coding.actions.sample passes the agreement report's).
    """
    items = list(Item.objects.alive().filter(study=study, round=MAIN)
                 .select_related("snapshot", "document").order_by("pk"))
    if (share is None) == (count is None):
        raise ValueError(gettext("Give either a share or a count of items."))
    size = round(share * len(items)) if share is not None else count
    if not 0 <= size <= len(items):
        raise ValueError(gettext("The sample must hold between 0 and %(pool)s items, not "
                                 "%(size)s.") % {"pool": len(items), "size": size})
    seed = study.queue_seed if seed is None else seed
    chosen = _draw(items, size, stratify_by, random.Random(seed))
    chosen |= {i.pk for i in items if i.taken > 1}
    Item.objects.filter(pk__in=chosen).update(in_reliability_sample=True)
    Item.objects.filter(study=study, round=MAIN).exclude(pk__in=chosen).update(
        in_reliability_sample=False)
    study.reliability_sample = {
        "share": share, "count": count, "stratify_by": stratify_by, "seed": seed,
        "size": len(chosen), "pool": len(items), "drawn_at": timezone.now().isoformat(),
        # How far coding had gone when the sample was drawn, and the plan it answered.
        "coded_before": sum(1 for i in items if i.taken > 0),
        "kept_for_overlap": sum(1 for i in items if i.taken > 1),
        "drawn_by": getattr(user, "username", None), "plan": plan(study),
    }
    study.save(update_fields=["reliability_sample"])
    sync_targets(study, user)
    return chosen


def _draw(items, size, stratify_by, rng):
    if not stratify_by:
        return {i.pk for i in rng.sample(items, size)}
    groups = {}
    for item in items:
        groups.setdefault(stratum(item, stratify_by), []).append(item)
    # Largest-remainder allocation keeps each stratum's share of the sample.
    quotas = {key: size * len(group) / len(items) for key, group in sorted(groups.items())}
    allocation = {key: int(q) for key, q in quotas.items()}
    leftover = size - sum(allocation.values())
    for key in sorted(quotas, key=lambda k: (allocation[k] - quotas[k], k))[:leftover]:
        allocation[key] += 1
    return {i.pk for key, group in sorted(groups.items())
            for i in rng.sample(group, allocation[key])}


# --- the owner's view -----------------------------------------------------------

def queue_summary(study):
    """Per coder: done, skipped, in progress, median seconds; per round: what is left.

    A few queries, whatever the study's size or number of coders (issues 13 and 42): the
    coders; the study's tallies (coding/models/tallies.py: its items by round and state,
    each coder's assignments by status and first revision's seconds, kept as they are
    written rather than counted on each view); the calibration codings
    (`calibration_scores`) and items; the items held now (`held_items`).
    """
    coders = list(Membership.objects.filter(study=study, role=Role.CODER, deleted_at__isnull=True)
                  .select_related("user").order_by("user__username"))
    counts = tallies(study)
    work = coder_work(study, counts)
    scores = calibration_scores(study)
    per_coder = [{
        "coder": m.user, "calibration_waived": m.calibration_waived,
        **{k: work.get(m.user_id, {}).get(k, 0) for k in ("done", "skipped", "active")},
        "median_seconds": median(work.get(m.user_id, {}).get("seconds", {})),
        "calibration_score": scores.get(m.user_id),
    } for m in coders]
    # `taken` counts active plus submitted assignments (kept so under the item's lock), so
    # an item is complete once taken >= what it wants, unless one of those is still
    # active: those few items (one per coder at most) are looked at apart, in held_items.
    counted = {round: {"items": sum(n for name, n in counts.items()
                                    if name.startswith(f"items:{round}:")),
                       "in_sample": counts.get(f"sample:{round}", 0)}
               for round in (MAIN, CALIBRATION)}
    counted[MAIN]["complete"] = counts.get("complete:main", 0)
    # A calibration item is complete when every coder has submitted it: counted here, as
    # the number of coders changes; the calibration round is a handful of items.
    counted[CALIBRATION]["complete"] = Item.objects.alive().filter(
        study=study, round=CALIBRATION, taken__gte=len(per_coder)).count()
    for held in held_items(study):
        if held["deleted_at"] is None:
            need = held["target"] if held["round"] == MAIN else len(per_coder)
            if held["taken"] >= need > held["taken"] - held["active"]:
                counted[held["round"]]["complete"] -= 1
    rounds = []
    for round in (CALIBRATION, MAIN):
        found = counted.get(round, {})
        row = {"round": round, **{k: found.get(k, 0) for k in ("items", "in_sample", "complete")}}
        row["left"] = row["items"] - row["complete"]
        rounds.append(row)
    return {"coders": per_coder, "rounds": rounds}


def coder_work(study, counts=None):
    """{coder id: {"done", "skipped", "active": how many assignments; "seconds": {seconds
    spent on a first revision: how many}}}, from the study's tallies (`counts`, read if
    not given): each coder's assignments by status and by the first revision's seconds
    (copied onto the assignment as it is recorded). The histogram gives the exact median
    without sending every coding's seconds to Python: a coder spends a few hundred
    distinct numbers of seconds, not 100,000."""
    names = {SUBMITTED: "done", SKIPPED: "skipped", ACTIVE: "active"}
    work = {}
    for name, n in (tallies(study) if counts is None else counts).items():
        kind, _, rest = name.partition(":")
        if kind not in ("work", "spent"):
            continue
        coder, value = rest.split(":", 1)
        mine = work.setdefault(int(coder), {"seconds": {}})
        if kind == "work" and value in names:
            mine[names[value]] = mine.get(names[value], 0) + n
        elif kind == "spent":
            mine["seconds"][int(value)] = mine["seconds"].get(int(value), 0) + n
    return work


def median(histogram):
    """statistics.median of the values a {value: how many times} histogram holds (the
    middle value, or the mean of the two middle ones); None when it is empty."""
    total = sum(histogram.values())
    if not total:
        return None
    middle, seen = [], 0
    for value in sorted(histogram):
        seen += histogram[value]
        while len(middle) < 2 and seen > ((total - 1) // 2, total // 2)[len(middle)]:
            middle.append(value)
    return middle[0] if total % 2 else (middle[0] + middle[1]) / 2


def calibration_scores(study):
    """calibration_score for every coder of the study at once: {coder id: share}; a coder
    without calibration codings is missing. Calibration items are few, so their codings
    are read in one query whatever the size of the main round."""
    first = {}
    for coder_id, item_id, reference, values in (
            Coding.objects.filter(assignment__item__study=study,
                                  assignment__item__round=CALIBRATION,
                                  phase=Coding.Phase.INDEPENDENT)
            .order_by("revision").values_list("assignment__coder", "assignment__item",
                                              "assignment__item__reference_values", "values")):
        first.setdefault((coder_id, item_id), (reference or {}, values))
    compared = {}
    for (coder_id, _), (reference, values) in first.items():
        compared.setdefault(coder_id, []).extend(reference[key] == values.get(key)
                                                 for key in reference)
    return {coder_id: sum(c) / len(c) for coder_id, c in compared.items() if c}


def held_items(study):
    """The items someone holds now, with how many active assignments each: at most one per
    coder (a unique index), read through that index. Summaries that count submitted
    codings from `Item.taken` (active plus submitted) subtract these."""
    fields = ("round", "taken", "target", "deleted_at")
    rows = (Assignment.objects.filter(study=study, status=ACTIVE)
            .values("item", *(f"item__{f}" for f in fields)).order_by()
            .annotate(active=Count("pk")))
    return [{"item": row["item"], "active": row["active"], **{f: row[f"item__{f}"] for f in fields}}
            for row in rows]

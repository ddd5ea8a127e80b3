"""Serving a screening study's records: by the screener's own ranking, or at random.

The queue (coding.labeling.queue) calls `pick` for the main round of a study that screens
(Study.screening names a question). The screener's ranking (ScreeningRanking, written by
coding.screening.rankings from their own labels only) is read as it stands: a retrain
running meanwhile replaces it whole, so the next record never waits for a model. The first
eligible record in ranking order is locked as the random walk locks one (skipping rows
others hold); what is eligible is the queue's rule, unchanged (not yet taken by this
screener, under its overlap target, not excluded).

Served at random instead, and marked so on the assignment: a share of records
(`random_share`, for the recall estimate of coding.screening.stopping), every record
before the screener has a ranking (no include and exclude yet), and items the owners put
in front (priority above 0) while any is left. A random serve is the queue's own random
walk, whose order no label touches. A ranking that no longer holds an eligible record in its
first HEAD + WALK ids (its retrains far behind) is left for the random walk, marked unranked.
"""

import random

import numpy as np
from django.db.models import Exists, F, OuterRef

from coding.models import Assignment, Item, ScreeningRanking
from workbench.prepared import fields, instance

RANKED, RANDOM, UNRANKED = "ranked", "random", "unranked"
CHUNK = 100  # ranked ids checked per statement
# Ranked ids read past the head at most: a ranking many retrains behind (no worker) falls
# back to random order rather than walk the whole study, two statements per CHUNK.
WALK = 1000
_draw = random.SystemRandom()
_ITEM = fields(Item)


def pick(study, coder, lock_random):
    """(item or None, how it was served, its place in the ranking or None)."""
    share = float(study.screening.get("random_share", 0.05))
    if _eligible(study, coder).filter(priority__gt=0).order_by().exists() or \
            _draw.random() < share:
        item = lock_random(study, coder, Item.Round.MAIN)
        return item, (RANDOM if item is not None and item.priority == 0 else UNRANKED), None
    ranking = (ScreeningRanking.objects.filter(study_id=study.pk, coder_id=coder.pk)
               .values_list("head", flat=True).first())
    if ranking is not None:
        found = _first_open(study, coder, np.frombuffer(bytes(ranking), dtype="<i8"), 0)
        if found is None:
            rest = (ScreeningRanking.objects.filter(study_id=study.pk, coder_id=coder.pk)
                    .values_list("rest", flat=True).first())
            found = _first_open(study, coder,
                                np.frombuffer(bytes(rest or b""), dtype="<i8")[:WALK],
                                len(ranking) // 8)
        if found is not None:
            return found[0], RANKED, found[1]
    return lock_random(study, coder, Item.Round.MAIN), UNRANKED, None


def _first_open(study, coder, ids, offset):
    """(item, place) of the first eligible id in `ids`, locked; None when none is."""
    mine = Assignment.objects.filter(item=OuterRef("pk"), coder_id=coder.pk)
    eligible = _eligible(study, coder)
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start:start + CHUNK].tolist()
        open_ids = _open_among(study, coder, chunk)
        for place, pk in enumerate(chunk, start=offset + start + 1):
            if pk not in open_ids:
                continue
            rows = (eligible.filter(pk=pk).order_by()
                    .annotate(lapsed=Exists(mine.filter(status=Assignment.Status.RELEASED)))
                    .select_for_update(skip_locked=True, of=("self",))
                    .values_list(*_ITEM, "lapsed")[:1])
            row = next(iter(rows), None)
            if row is not None:
                item = instance(Item, row[:-1])
                item.lapsed = row[-1]
                return item, place
    return None


def _eligible(study, coder):
    """The queue's rule for the main round: not yet the coder's, under target, not excluded."""
    mine = Assignment.objects.filter(item=OuterRef("pk"), coder_id=coder.pk)
    return (Item.objects.alive().filter(study_id=study.pk, round=Item.Round.MAIN,
                                        taken__lt=F("target"))
            .exclude(Exists(mine.exclude(status=Assignment.Status.RELEASED))))


def _open_among(study, coder, ids):
    """Which of `ids` the queue's rule lets the coder take, by two lookups on keys (the
    items by id, then the coder's assignments of them): cheap whatever the planner's
    statistics (before ANALYZE, the whole rule with an IN list took 30 ms at 30,000 items,
    the study's items scanned)."""
    candidates = {pk for pk, taken, target in Item.objects.filter(
        pk__in=ids, study_id=study.pk, round=Item.Round.MAIN, deleted_at__isnull=True)
        .order_by().values_list("pk", "taken", "target") if taken < target}
    if not candidates:
        return candidates
    held = set(Assignment.objects.filter(coder_id=coder.pk, item_id__in=candidates)
               .exclude(status=Assignment.Status.RELEASED).order_by()
               .values_list("item_id", flat=True))
    return candidates - held

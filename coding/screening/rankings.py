"""Each screener's ranking, trained on their own labels only, and the job that refreshes it.

The research rule (design brief, screening): the order a screener sees never depends on
another screener's labels of records they have not screened. So a ranking reads one
screener's own submitted answers to the screening question (their latest revision per
record) and the study's prior labels (a file's `label_included`, kept as an outside rater's
answers: nobody's screening), never another screener's answers, decisions or the
adjudicator's work. A ranking needs one include and one exclude; before that the queue
serves that screener in random order.

The features of the study's records (coding.screening.model.features, of what a coder sees:
blinded fields removed) are kept in a file per study under VAR_DIR/cache/screening, a row
per snapshot content (its SHA-256): a cache, rebuilt when missing, appended to when records
were added since. A retrain reads it,
fits, ranks the records that screener has not screened and replaces their ranking row in one
statement; the queue serves the previous row until then.

`schedule` runs after a screener's submission commits: one job per screener at a time
(a job queued or running for them absorbs the new label, since it re-reads the labels
when it starts and trains again when more arrived while it ran).
"""

import hashlib
import os
import threading
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from scipy import sparse

from coding.access.blinding import coder_view
from coding.models import Coding, Item, RaterCoding, ScreeningRanking
from coding.models.screening import HEAD
from coding.screening import model as screening_model
from coding.screening.setup import settings_of
from ingest.models import Snapshot
from workbench import jobs
from workbench.models import Job

KIND = "screening_rank"
BATCH = 2000  # snapshots read at a time when features are built
AGAIN = 3  # trainings a job runs at most when labels keep arriving meanwhile


def text_of(study, content):
    """What the model reads of a record: the text a coder sees (blinded fields removed)."""
    view = coder_view(study, content)
    posts = view.get("posts") if isinstance(view.get("posts"), list) else []
    bodies = " ".join(str(p.get("body") or "") for p in posts[:20] if isinstance(p, dict))
    return " ".join([screening_model.text_of(view), bodies])


def _cache_path(study):
    """The study's features file, named by what decides what a coder sees (its blinding):
    a change of blinded fields starts a new file."""
    seen = hashlib.blake2b(repr((sorted(study.blinded_fields or []), study.blind_authors))
                           .encode(), digest_size=6).hexdigest()
    return Path(settings.VAR_DIR) / "cache" / "screening" / f"study-{study.pk}-{seen}.npz"


def _key(sha256):
    """A snapshot's row in the cache: the first 64 bits of its content's SHA-256. Features
    depend on the content alone, so a database rebuilt with the same ids never reads
    another record's row."""
    return int.from_bytes(bytes.fromhex(sha256[:16]), "big", signed=True)


def features(study, snapshots):
    """The feature rows of the snapshots ((id, sha256) pairs, in the order wanted), from the
    study's cache file, computing and appending what it lacks."""
    path = _cache_path(study)
    cached, matrix = np.zeros(0, dtype=np.int64), None
    if path.exists():
        try:
            with np.load(path) as stored:
                cached = stored["keys"]
                matrix = sparse.csr_matrix((stored["data"], stored["indices"], stored["indptr"]),
                                           shape=tuple(stored["shape"]))
        except (OSError, ValueError, KeyError):
            cached, matrix = np.zeros(0, dtype=np.int64), None
    keys = np.array([_key(sha) for _, sha in snapshots], dtype=np.int64)
    snapshot_of = dict(zip(keys.tolist(), (pk for pk, _ in snapshots)))
    missing = np.setdiff1d(keys, cached)
    if len(missing):
        parts = [] if matrix is None else [matrix]
        for start in range(0, len(missing), BATCH):
            chunk = [snapshot_of[key] for key in missing[start:start + BATCH].tolist()]
            contents = dict(Snapshot.objects.filter(pk__in=chunk).values_list("pk", "content"))
            parts.append(screening_model.features([text_of(study, contents[pk])
                                                   for pk in chunk]))
        cached = np.concatenate([cached, missing])
        matrix = sparse.vstack(parts, format="csr")
        by_key = np.argsort(cached, kind="stable")
        cached, matrix = cached[by_key], matrix[by_key]
        path.parent.mkdir(parents=True, exist_ok=True)
        # Two screeners' jobs may build it at once: each writes its own file, then renames.
        partial = path.with_name(f"{path.stem}.{os.getpid()}-{threading.get_ident()}.part.npz")
        np.savez(partial, keys=cached, data=matrix.data, indices=matrix.indices,
                 indptr=matrix.indptr, shape=np.array(matrix.shape))
        partial.replace(path)
    return matrix[np.searchsorted(cached, keys)]


def labels_of(study, coder):
    """{item id: 1 include / 0 exclude} from the screener's own latest answers, and the id
    of the last of their codings read."""
    setup = settings_of(study)
    include = set(setup["include"])
    latest, last = {}, 0
    rows = (Coding.objects.filter(study=study, assignment__coder=coder,
                                  assignment__item__deleted_at__isnull=True)
            .order_by("assignment__item_id", "revision")
            .values_list("pk", "assignment__item_id", "values"))
    for pk, item, values in rows.iterator(chunk_size=5000):
        last = max(last, pk)
        value = (values or {}).get(setup["question"])
        if value is None:
            latest.pop(item, None)
            continue
        chosen = value if isinstance(value, list) else [value]
        latest[item] = int(any(str(v) in include for v in chosen))
    return latest, last


def priors_of(study):
    """{item id: 1 / 0} from the study's prior labels (the prior rater's answers), if any."""
    setup = settings_of(study)
    if not setup.get("prior_rater"):
        return {}
    include = set(setup["include"])
    rows = RaterCoding.objects.filter(rater__study=study, rater__name=setup["prior_rater"],
                                      question_key=setup["question"],
                                      item__deleted_at__isnull=True)
    return {item: int(str(value) in include) for item, value
            in rows.values_list("item_id", "value")}


def retrain(study, coder):
    """Train the screener's model and replace their ranking; the row, or None when the
    labels do not hold both an include and an exclude yet."""
    started = time.perf_counter()
    setup = settings_of(study)
    own, last = labels_of(study, coder)
    labels = {**priors_of(study), **own}
    if len(set(labels.values())) < 2:
        ScreeningRanking.objects.filter(study=study, coder=coder).delete()
        return None
    items = list(Item.objects.alive().filter(study=study, round=Item.Round.MAIN)
                 .order_by("pk").values_list("pk", "snapshot_id", "snapshot__sha256",
                                             "taken", "target"))
    ids = np.array([item[0] for item in items], dtype=np.int64)
    counts = features(study, [(snapshot, sha) for _, snapshot, sha, _, _ in items])
    position = {pk: row for row, pk in enumerate(ids.tolist())}
    known = [(position[pk], value) for pk, value in labels.items() if pk in position]
    scores = screening_model.ranker(setup["model"], study.queue_seed).scores(
        counts, [row for row, _ in known], [value for _, value in known])
    # Left out: what the screener screened, and records already with all the screeners
    # their overlap wants (other screeners' assignments, never their labels), so the queue
    # does not walk past them (with one screener per record, most of what others took).
    left_out = np.array([taken >= target for _, _, _, taken, target in items], dtype=bool)
    left_out[[position[pk] for pk in own if pk in position]] = True
    tiebreak = (ids * 2654435761 + study.queue_seed) % 2**32
    order = screening_model.order(scores, tiebreak)
    ranked = ids[order[~left_out[order]]].astype("<i8")
    fields = {
        "model": setup["model"], "labels": len(labels), "includes": sum(labels.values()),
        "last_coding_id": last, "trained_at": timezone.now(), "ranked": len(ranked),
        "head": ranked[:HEAD].tobytes(), "rest": ranked[HEAD:].tobytes(),
        "seconds": time.perf_counter() - started,
    }
    ranking, _ = ScreeningRanking.objects.update_or_create(study=study, coder=coder,
                                                           defaults=fields)
    return ranking


def stale(study, coder):
    """Whether the screener has codings their ranking has not read."""
    seen = (ScreeningRanking.objects.filter(study=study, coder=coder)
            .values_list("last_coding_id", flat=True).first()) or 0
    return Coding.objects.filter(study=study, assignment__coder=coder, pk__gt=seen).exists()


def _waiting(study, coder):
    alive = Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING,
                                            heartbeat_at__gte=timezone.now() - jobs.STALE_AFTER)
    return Job.objects.filter(alive, kind=KIND, params__study=study.pk,
                              params__coder=coder.pk).exists()


def schedule(study, coder):
    """After a screener's label: a retrain job unless one is waiting for them; the job or None."""
    if not settings_of(study).get("question") or _waiting(study, coder):
        return None
    return jobs.enqueue(KIND, {"study": study.pk, "coder": coder.pk})


def run(study, coder, report=None):
    """The job: train, and again while new labels arrived meanwhile (at most AGAIN times)."""
    ranking = None
    for _ in range(AGAIN):
        ranking = retrain(study, coder)
        if report:
            report(1, 1, f"{ranking.ranked:,} records ranked" if ranking else
                   "waiting for an include and an exclude")
        if not stale(study, coder):
            break
    return {"study": study.slug, "coder": coder.pk,
            "ranked": ranking.ranked if ranking else 0,
            "seconds": round(ranking.seconds, 3) if ranking else 0}

"""Replaying a fully labelled set as a screener would: how much reading the ranking saves.

`simulate` starts from prior records (by default one include and one exclude drawn with the
seed, as ASReview's simulations do), then repeatedly ranks the records not yet screened with
the chosen model trained on every label so far and "screens" the top one, its true label
being revealed; a share of records may be served at random as the queue does. It reports
what coding.screening.stopping.figures reports (records to 95% and 100% recall, WSS@95,
RRF@10) and where the stopping rule would have stopped, with the true recall there.

Pure: the caller gives texts and labels (a CSV through `read_labelled`, or a labelled
study's records). Retraining after every record is what a screener gets from the queue; past
the first RETRAIN_STEP records the replay retrains every few records, so a 100,000-record
replay finishes.
"""

import csv
import time

import numpy as np
from django.utils.translation import gettext

from coding.screening import model as screening_model
from coding.screening import stopping

RETRAIN_STEP = 1000


class LabelledSetError(ValueError):
    """A file that cannot be replayed; the message names the line or column."""


def read_labelled(path, label_column="label_included"):
    """(texts, labels, record ids) of an ASReview-style CSV: `title`, `abstract`, a 0/1
    label column; every record must be labelled."""
    texts, labels, ids = [], [], []
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = {name.strip().lower(): name for name in reader.fieldnames or []}
        for needed in ("title", label_column):
            if needed not in columns:
                raise LabelledSetError(gettext("%(file)s: no column “%(column)s”.")
                                       % {"file": path, "column": needed})
        for line, row in enumerate(reader, start=2):
            raw = (row.get(columns[label_column]) or "").strip()
            if raw not in ("0", "1", "0.0", "1.0"):
                raise LabelledSetError(gettext("%(file)s, line %(line)s: %(column)s is "
                                               "“%(value)s”, not 0 or 1.")
                                       % {"file": path, "line": line, "column": label_column,
                                          "value": raw})
            texts.append(screening_model.text_of({
                "title": row.get(columns["title"]),
                "abstract": row.get(columns.get("abstract", ""), "")}))
            labels.append(int(float(raw)))
            ids.append(row.get(columns.get("record_id", ""), str(line - 1)))
    if not labels or len(set(labels)) < 2:
        raise LabelledSetError(gettext("%(file)s: a replay needs both included and excluded "
                                       "records.") % {"file": path})
    return texts, np.asarray(labels), ids


def draw_priors(labels, seed, included=1, excluded=1):
    """Row numbers of the prior records: `included` includes and `excluded` excludes."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(labels)
    return ([int(i) for i in rng.choice(np.flatnonzero(labels == 1), included, replace=False)]
            + [int(i) for i in rng.choice(np.flatnonzero(labels == 0), excluded,
                                          replace=False)])


def replay(counts, labels, priors, *, model=screening_model.DEFAULT, seed=0, random_share=0.0,
           every=None):
    """Yield (row number, how it was served) in screening order after the priors. The model
    is retrained after every record for the first RETRAIN_STEP records screened, then after
    every 2, 3 … records (one more per RETRAIN_STEP), unless `every` is given."""
    labels = np.asarray(labels)
    total = len(labels)
    ranker = screening_model.ranker(model, seed)
    weighted = ranker.prepare(counts)
    rng = np.random.default_rng(seed + 7919)
    screened = np.zeros(total, dtype=bool)
    screened[priors] = True
    known = list(priors)
    tiebreak = rng.permutation(total)
    while len(known) < total:
        if len(set(labels[known].tolist())) > 1:
            scores = ranker.fit_scores(weighted, known, labels[known])
            ranked = screening_model.order(scores, tiebreak)
        else:
            ranked = tiebreak
        ranked = ranked[~screened[ranked]]
        batch = every or 1 + len(known) // RETRAIN_STEP
        for row in ranked[:batch].tolist():
            how = "ranked"
            if random_share and rng.random() < random_share:
                row, how = int(rng.choice(np.flatnonzero(~screened))), "random"
            if screened[row]:
                continue
            screened[row] = True
            known.append(row)
            yield row, how


def simulate(texts, labels, *, seed=0, priors=None, model=screening_model.DEFAULT,
             random_share=0.0, target=0.95, confidence=0.95, counts=None, full=False):
    """One replay's figures (coding.screening.stopping.figures), the stopping rule's stop
    and true recall there, the recall after each record, and the seconds it took. The
    replay ends once every relevant record is found and the rule has stopped (`full`: at
    the last record); the records after that are counted as read in random order."""
    started = time.perf_counter()
    labels = np.asarray(labels)
    counts = screening_model.features(texts) if counts is None else counts
    priors = draw_priors(labels, seed) if priors is None else list(priors)
    total = len(labels) - len(priors)
    relevant = int(labels.sum() - labels[priors].sum())
    order, served, seq, stopped, found = [], [], [], None, 0
    for row, how in replay(counts, labels, priors, model=model, seed=seed,
                           random_share=random_share):
        order.append(row)
        served.append(how)
        seq.append(int(labels[row]))
        found += seq[-1]
        if stopped is None and stopping.stop_test(seq, total, target, confidence)["stop"]:
            stopped = len(seq)
        if not full and found == relevant and stopped is not None:
            break
    rest = np.setdiff1d(np.arange(len(labels)), np.concatenate([priors, order]))
    rng = np.random.default_rng(seed)
    tail = labels[rng.permutation(rest)].tolist() if len(rest) else []
    sequence = np.asarray(seq + tail, dtype=np.int64)
    curve = stopping.curve(sequence)
    return {
        "seed": seed, "model": model, "priors": priors,
        **stopping.figures(sequence, total, relevant),
        "stop": stopped,
        "stop_recall": float(curve[stopped - 1]) / relevant if stopped and relevant else None,
        "stop_saved": (1 - stopped / total) if stopped else None,
        "recall": (curve / max(relevant, 1)).tolist(),
        "order": order, "served": served,
        "seconds": time.perf_counter() - started,
    }


def labelled_study(study, question, include):
    """(texts, labels, item ids) of a study's records whose screening decision is final, the
    text as coders see it, the label from the decision: what a replay of the study reads."""
    from coding.models import Decision
    from coding.screening.rankings import text_of
    from coding.screening.setup import is_include

    decided = dict(Decision.objects.current().filter(
        item__study=study, item__deleted_at__isnull=True, question_key=question)
        .exclude(value=None).values_list("item_id", "value"))
    texts, labels, ids = [], [], []
    rows = (study.items.filter(pk__in=list(decided)).order_by("pk")
            .values_list("pk", "snapshot__content"))
    for pk, content in rows.iterator(chunk_size=2000):
        texts.append(text_of(study, content))
        labels.append(int(is_include(decided[pk], include)))
        ids.append(pk)
    return texts, np.asarray(labels, dtype=np.int64), ids


def summary(runs):
    """The mean of each figure over the replays, and the replays' figures (no curves)."""
    keys = ("records_to_95", "records_to_100", "wss_95", "rrf_10", "stop", "stop_recall")

    def mean(key):
        values = [run[key] for run in runs if run[key] is not None]
        return round(float(np.mean(values)), 4) if values else None

    return {"counts": {"seeds": len(runs), **{key: mean(key) for key in keys}},
            "runs": [{key: run[key] for key in ("seed", "priors", *keys)} for run in runs]}

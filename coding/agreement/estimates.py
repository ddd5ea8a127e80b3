"""Alpha brought up to date in a second or two, between full reports (issue 42).

A full report of a million-item study reads every coding and takes about a minute of
CPU, with its bootstrap intervals; it is spaced out so the coders keep the CPU
(snapshots.rest_left). Between two, the page would show figures that are minutes old.

Alpha's coincidence matrix is a sum over units: each unit adds its pairs of values.
So a full snapshot keeps, per question, its matrix (`AgreementSnapshot.counts`,
reliability.coincidence_counts), and an estimate reads only the items that got an
independent coding since: their codings as the full report saw them (`upto` its newest
coding id) are taken out, and as they are now put back. Alpha, its units and its
values follow at once, exactly as a full report would give them for the same codings;
nothing else does. The intervals, kappa, the coefficients, drift and the comparison
with decisions stay those of the full report, and the page says so.

What an estimate does not see, until the next full report: an item removed or moved to
another round, a coding the report could not yet see because its transaction had not
committed, a value only a decision gave. A codebook whose version changed since the full
report gets no estimate. Estimates always start from the newest full report, never from
an estimate, so no error adds up.
"""

import copy
import time
import warnings

import numpy as np
from django.db import transaction
from django.db.models import Max

from coding.agreement import alpha as agreement
from coding.agreement.metrics import Variable, alpha_distance
from coding.agreement.reliability import (
    Scale, _hashable, _independent, _one_blas_thread, _questions, coincidence_counts, unit_codes,
)
from coding.agreement.sample_size import verdict
from coding.agreement.snapshots import finite, summarise
from coding.labeling.codings import independent_codings
from coding.models import AgreementSnapshot, Coding
from coding.models import Question as QuestionModel
from coding.models.tallies import tallies

# New independent codings beyond which no estimate is made: reading that many items
# twice nears the cost of the full report, which is then due anyway.
MOST_NEW = 50_000
# Coincidences this close to 0 after taking units out are 0 (sums of fractions such
# as 1/2 and 1/3 do not cancel exactly).
ZERO = 1e-9


def newest_full(study):
    """{round: the newest full snapshot}, each of one take (the same newest coding)."""
    rows = list(AgreementSnapshot.objects.filter(study=study, estimate=False)
                .order_by("-last_coding_id", "-id")[:2])
    if not rows:
        return {}
    return {row.round: row for row in rows if row.last_coding_id == rows[0].last_coding_id}


def estimate(study):
    """Store an estimate of each round the newest full report has, from the independent
    codings since; {"snapshots": [ids], "new_codings": n} or {"snapshots": [], "note"}."""
    started = time.monotonic()
    tallies(study)  # read, so folded, as take_snapshot does
    bases = newest_full(study)
    if not bases or not all(base.counts for base in bases.values()):
        return {"snapshots": [], "note": "no full report with coincidences to start from"}
    last = next(iter(bases.values())).last_coding_id
    new = Coding.objects.filter(study=study, pk__gt=last,
                                phase=Coding.Phase.INDEPENDENT).order_by()
    n_new = new[:MOST_NEW + 1].count()
    if not n_new:
        return {"snapshots": [], "note": "no new independent codings"}
    if n_new > MOST_NEW:
        return {"snapshots": [], "note": f"more than {MOST_NEW:,} new codings: the full "
                                         "report is due"}
    # Up to the newest coding there now: what commits meanwhile is the next estimate's.
    top = new.aggregate(top=Max("pk"))["top"]
    items = new.filter(pk__lte=top).values("assignment__item_id")
    books = {book.pk: book for book in study.codebooks.all()}
    questions = {pk: _questions(book) for pk, book in books.items()}
    with _one_blas_thread():
        now, _, _ = _independent(study, questions, independent_codings(study, upto=top)
                                 .filter(assignment__item_id__in=items))
        then, _, _ = _independent(study, questions, independent_codings(study, upto=last)
                                  .filter(assignment__item_id__in=items))
        rows = [_estimated(base, now, then, books, n_new, time.monotonic() - started)
                for base in bases.values()]
    for row in rows:
        row.last_coding_id = top
    # Only the newest estimate is ever shown (history draws full reports), and one may
    # follow every few codings: each replaces the last rather than pile up copies of the
    # full report's figures.
    with transaction.atomic():
        AgreementSnapshot.objects.filter(study=study, estimate=True).delete()
        rows = AgreementSnapshot.objects.bulk_create(rows)
    return {"snapshots": [row.pk for row in rows], "new_codings": n_new}


def _estimated(base, now, then, books, n_new, seconds):
    """The estimate snapshot of `base`'s round."""
    part = copy.deepcopy(base.report)
    round = base.round
    n_codings = base.n_codings
    for book in part["codebooks"]:
        after, before = now.get((round, book["id"])), then.get((round, book["id"]))
        n_codings += (after.n_codings if after else 0) - (before.n_codings if before else 0)
        version = books[book["id"]].current_version() if book["id"] in books else None
        if version is None or version.number != book["version"]:
            book["estimate"] = "codebook changed since the full report: no estimate"
            continue
        for question in book["questions"]:
            stored = base.counts.get(f"{book['id']}:{question['key']}")
            column = _column(after, question["key"]) or _column(before, question["key"])
            if stored is None or not question.get("alpha") or column is None:
                continue  # measured as in the full report, or nothing of it changed
            key = question["key"]
            merged = _merged(stored, _batch(before, key), _batch(after, key))
            value = alpha_of_counts(column.question, merged)
            question["alpha"] |= {"value": value, "point_verdict": verdict(value),
                                  "estimate": True}
            question["units"], question["values"] = merged["units"], merged["values"]
    # The round's line: its codings, items and coders as the estimate counts them.
    mine = [(now.get(key), then.get(key)) for key in set(now) | set(then) if key[0] == round]
    part["n_codings"] = n_codings
    part["items"] += sum(_items(a)[0] - _items(b)[0] for a, b in mine)
    part["items_with_two_or_more"] += sum(_items(a)[1] - _items(b)[1] for a, b in mine)
    part["coders"] = sorted({*part["coders"], *(c for a, _ in mine if a for c in a.coders)})
    part["estimate"] = {"base_at": base.created_at.isoformat(), "base_n_codings": base.n_codings,
                        "base_last_coding_id": base.last_coding_id, "new_codings": n_new}
    part = finite(part)
    return AgreementSnapshot(study=base.study, round=round, n_codings=n_codings, report=part,
                             summary=summarise(part), seconds=seconds, estimate=True)


def _items(group):
    """(items, items with two or more codings) of a batch's group (none: (0, 0))."""
    if group is None:
        return 0, 0
    per_item = np.bincount(group.unit_index)
    return len(per_item), int((per_item >= 2).sum())


def _column(group, key):
    if group is None:
        return None
    return next((c for c in group.columns if c.key == key), None)


def _batch(group, key):
    """The coincidences of a question over the batch's items in `group`, or None."""
    column = _column(group, key)
    if column is None:
        return None
    scale, codes, _ = unit_codes(column, group)
    return coincidence_counts(scale.labels, codes)


def _key(stored):
    """A stored answer as a dict key: a set of options as a frozenset."""
    return frozenset(stored) if isinstance(stored, list) else stored


def _merged(base, before, after):
    """`base`'s coincidences less `before`'s plus `after`'s, over every label of the three."""
    labels, index = [], {}
    for part in (base, before, after):
        for label in (part or {}).get("labels", ()):
            if _key(label) not in index:
                index[_key(label)] = len(labels)
                labels.append(label)
    matrix = np.zeros((len(labels), len(labels)))
    units = values = 0
    for part, sign in ((base, 1), (before, -1), (after, 1)):
        if part is None:
            continue
        where = [index[_key(label)] for label in part["labels"]]
        for row, column, weight in part["cells"]:
            r, c = where[row], where[column]
            matrix[r, c] += sign * weight
            if r != c:
                matrix[c, r] += sign * weight
        units += sign * part["units"]
        values += sign * part["values"]
    matrix[np.abs(matrix) < ZERO] = 0
    return {"labels": labels, "matrix": matrix, "units": units, "values": values}


def alpha_of_counts(question, merged):
    """Alpha on every answer of `question` from coincidences {labels, matrix}: measured as
    the full report measures it (metrics.alpha_distance over the labels' Scale); None where
    alpha is undefined."""
    multiple = question.kind == QuestionModel.Kind.MULTIPLE
    answers = [tuple(label) if multiple else label for label in merged["labels"]]
    scale = Scale(question, answers)
    where = [scale.index[_hashable(answer)] for answer in answers]
    matrix = np.zeros((len(scale.labels), len(scale.labels)))
    matrix[np.ix_(where, where)] = merged["matrix"]
    variable = Variable(level=scale.level, labels=scale.labels, codes=np.empty((0, 0)),
                        coders=[], numbers=scale.numbers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", agreement.UndefinedAgreementWarning)
        value = agreement.alpha_of_coincidences(matrix, alpha_distance(variable))
    return None if value != value else float(value)


"""The study's reliability report: agreement per question, on independent codings only.

Design brief, rule 3: agreement is computed on each coder's last submission made
before any discussion of the item (``coding.codings.independent_codings``, the only
source of codings read here). Revisions after discussion and adjudicated values never
feed it; current decisions appear only as the yardstick each coder is compared with.
The calibration round is reported apart from the main round, never pooled.

"Not applicable" and "missing" stay apart: a coder's answer to a conditional question
whose condition their own answers did not meet (``codebooks.is_shown``) is not
applicable; an applicable question left unanswered is missing. Neither is a value,
so neither enters the question's reliability units; both are counted.

Questions and their conditions are those of each codebook's current version, as on
the review page; a unit is an item, whoever's codings of it there are (in the
reliability sample or not), and counts once it holds two or more values.
"""

from dataclasses import dataclass

import numpy as np
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from .codebooks import YES_NO, is_shown
from .codings import independent_codings
from .models import Decision, Item, Question
from .reliability_metrics import Variable, display, measure

ROUNDS = (Item.Round.MAIN.value, Item.Round.CALIBRATION.value)
N_BOOT = 1000
EMPTY = (None, "", ())  # no answer; a multiple choice is read as a tuple


@dataclass
class Codings:
    """One round's independent codings of one codebook, as parallel columns."""

    items: np.ndarray
    coders: list
    values: list


def study_report(study, *, n_boot=N_BOOT, seed=0, progress=None):
    """The report of every round, as plain JSON values. Seeded: the same codings give
    the same numbers, intervals included."""
    progress = progress or (lambda done, total=None, message="": None)
    groups, n_codings, last_id = _independent(study)
    decisions = _current_decisions(study)
    codebooks = {c.pk: c for c in study.codebooks.all()}
    total = sum(len(_questions(codebooks[book])) for _, book in groups) or 1
    done = 0
    rounds = {}
    for round in ROUNDS:
        books = []
        for (group_round, book), codings in sorted(groups.items()):
            if group_round != round:
                continue
            books.append(_codebook_report(codebooks[book], codings, decisions, n_boot, seed))
            done += len(books[-1]["questions"])
            progress(done, total, f"{round} round: {codebooks[book].name}")
        rounds[round] = _round_summary(round, groups, decisions, books)
    return {"study": study.slug, "computed_at": timezone.now().isoformat(),
            "n_codings": n_codings, "last_coding_id": last_id, "rounds": rounds}


def _independent(study):
    """{(round, codebook id): Codings}, how many codings, and the newest coding's id."""
    rows = (independent_codings(study)
            .values_list("pk", "assignment__item_id", "assignment__item__round",
                         "assignment__item__codebook_id", "assignment__coder__username",
                         "values")
            .order_by("pk"))
    columns = {}
    count = last = 0
    for pk, item, round, book, coder, values in rows.iterator(chunk_size=5000):
        group = columns.setdefault((round, book), ([], [], []))
        group[0].append(item)
        group[1].append(coder)
        group[2].append(values)
        count, last = count + 1, max(last, pk)
    groups = {key: Codings(np.array(items, dtype=np.int64), coders, values)
              for key, (items, coders, values) in columns.items()}
    return groups, count, last


def _current_decisions(study):
    """{item id: {question key: (value, method)}}: each question's highest revision."""
    latest = (Decision.objects.filter(item=OuterRef("item"), question_key=OuterRef("question_key"))
              .order_by("-revision").values("revision")[:1])
    rows = (Decision.objects.filter(item__study=study, item__deleted_at__isnull=True,
                                    revision=Subquery(latest))
            .values_list("item_id", "question_key", "value", "method"))
    decisions = {}
    for item, key, value, method in rows.iterator(chunk_size=5000):
        decisions.setdefault(item, {})[key] = (value, method)
    return decisions


def _questions(codebook):
    version = codebook.current_version()
    return list(version.questions.prefetch_related("options")) if version else []


# --- one codebook, one question ------------------------------------------------------

def _codebook_report(codebook, codings, decisions, n_boot, seed):
    version = codebook.current_version()
    units, unit_index = np.unique(codings.items, return_inverse=True)
    coders = sorted(set(codings.coders))
    position = {coder: i for i, coder in enumerate(coders)}
    coder_index = np.array([position[c] for c in codings.coders], dtype=np.int64)
    layout = (units, unit_index, coders, coder_index)
    return {"id": codebook.pk, "name": codebook.name, "applies_to": codebook.applies_to,
            "version": version.number if version else None,
            "questions": [_question_report(q, codings, layout, decisions, n_boot, seed)
                          for q in _questions(codebook)]}


def _question_report(question, codings, layout, decisions, n_boot, seed):
    units, unit_index, coders, coder_index = layout
    answers, applicable = _answers(question, codings.values)
    report = {"key": question.key, "text": question.text, "kind": question.kind,
              "level": question.level, "codings": len(answers)}
    decided = _decided(question, units, decisions)
    distinct = dict.fromkeys(answers)
    scale = Scale(question, [a for a in distinct if a not in EMPTY] +
                  [d for d in decided if d is not None])
    # One dict lookup per value: an answer's label, or -1 for no answer.
    raw = np.fromiter(map({**scale.index, **dict.fromkeys(EMPTY, -1)}.__getitem__, answers),
                      np.int64, len(answers))
    report |= {"not_applicable": int((~applicable).sum()),
               "missing": int((applicable & (raw < 0)).sum())}
    if question.kind == Question.Kind.TEXT:
        return report | {"metric": None, "units": 0,
                         "note": "Free text: not coded into categories, so not measured."}
    codes = np.full((len(units), len(coders)), -1, dtype=np.int64)
    codes[unit_index, coder_index] = np.where(applicable, raw, -1)
    variable = Variable(
        level=scale.level, labels=scale.labels, codes=codes, coders=coders, options=scale.options,
        decided=np.array([-1 if d is None else scale.index[d] for d in decided], dtype=np.int64),
        numbers=scale.numbers)
    report["units_coded"] = int(((codes >= 0).sum(axis=1) >= 1).sum())
    return report | {"metric": scale.level, "note": scale.note} | measure(variable, n_boot, seed)


def _answers(question, values):
    """Each coding's answer (a multiple choice as a tuple), and where the question applied.

    It did not apply where the coder's own answers left its condition unmet: "not
    applicable". Where it applied and holds no answer, the answer is missing.
    """
    answers = [v.get(question.key) for v in values]
    if question.kind == Question.Kind.MULTIPLE:
        answers = [_hashable(a) for a in answers]
    if question.show_if:
        applicable = np.array([is_shown(question, v) for v in values], dtype=bool)
    else:
        applicable = np.ones(len(values), dtype=bool)
    return answers, applicable


def _hashable(answer):
    # A multiple-choice answer is a list; as a tuple it can key a dict.
    return tuple(answer) if isinstance(answer, list) else answer


def _decided(question, units, decisions):
    """Per unit, the current decision's answer to the question, or None."""
    decided = [None] * len(units)
    if not decisions:
        return decided
    position = {unit: i for i, unit in enumerate(units.tolist())}
    for item, answers in decisions.items():
        if item in position and question.key in answers:
            decided[position[item]] = _decided_answer(question, answers[question.key])
    return decided


def _decided_answer(question, decision):
    """The decided value if it is an answer to the question (not a 'not applicable' mark)."""
    if decision is None or _hashable(decision[0]) in EMPTY:
        return None
    value = decision[0]
    allowed = set(_options(question))
    if question.kind == Question.Kind.MULTIPLE:
        ok = isinstance(value, list) and set(value) <= allowed
    elif question.kind == Question.Kind.NUMBER:
        ok = _is_number(value) or value in allowed
    else:
        ok = value in allowed
    return _hashable(value) if ok else None


class Scale:
    """A question's values as category labels in a fixed order, and its agreement level.

    Options keep the codebook's order (an ordinal question's order); numbers are sorted,
    followed by options such as "not reported"; multiple-choice answers are sets,
    compared with the MASI distance (Passonneau 2006), which credits partial overlap.
    `index` maps each distinct answer (a tuple for a multiple choice) to its label.
    """

    def __init__(self, question, distinct):
        self.options = _options(question)
        self.level, self.note, self.numbers = question.level, "", None
        if question.kind == Question.Kind.MULTIPLE:
            self._sets(distinct)
            return
        numbers = sorted(a for a in distinct if _is_number(a))
        others = (a for a in distinct if not _is_number(a) and a not in self.options)
        rest = [*self.options, *others]
        self.labels = numbers + list(dict.fromkeys(rest))
        # 7 and 7.0 are one key of a dict, as they are one answer.
        self.index = {label: i for i, label in enumerate(self.labels)}
        self._numbers(question)

    def _sets(self, distinct):
        self.level = "masi"
        self.note = "Multiple choice: sets of options compared with the MASI distance."
        order = {o: i for i, o in enumerate(self.options)}
        sets = {frozenset(a) for a in distinct}
        self.labels = sorted(sets, key=lambda s: (len(s), sorted(order.get(o, 99) for o in s)))
        position = {label: i for i, label in enumerate(self.labels)}
        self.index = {a: position[frozenset(a)] for a in distinct}

    def _numbers(self, question):
        if self.level not in (Question.Level.INTERVAL, Question.Level.RATIO):
            return
        numbers = np.array([float(x) if _is_number(x) else np.nan for x in self.labels])
        if question.kind != Question.Kind.NUMBER:
            self.level, self.note = "nominal", "Options are not numbers: measured as nominal."
            return
        if self.level == Question.Level.RATIO and (numbers < 0).any():
            self.level, self.note = "interval", "Negative numbers: measured as interval."
        self.numbers = numbers
        if np.isnan(numbers).any():
            self.note = ("Answers such as " + ", ".join(
                display(x) for x in self.labels if not _is_number(x))
                + " count for percent agreement and kappa but not for alpha.")


def _options(question):
    if question.kind == Question.Kind.YES_NO:
        return list(YES_NO)
    return [o.value for o in question.options.all()]


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- a round ------------------------------------------------------------------------

def _round_summary(round, groups, decisions, books):
    codings = [c for (r, _), c in groups.items() if r == round]
    items = np.concatenate([c.items for c in codings]) if codings else np.array([], np.int64)
    per_item = np.unique(items, return_counts=True)[1]
    methods = {}
    round_items = set(items.tolist())
    for item, answers in decisions.items():
        if item in round_items:
            for _, method in answers.values():
                methods[method] = methods.get(method, 0) + 1
    return {"round": round, "n_codings": int(len(items)), "items": int(len(per_item)),
            "items_with_two_or_more": int((per_item >= 2).sum()),
            "coders": sorted({coder for c in codings for coder in c.coders}),
            "decisions": methods, "codebooks": books}

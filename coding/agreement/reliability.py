"""The study's reliability report: agreement per question, on independent codings only.

Design brief, rule 3: agreement is computed on each coder's last submission made
before any discussion of the item (``coding.labeling.codings.independent_codings``, the only
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

At scale (a 100,000-item study: 200,000 codings, 2 million decisions) the codings are
read once, as tuples, in chunks, and each answer becomes an integer code into its
question's distinct answers at once: every question's units x coders matrix is built in
that one pass, and no coding is held as a Python object beyond its chunk. The decisions
are read grouped by value (a few hundred rows), beside the codings where the database
allows. Memory then grows by a few bytes per coding and question; the metrics' tables by
the square of a question's distinct values. docs/performance.md has the figures.
"""

import gc
import itertools
import json
import threading
from contextlib import contextmanager
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Aggregate, F, FloatField, Func, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from coding.agreement import alpha as agreement
from coding.agreement.metrics import Variable, display, measure
from coding.codebooks.versions import YES_NO, is_shown
from coding.labeling.codings import independent_codings
from coding.models import Coding, Decision, Item, Question

ROUNDS = (Item.Round.MAIN.value, Item.Round.CALIBRATION.value)
N_BOOT = 1000
EMPTY = (None, "", ())  # no answer; a multiple choice is read as a tuple
EMPTY_TEXTS = {"null", '""'}  # None and "" as PostgreSQL writes them in JSON
# Codings per fetch from the database (a server-side cursor on PostgreSQL) and per
# column-wise step: only this many codings' answers are ever held as Python objects.
CHUNK = 2000


def study_report(study, *, n_boot=N_BOOT, seed=0, progress=None, counts=False):
    """The report of every round, as plain JSON values. Seeded: the same codings give
    the same numbers, intervals included; nor does the order rows arrive in matter.
    With `counts`, each measured question also holds its coincidences (`counts`, see
    coincidence_counts): what a snapshot keeps for the estimates that follow it."""
    with _one_blas_thread():
        return _study_report(study, n_boot, seed, progress, counts)


@contextmanager
def _one_blas_thread():
    """The report's matrix products on one thread. They are small (a resample's counts by
    a question's patterns), and OpenBLAS spreading each over every core gained no time
    and cost a quarter more CPU (6.1 s of CPU for 3.5 s of products at 100,000 items,
    4.9 s on one thread; benchmarks/agreement_report.py): CPU the coders' web processes
    on the same cores would have had."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _study_report(study, n_boot, seed, progress, counts=False):
    progress = progress or (lambda done, total=None, message="": None)
    codebooks = {c.pk: c for c in study.codebooks.all()}
    questions = {pk: _questions(book) for pk, book in codebooks.items()}
    with _without_gc():
        decisions = _Beside(_decisions, study)
        with _reading():
            groups, n_codings, last_id = _independent(study, questions)
        methods = _place_decisions(decisions.result(), groups)
    _name_adjudicators(groups)
    _date_windows(groups)
    total = sum(len(questions[book]) for _, book in groups) or 1
    done = 0
    rounds = {}
    for round in ROUNDS:
        books = []
        for (group_round, book), group in sorted(groups.items()):
            if group_round != round:
                continue
            books.append(_codebook_report(codebooks[book], group, n_boot, seed, counts))
            done += len(books[-1]["questions"])
            progress(done, total, f"{round} round: {codebooks[book].name}")
        rounds[round] = _round_summary(round, groups, methods.get(round, {}), books)
    return {"study": study.slug, "computed_at": timezone.now().isoformat(),
            "n_codings": n_codings, "last_coding_id": last_id, "rounds": rounds}


# --- reading: one pass over the codings, one query for the decisions ------------------

# On PostgreSQL the reads below stream through server-side cursors, which the planner
# plans for a tenth of their rows by default (cursor_tuple_fraction): plans that start
# fast and finish several times slower. These reads take every row, so say so; and skip
# JIT compilation, which costs more than it saves on a plain scan.
READ_SETTINGS = {"cursor_tuple_fraction": "1", "jit": "off"}


@contextmanager
def _reading():
    """The reads in one transaction (PostgreSQL), with READ_SETTINGS for its duration.

    Not on SQLite, where a transaction here takes the write lock coders need."""
    if connection.vendor != "postgresql":
        yield
        return
    names = list(READ_SETTINGS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(["current_setting(%s)"] * len(names)), names)
        before = cursor.fetchone()
        cursor.execute(_set_config(names), [x for n in names for x in (n, READ_SETTINGS[n])])
        yield
        cursor.execute(_set_config(names), [x for n, v in zip(names, before) for x in (n, v)])


@contextmanager
def _without_gc():
    """The cyclic garbage collector paused while the codings stream through. Their decoded
    answers hold no cycles (reference counting frees each chunk), but allocating them
    would trigger collections that walk every live object again and again: a fifth of
    the reading time at 100,000 items."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _set_config(names):
    return "SELECT " + ", ".join(["set_config(%s, %s, true)"] * len(names))


def _independent(study, questions, codings=None):
    """{(round, codebook id): _Group} of the independent codings (`codings`, a queryset of
    them; all of the study's by default), how many there are, and the newest one's id: one
    pass that fills every question's column of codes."""
    keys = _keys(questions)
    # On PostgreSQL each answer comes as its own JSON text, and a column's codes are
    # looked up by that text: only its distinct texts are ever decoded (see _Column).
    # Elsewhere (SQLite) each coding's whole answer object is read and decoded here.
    texts = connection.vendor == "postgresql"
    answers = [_AnswerText(key) for key in keys] if texts else [_Answers(keys)]
    codings = independent_codings(study) if codings is None else codings
    rows = (codings.order_by()
            .values_list("pk", "assignment__item_id", "assignment__item__round",
                         "assignment__item__codebook_id", "assignment__coder_id",
                         _Epoch("submitted_at") if texts else "submitted_at", *answers)
            .iterator(chunk_size=CHUNK))
    groups = {}
    count = last = 0
    while chunk := list(itertools.islice(rows, CHUNK)):
        if texts:  # one column of JSON texts per key: a transpose
            columns = dict(zip(keys, list(zip(*chunk))[6:]))
        else:
            # JSON text, read with one decoder call per chunk: a third less time than a
            # call per coding. Then one column of answers per key.
            columns = answers[0].columns(
                json.loads("[" + ",".join([row[6] for row in chunk]) + "]"))
        pks = np.array([row[0] for row in chunk], dtype=np.int64)
        items = np.array([row[1] for row in chunk], dtype=np.int64)
        coders = np.array([row[4] for row in chunk], dtype=np.int64)
        # Seconds since the epoch (UTC): the drift's calendar windows. PostgreSQL gives
        # them as numbers: parsing 200,000 timestamps took a tenth of the reading.
        times = np.array([row[5] for row in chunk] if texts
                         else [row[5].timestamp() for row in chunk], dtype=float)
        group_keys = [(row[2], row[3]) for row in chunk]
        for key in dict.fromkeys(group_keys):
            if key not in groups:
                groups[key] = _Group(questions.get(key[1], []), texts)
            if len(group_keys) == group_keys.count(key):  # the usual case: one round, one codebook
                groups[key].add(pks, items, coders, times, columns)
                continue
            mine = [i for i, k in enumerate(group_keys) if k == key]
            groups[key].add(pks[mine], items[mine], coders[mine], times[mine],
                            {k: [column[i] for i in mine] for k, column in columns.items()})
        count += len(chunk)
        last = max(last, int(pks.max()))
    names = dict(get_user_model().objects.filter(
        pk__in={int(c) for g in groups.values() for c in np.unique(g.coder_ids())})
        .values_list("pk", "username"))
    for group in groups.values():
        group.finish(names)
    return groups, count, last


class _Group:
    """One round's independent codings of one codebook: who coded which item, and per
    question a column of codes (see _Column). Filled chunk by chunk, then finished."""

    def __init__(self, questions, texts=False):
        self.columns = [_Column(q, texts) for q in questions]
        self._chunks = []  # (pks, items, coder ids, submission times) per chunk

    def add(self, pks, items, coders, times, answers):
        """Codings: their ids, item ids, coder ids, submission times (arrays) and {key:
        their answers}."""
        self._chunks.append((pks, items, coders, times))
        for column in self.columns:
            column.add(answers)

    def coder_ids(self):
        return np.concatenate([c[2] for c in self._chunks])

    def finish(self, names):
        pks, items, coder_ids, times = (np.concatenate(part) for part in zip(*self._chunks))
        self._chunks = None
        self.n_codings = len(items)
        self.units, self.unit_index = np.unique(items, return_inverse=True)
        ids, inverse = np.unique(coder_ids, return_inverse=True)
        self.coders = sorted({names[int(i)] for i in ids})
        position = np.array([self.coders.index(names[int(i)]) for i in ids], dtype=np.int64)
        self.coder_index = position[inverse]
        for column in self.columns:
            column.finish(pks, len(self.units))
        # Which coding gave each unit's value of each coder: the drift's time axis.
        self.coding_ids = np.full((len(self.units), len(self.coders)), -1, dtype=np.int64)
        self.coding_ids[self.unit_index, self.coder_index] = pks
        self.windows = _windows(pks)
        # And when it was submitted: the calendar windows' time axis.
        self.submitted = np.full(self.coding_ids.shape, np.nan)
        self.submitted[self.unit_index, self.coder_index] = times
        self.calendar = calendar_windows(times)


class _Column:
    """One question's answers in a group, as codes into its distinct answers.

    While reading, each answer becomes a provisional code: its position among the
    question's distinct answers in the order met (-1 for no answer). Answers that are
    equal are one code (7 and 7.0 too, as dict keys), so a number question holds each
    number once however many units gave it. Finished, the distinct answers are ordered
    as the codings' ids first gave them (the report does not depend on the order rows
    arrive in), then decided values no coder gave, by unit.
    """

    def __init__(self, question, texts=False):
        self.question = question
        self.key = question.key
        self.is_text = question.kind == Question.Kind.TEXT
        self.is_multiple = question.kind == Question.Kind.MULTIPLE
        self.index = dict.fromkeys(EMPTY, -1)
        self.values = []
        self._codes, self._applicable, self._shown = [], [], {}
        self.decided = self.adjudicator = None
        self.adjudicator_names = {}
        # Answers read as JSON texts (None where the key is absent): each distinct text
        # is decoded once, then its code is found by the text alone.
        self.texts = texts
        self._by_text = {}

    def add(self, columns):
        answers = columns[self.key]
        if self.texts and self.is_text:
            # Free text is only answered or not. Looked up by its text like the others,
            # every note of a study would be kept in memory once each until the end.
            codes = [-1 if a is None or a in EMPTY_TEXTS else 0 for a in answers]
        elif self.texts:
            codes = _look_up(self._by_text, answers, self.text_code)
        elif self.is_text:  # only answered or not: free text is not measured
            codes = [-1 if a in EMPTY else 0 for a in answers]
        else:
            codes = _look_up(self.index, answers, self.code)
        self._codes.append(np.array(codes, dtype=np.int32))
        if self.question.show_if:
            shown = (lambda text: self.shown(_decoded(text))) if self.texts else self.shown
            self._applicable.append(np.array(_look_up(
                self._shown, columns[self.question.show_if["question"]], shown), bool))

    def text_code(self, text):
        """The provisional code of an answer given as JSON text (what add gives it)."""
        answer = _decoded(text)
        if self.is_text:
            return -1 if answer in EMPTY else 0
        return self.code(answer)  # no answer (None, "", []) is -1 in the index

    def shown(self, answer):
        """Whether the question applies where its condition's question got `answer`."""
        answer = list(answer) if type(answer) is tuple else answer  # a list, as JSON gave it
        return is_shown(self.question, {self.question.show_if["question"]: answer})

    def code(self, answer):
        """The provisional code of an answer, a new one if it was not met before."""
        answer = _hashable(answer)
        code = self.index.get(answer)
        if code is None:
            code = self.index[answer] = len(self.values)
            self.values.append(answer)
        return code

    def finish(self, pks, n_units):
        self.codes = np.concatenate(self._codes)
        self.applicable = (np.concatenate(self._applicable) if self._applicable
                           else np.ones(len(self.codes), dtype=bool))
        self._codes = self._applicable = None
        # The smallest coding id giving each distinct answer: its place in the order.
        self.first = np.full(len(self.values), np.iinfo(np.int64).max, dtype=np.int64)
        if not self.is_text:  # whose codes are only "answered" (0) or not
            given = self.codes >= 0
            np.minimum.at(self.first, self.codes[given], pks[given])
        self.decided = np.full(n_units, -1, dtype=np.int32)
        self.adjudicator = np.full(n_units, -1, dtype=np.int32)  # user ids

    def release(self):
        """Its question is reported: its arrays are not read again, so memory falls as the
        report goes through the questions instead of holding every one to the end."""
        self.codes = self.applicable = self.decided = self.adjudicator = self.first = None

    def decided_code(self, value):
        """The provisional code of a decided value; -1 if it is no answer to the question."""
        answer = _decided_answer(self.question, (value, None))
        return -1 if answer is None else self.code(answer)

    def labelled(self):
        """(Scale, codes, decided): the codes and decisions as labels of the Scale."""
        never = np.iinfo(np.int64).max
        # Values met first in the decisions have no coding id: they come after the rest.
        first = np.append(self.first, np.full(len(self.values) - len(self.first), never))
        first_unit = np.full(len(self.values), never, dtype=np.int64)
        given = self.decided >= 0
        np.minimum.at(first_unit, self.decided[given], np.flatnonzero(given))
        order = np.lexsort((first_unit, first))
        scale = Scale(self.question, [self.values[i] for i in order])
        remap = np.array([scale.index[v] for v in self.values] + [-1], dtype=np.int64)
        return scale, remap[self.codes], remap[self.decided]


def _decisions(study):
    """{question key: [(item ids, value, method, revision)]}: every decision revision.

    One query, grouped by question, value, method and revision: a row holds the ids of
    every item given that value that way, so a study's millions of decisions cross to
    Python as a few hundred rows, and each distinct value is read once. Which revision
    is current is settled by _place_decisions with numpy: a correlated subquery or an
    anti-join per row costs the database more than the whole scan.
    """
    rows = (Decision.objects.filter(item__study=study, item__deleted_at__isnull=True)
            .order_by().values("question_key", "value", "method", "revision", "decided_by")
            .annotate(items=_IdList("item_id"))
            .values_list("question_key", "value", "method", "revision", "items", "decided_by"))
    by_key = {}
    for key, value, method, revision, items, by in rows.iterator(chunk_size=100):
        adjudicator = by if method == Decision.Method.ADJUDICATED and by else -1
        by_key.setdefault(key, []).append((np.fromstring(items, dtype=np.int64, sep=","),
                                           value, method, revision, adjudicator))
    return by_key


def _place_decisions(by_key, groups):
    """Put each question's current decisions (an item and question's highest revision)
    into its column; {round: {method: count}} over the round's coded items."""
    # Every coded item once, sorted: its group and its unit in the group.
    keys = list(groups)
    coded = np.concatenate([g.units for g in groups.values()] + [np.array([], np.int64)])
    group_of = np.repeat(np.arange(len(keys)), [len(g.units) for g in groups.values()])
    unit_of = np.concatenate([np.arange(len(g.units)) for g in groups.values()] +
                             [np.array([], np.int64)])
    order = np.argsort(coded)
    coded, group_of, unit_of = coded[order], group_of[order], unit_of[order]
    methods = {}
    for key, parts in by_key.items():
        items = np.concatenate([p[0] for p in parts])
        part = np.repeat(np.arange(len(parts)), [len(p[0]) for p in parts])
        revision = np.repeat([p[3] for p in parts], [len(p[0]) for p in parts])
        # The highest revision of each item: last of its run once sorted by (item, revision).
        order = np.lexsort((revision, items))
        items, part = items[order], part[order]
        current = np.append(items[1:] != items[:-1], True)
        items, part = items[current], part[current]
        at = np.searchsorted(coded, items).clip(max=max(len(coded) - 1, 0))
        found = coded[at] == items if len(coded) else np.zeros(len(items), dtype=bool)
        for g, (round, book) in enumerate(keys):
            mine = found & (group_of[at] == g)
            if not mine.any():
                continue
            counts = methods.setdefault(round, {})
            for p, n in zip(*np.unique(part[mine], return_counts=True)):
                counts[parts[p][2]] = counts.get(parts[p][2], 0) + int(n)
            column = next((c for c in groups[keys[g]].columns if c.key == key), None)
            if column is not None and not column.is_text:
                codes = np.full(len(parts), -1, dtype=np.int32)
                for p in np.unique(part[mine]):  # only values decided in this group
                    codes[p] = column.decided_code(parts[p][1])
                column.decided[unit_of[at[mine]]] = codes[part[mine]]
                adjudicators = np.array([p[4] for p in parts], dtype=np.int64)
                column.adjudicator[unit_of[at[mine]]] = adjudicators[part[mine]]
    return methods


# Drift: each coder against the others in up to this many batches of the round's codings,
# in the order they were submitted (equal counts, at least SMALLEST_WINDOW codings each),
# each labelled by its dates.
WINDOWS = 6
SMALLEST_WINDOW = 40


def _windows(pks):
    """[(first coding id, last coding id)] of up to WINDOWS batches of equal count."""
    ordered = np.sort(pks)
    count = min(WINDOWS, len(ordered) // SMALLEST_WINDOW)
    if count < 2:
        return []
    edges = np.linspace(0, len(ordered), count + 1).astype(int)
    return [(int(ordered[a]), int(ordered[b - 1])) for a, b in zip(edges[:-1], edges[1:])]


# Calendar windows: the smallest of day, ISO week and calendar month (UTC) that divides
# the round's span of submissions into at most CALENDAR_MAX windows.
CALENDAR_MAX = 26
CALENDAR_UNITS = ("day", "week", "month")


def calendar_windows(times):
    """{unit, windows: [{from, to, start, end}]} of the calendar windows from the first
    submission (seconds since the epoch, UTC) to the last, start inclusive and end
    exclusive; None where the codings fall into fewer than two."""
    if not len(times):
        return None
    first, last = (datetime.fromtimestamp(t, tz=dt_timezone.utc)
                   for t in (float(np.min(times)), float(np.max(times))))
    for unit in CALENDAR_UNITS:
        starts = _calendar_starts(first, last, unit)
        if len(starts) - 1 <= CALENDAR_MAX:
            break
    if len(starts) < 3:
        return None
    return {"unit": unit, "windows": [
        {"from": a.date().isoformat(), "to": (b - timedelta(days=1)).date().isoformat(),
         "start": a.timestamp(), "end": b.timestamp()} for a, b in zip(starts, starts[1:])]}


def _calendar_starts(first, last, unit):
    """The window starts from the one holding `first` to the end of the one holding `last`."""
    start = first.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":
        start -= timedelta(days=start.weekday())  # Monday
    elif unit == "month":
        start = start.replace(day=1)
    starts = [start]
    while starts[-1] <= last:
        current = starts[-1]
        if unit == "month":
            starts.append((current + timedelta(days=32)).replace(day=1))
        else:
            starts.append(current + timedelta(days=7 if unit == "week" else 1))
    return starts


def _date_windows(groups):
    """Each window's first and last submission time: one query for every boundary."""
    ends = {pk for g in groups.values() for w in g.windows for pk in w}
    when = dict(Coding.objects.filter(pk__in=ends).values_list("pk", "submitted_at"))
    for group in groups.values():
        group.windows = [{"first_id": a, "last_id": b,
                          "from": when[a].isoformat() if a in when else None,
                          "to": when[b].isoformat() if b in when else None}
                         for a, b in group.windows]


def _name_adjudicators(groups):
    """The adjudicators' usernames, one query; each column keeps them, and names its units'
    adjudicators only when its question is reported (`_adjudicated_by`): an array of names
    per unit for every question at once was 160 MB at 1,000,000 items."""
    columns = [c for g in groups.values() for c in g.columns if c.adjudicator is not None]
    ids = {int(i) for c in columns for i in np.unique(c.adjudicator) if i >= 0}
    names = dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username"))
    for column in columns:
        column.adjudicator_names = names


def _adjudicated_by(column):
    """The column's adjudicator ids as usernames ("" where not adjudicated)."""
    if column.adjudicator is None:
        return None
    # Sorted, then placed (what np.unique's return_inverse does, by an argsort that costs
    # several times a sort here).
    found = np.unique(column.adjudicator)
    names = column.adjudicator_names
    labels = np.array([names.get(i, "") if i >= 0 else "" for i in found.tolist()] + [""],
                      dtype=object)
    return labels[np.searchsorted(found, column.adjudicator)] if len(found) else labels[:0]


class _Beside:
    """`function(*args)` run in a thread with its own database connection, so that the
    database works on it while this thread streams the codings: on 2 cores, the
    decisions' scan then costs no time. Only on PostgreSQL outside a transaction (another
    connection would not see a transaction's own rows, as in tests); otherwise it runs
    when its result is asked for."""

    def __init__(self, function, *args):
        self.call, self.value, self.error, self.thread = (function, args), None, None, None
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            self.thread = threading.Thread(target=self._run, name="agreement-decisions",
                                           daemon=True)
            self.thread.start()

    def _run(self):
        try:
            with _reading():
                self.value = self.call[0](*self.call[1])
        except BaseException as error:  # handed to the caller by result()
            self.error = error
        finally:
            connection.close()  # this thread's own connection

    def result(self):
        if self.thread is None:
            with _reading():
                return self.call[0](*self.call[1])
        self.thread.join()
        if self.error is not None:
            raise self.error
        value, self.value = self.value, None  # held by the caller only: freed once used
        return value


class _Epoch(Func):
    """A timestamp as seconds since the epoch, a float (PostgreSQL): the same number as
    Python's datetime.timestamp() of it, both the exact microseconds correctly rounded."""

    template = "EXTRACT(EPOCH FROM %(expressions)s)::float8"
    output_field = FloatField()

    def get_db_converters(self, connection):
        return []  # psycopg gives a float8 as a float: no call per row to make it one


class _IdList(Aggregate):
    """The group's ids as one comma-separated text, which numpy reads at once (an array
    would cross as a Python int per id)."""

    template = "STRING_AGG((%(expressions)s)::text, ',')"
    output_field = TextField()

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="GROUP_CONCAT(%(expressions)s, ',')",
                           **extra)


def _keys(questions):
    """The answers read from a coding: every question's, and every condition's."""
    keys = {}
    for question in itertools.chain.from_iterable(questions.values()):
        keys[question.key] = None
        if question.show_if:
            keys[question.show_if["question"]] = None
    return list(keys)


class _Answers(Func):
    """A coding's whole answer object as JSON text, whose `keys` columns() picks out
    (where answers are not read one text a key: SQLite)."""

    output_field = TextField()

    def __init__(self, keys):
        super().__init__(F("values"))
        self.keys = keys

    def as_sql(self, compiler, connection, **extra):
        return compiler.compile(Cast(self.source_expressions[0], TextField()))

    def columns(self, decoded):
        """{key: the chunk's answers to it}, from the decoded JSON of a chunk's codings."""
        decoded = [[v.get(key) for key in self.keys] for v in decoded]
        return dict(zip(self.keys, zip(*decoded))) if decoded else dict.fromkeys(self.keys, ())


class _AnswerText(Func):
    """A coding's answer to one key as JSON text (PostgreSQL); NULL where it is absent."""

    output_field = TextField()

    def __init__(self, key):
        super().__init__(F("values"))
        self.key = key

    def as_sql(self, compiler, connection, **extra):
        values, params = compiler.compile(self.source_expressions[0])
        return f"({values} -> %s)::text", [*params, self.key]


def _decoded(text):
    """An answer from its JSON text; None for no text (the key absent)."""
    return None if text is None else json.loads(text)


def _look_up(table, answers, new):
    """[table[answer] for each answer], looked up in C; answers not in the table yet are
    added first, as new(answer) (a list is keyed as a tuple)."""
    try:
        return list(map(table.__getitem__, answers))
    except TypeError:  # a list among them (a multiple choice): keyed as a tuple
        answers = [tuple(a) if type(a) is list else a for a in answers]
    except KeyError:
        pass
    for answer in dict.fromkeys(answers):
        if answer not in table:
            table[answer] = new(answer)
    return list(map(table.__getitem__, answers))


def _questions(codebook):
    version = codebook.current_version()
    return list(version.questions.prefetch_related("options")) if version else []


# --- one codebook, one question ------------------------------------------------------

def _codebook_report(codebook, group, n_boot, seed, counts=False):
    version = codebook.current_version()
    questions = []
    for column in group.columns:
        questions.append(_question_report(column, group, n_boot, seed, counts))
        column.release()
    return {"id": codebook.pk, "name": codebook.name, "applies_to": codebook.applies_to,
            "version": version.number if version else None, "questions": questions}


def _question_report(column, group, n_boot, seed, counts=False):
    question, applicable = column.question, column.applicable
    report = {"key": question.key, "text": question.text, "kind": question.kind,
              "level": question.level, "codings": len(column.codes)}
    missing = applicable & (column.codes < 0)
    report |= {"not_applicable": int((~applicable).sum()), "missing": int(missing.sum())}
    if column.is_text:
        return report | {"metric": None, "units": 0,
                         "note": "Free text: not coded into categories, so not measured."}
    scale, codes, decided = unit_codes(column, group)
    variable = Variable(level=scale.level, labels=scale.labels, codes=codes, coders=group.coders,
                        options=scale.options, decided=decided, numbers=scale.numbers,
                        adjudicated_by=_adjudicated_by(column),
                        coding_ids=np.where(codes >= 0, group.coding_ids, -1),
                        windows=group.windows,
                        submitted=np.where(codes >= 0, group.submitted, np.nan),
                        calendar=group.calendar)
    report["units_coded"] = int(((codes >= 0).sum(axis=1) >= 1).sum())
    if counts:
        report["counts"] = coincidence_counts(scale.labels, codes)
    return report | {"metric": scale.level, "note": scale.note} | measure(variable, n_boot, seed)


def unit_codes(column, group):
    """(Scale, codes[unit, coder] into its labels, -1 where no applicable value, decided
    codes per unit) of a question's column in its group."""
    scale, raw, decided = column.labelled()
    codes = np.full((len(group.units), len(group.coders)), -1, dtype=np.int64)
    codes[group.unit_index, group.coder_index] = np.where(column.applicable, raw, -1)
    return scale, codes, decided


def coincidence_counts(labels, codes):
    """A question's coincidences over its units (`codes[unit, coder]` into `labels`, -1
    where no value): {labels, cells, units, values}, JSON values. `labels` as answers are
    stored (a multiple choice as a sorted list), `cells` the matrix's nonzero entries on
    and above its diagonal as [row, column, weight] (it is symmetric), `units` and
    `values` those of the units with two or more values. Sums over units: estimates.py
    takes a batch's units out and puts them back as they are now."""
    matrix = agreement._coincidences(codes, len(labels))
    rows, columns = np.nonzero(np.triu(matrix))
    pairable = (codes >= 0).sum(axis=1) >= 2
    return {"labels": [stored_answer(label) for label in labels],
            "cells": [[int(r), int(c), float(matrix[r, c])] for r, c in zip(rows, columns)],
            "units": int(pairable.sum()), "values": int((codes[pairable] >= 0).sum())}


def stored_answer(answer):
    """An answer as JSON keeps it for coincidence_counts: a set of options (a tuple or a
    frozenset) as a list in a fixed order."""
    if isinstance(answer, tuple | frozenset):
        return sorted(answer, key=lambda o: (type(o).__name__, o))
    return answer


def _hashable(answer):
    # A multiple-choice answer is a list; as a tuple it can key a dict.
    return tuple(answer) if isinstance(answer, list) else answer


def _decided_answer(question, decision):
    """The decided value if it is an answer to the question (not a 'not applicable' mark)."""
    value = decision[0] if decision is not None else None
    try:
        if _hashable(value) in EMPTY:
            return None
        allowed = set(_options(question))
        if question.kind == Question.Kind.MULTIPLE:
            ok = isinstance(value, list) and set(value) <= allowed
        elif question.kind == Question.Kind.NUMBER:
            ok = _is_number(value) or value in allowed
        else:
            ok = value in allowed
    except TypeError:  # a value no answer can be (a list in a list, an object)
        return None
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
            self.note = ("Special answers (" + ", ".join(
                display(x) for x in self.labels if not _is_number(x))
                + ") count in alpha on all answers and are left out of alpha on numbers only.")


def _options(question):
    if question.kind == Question.Kind.YES_NO:
        return list(YES_NO)
    return [o.value for o in question.options.all()]


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


# --- a round ------------------------------------------------------------------------

def _round_summary(round, groups, methods, books):
    mine = [g for (r, _), g in groups.items() if r == round]
    # An item has one round and one codebook, so it is a unit of one group only.
    per_item = np.concatenate([np.bincount(g.unit_index) for g in mine] or [np.array([], int)])
    return {"round": round, "n_codings": int(sum(g.n_codings for g in mine)),
            "items": int(len(per_item)), "items_with_two_or_more": int((per_item >= 2).sum()),
            "coders": sorted({coder for g in mine for coder in g.coders}),
            "decisions": dict(sorted(methods.items())), "codebooks": books}

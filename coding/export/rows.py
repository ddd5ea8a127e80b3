"""Rows of each export shape, streamed from the database in a stable order.

Each shape has a generator of batches (`*_batches`: `Columns`, a few thousand rows as
one list per column, which is how the writers want them) and a generator of plain
dicts keyed by the shape's field names made from those. Nothing holds more than a
few batches of rows, whatever the size of the study. Coders appear under their study
pseudonym.

Reading: tuples of only the columns a shape needs (`values_list`, never model
instances), in the shape's order, through a server-side cursor where the database has
them (`read_ahead`, on a thread of its own on PostgreSQL, so the database works on the
next rows while these are turned into a table). Timestamps and JSON come as text and
are parsed here. What is "current" or "independent" is found while streaming, from
that order, instead of a correlated subquery per row: rows ordered by item, question
and revision end each (item, question) group with its current decision; codings
ordered by assignment and revision end each assignment's group with its last
independent one.
"""

import json
import queue
import re
import threading
from datetime import UTC, datetime
from itertools import chain, repeat

import orjson
from django.db import connection, connections, transaction
from django.db.models import Count, Exists, OuterRef, TextField
from django.db.models.functions import Cast

from coding.access.blinding import KINDS
from coding.catalog.landings import paper_inclusion
from coding.codebooks.versions import is_shown
from coding.export.fields import (
    ANSWERED, MISSING, NOT_ADJUDICATED, NOT_APPLICABLE, NOT_SCREENED, PENDING, UNDECIDED,
)
from coding.models import Assignment, Coding, Decision, Item, Question, RaterCoding

# Rows read from the database at a time, and about the rows of a yielded batch (the
# writers gather batches into row groups of their own size).
FETCH = 5_000


class Columns:
    """A batch of rows as columns: {field name: list of values}, every list `size` long.
    A field without a column is null throughout."""

    __slots__ = ("columns", "size")

    def __init__(self, columns, size):
        self.columns, self.size = columns, size

    def __len__(self):
        return self.size

    def rows(self):
        names = list(self.columns)
        return (dict(zip(names, values)) for values in zip(*map(expanded, self.columns.values())))


class Repeated:
    """A column of runs: values[0] counts[0] times, then values[1] counts[1] times … (a
    coding's own columns in the long table, one value for each of its questions' rows)."""

    __slots__ = ("values", "counts")

    def __init__(self, values, counts):
        self.values, self.counts = values, counts


class Timestamps:
    """A column of timestamps as the database gave their text (parse_datetime reads one).
    Iterated, the aware datetimes the ORM would make; the Parquet writer has Arrow parse
    the texts instead (writers.arrow_array), which costs a fraction of making a Python
    datetime of each and converting those."""

    __slots__ = ("texts",)

    def __init__(self, texts):
        self.texts = texts

    def __len__(self):
        return len(self.texts)

    def __iter__(self):
        return map(parse_datetime, self.texts)


def expanded(column):
    """A column as a plain list (an iterable for Repeated and Timestamps)."""
    if isinstance(column, Repeated):
        return chain.from_iterable(map(repeat, column.values, column.counts))
    if isinstance(column, Timestamps):
        return iter(column)
    return column


def flattened(batches):
    for batch in batches:
        yield from batch.rows()


# --- reading ahead ---------------------------------------------------------------------

def reads_ahead():
    """Whether queries may run on a connection of their own in a thread: on PostgreSQL,
    outside a transaction (inside one, another connection would not see its writes)."""
    return connection.vendor == "postgresql" and not connection.in_atomic_block


def read_ahead(rows, size=FETCH):
    """The rows of a queryset in lists of `size` (the last may hold fewer), in order.

    Where reads_ahead(), a thread reads them on a connection of its own, at most two
    lists ahead of the caller, in a transaction of that connection: its server-side
    cursor is then not held past the transaction, so the database makes rows as they
    are fetched (a held cursor makes them all before the first) and works on the next
    ones, on another core, while the caller turns the last ones into a table.
    Otherwise they are read here, in turn. Either way through a server-side cursor
    where the database has them."""
    if not reads_ahead():
        yield from _chunks(rows.iterator(chunk_size=size), size)
        return
    ready, stop, done = queue.Queue(maxsize=2), threading.Event(), object()

    def read():
        try:
            with transaction.atomic():
                for chunk in _chunks(rows.iterator(chunk_size=size), size):
                    while not stop.is_set():
                        try:
                            ready.put(chunk, timeout=0.1)
                            break
                        except queue.Full:
                            pass
                    if stop.is_set():
                        return
            ready.put(done)
        except BaseException as error:  # handed to the caller, who raises it
            ready.put(_Failed(error))
        finally:
            connections.close_all()  # this thread's own

    reader = threading.Thread(target=read, name="export-read-ahead", daemon=True)
    reader.start()
    try:
        while (chunk := ready.get()) is not done:
            if isinstance(chunk, _Failed):
                raise chunk.error
            yield chunk
    finally:
        stop.set()
        while reader.is_alive():
            try:
                ready.get(timeout=0.1)
            except queue.Empty:
                pass
        reader.join()


class _Failed:
    def __init__(self, error):
        self.error = error


def in_background(function, *args):
    """function(*args) started now on a thread of its own (where reads_ahead()); returns
    a function that waits for the result (raising what it raised). Otherwise that
    function computes it when called."""
    if not reads_ahead():
        return lambda: function(*args)
    result = {}

    def run():
        try:
            result["value"] = function(*args)
        except BaseException as error:
            result["error"] = error
        finally:
            connections.close_all()

    worker = threading.Thread(target=run, name="export-background", daemon=True)
    worker.start()

    def wait():
        worker.join()
        if "error" in result:
            raise result["error"]
        return result["value"]

    return wait


def as_text(value):
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else str(value)


def joined(value):
    if isinstance(value, list):
        return "; ".join(map(str, value)) or None
    return value


# Read as text and converted here: the driver's own conversions cost more than the rest of
# a row. A timestamp's text (ISO, as the database gives it in UTC; SQLite stores it so)
# becomes the aware datetime the ORM would make; a JSON value's text is parsed as the
# ORM's JSONField would, remembering the few distinct values answers take.

def as_text_column(field):
    return Cast(field, output_field=TextField())


def parse_datetime(text):
    if text is None:
        return None
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def remembered(function, limit=10_000):
    """function(text), remembered for up to `limit` distinct texts at a time (so free-text
    answers never make it grow with the study). The values must not be changed."""
    known = {}

    def lookup(text):
        try:
            return known[text]
        except KeyError:
            if len(known) >= limit:
                known.clear()
            value = known[text] = function(text)
            return value

    return lookup


def remembered_lists(function, limit=10_000):
    """function(value), remembered for lists of text by their items (a multiple choice's
    answers repeat: their JSON is made once), for up to `limit` distinct lists at a time;
    anything else is passed through (1 and 1.0 would be one key, but not one text)."""
    known = {}

    def lookup(value):
        if type(value) is not list:
            return function(value)
        key = tuple(value)
        try:
            return known[key]
        except (KeyError, TypeError):
            if not all(type(item) is str for item in key):
                return function(value)
            if len(known) >= limit:
                known.clear()
            found = known[key] = function(value)
            return found

    return lookup


def parse_json(text):
    """A JSON column's text as Python values: orjson, a fifth of json's time (json was a
    sixth of a whole export at 100,000 items). Not where a run of 19 digits or more may
    be an integer beyond 64 bits, which PostgreSQL keeps and orjson reads as a float: json
    reads those, so every value reads as json reads it."""
    if text is None:
        return None
    if _LONG_DIGITS.search(text):
        return json.loads(text)
    return orjson.loads(text)


_LONG_DIGITS = re.compile(r"\d{19}")


# --- current decisions and independent codings, as anti-joins ----------------------

def current_decisions(decisions):
    """The decisions of `decisions` that no higher revision of their item and question
    follows: the same rows as Decision.objects.current(), as an anti-join the database
    runs once (hash or merge) rather than a subquery per row."""
    newer = Decision.objects.filter(item=OuterRef("item"), question_key=OuterRef("question_key"),
                                    revision__gt=OuterRef("revision"))
    return decisions.filter(~Exists(newer))


def independent_count(study):
    """independent_codings(study).count(): every assignment holding an independent
    revision has exactly one last one, so count those assignments."""
    return (Assignment.objects.filter(item__study=study, item__deleted_at__isnull=True)
            .filter(Exists(Coding.objects.filter(assignment=OuterRef("pk"),
                                                 phase=Coding.Phase.INDEPENDENT,
                                                 assisted=False)))
            .count())


# --- items ---------------------------------------------------------------------------

ITEM_COLUMNS = ("pk", "document_id", "document__key", "document__kind", "document__source",
                "round", "in_reliability_sample", "snapshot__number", "snapshot__sha256",
                "content")
# Columns of the items table straight from the snapshot's content, and those joined
# with '; ' from a list there.
CONTENT_AS_IS = ("title", "url", "published", "updated", "abstract", "repository", "number",
                 "thread_type", "state", "merged", "closed_at", "state_reason", "merged_at",
                 "category", "answered")
# Columns read from a pull request's head or base: (column, side, key).
BRANCH_COLUMNS = (("head_label", "head", "label"), ("head_sha", "head", "sha"),
                  ("head_repo", "head", "repo"), ("head_repo_deleted", "head", "repo_deleted"),
                  ("base_ref", "base", "ref"))
CONTENT_JOINED = ("authors", "affiliations", "categories", "included_in", "labels")


def items(study, withheld):
    """Every item's metadata, as dicts."""
    return flattened(items_batches(study, withheld))


def items_batches(study, withheld):
    """Every item's metadata; `withheld` ({column: kinds}, fields.withheld_item_columns)
    empties what the requester may not receive, before any writer sees the row."""
    # Inclusion found in the frameworks' histories, for the method's source papers.
    landed = paper_inclusion(study) if not _withheld_everywhere(withheld, "frameworks_landed",
                                                               "first_landing",
                                                               "days_to_first_landing") else {}
    found = (Item.objects.alive().filter(study=study).order_by("pk")
             .annotate(content=as_text_column("snapshot__content")).values_list(*ITEM_COLUMNS))
    # A thousand at a time: a parsed snapshot is large beside the row made from it.
    for chunk in read_ahead(found, 1_000):
        (ids, documents, keys, kinds, sources, rounds, in_sample, numbers, hashes,
         contents) = (list(column) for column in zip(*chunk))
        contents = [parse_json(content) for content in contents]
        del chunk
        columns = {"item_id": ids, "document_key": keys, "kind": kinds, "source": sources,
                   "round": rounds, "in_reliability_sample": in_sample, "snapshot": numbers,
                   "snapshot_sha256": hashes}
        for name in CONTENT_AS_IS:
            columns[name] = [content.get(name) for content in contents]
        for name in CONTENT_JOINED:
            columns[name] = [joined(content.get(name)) for content in contents]
        columns["n_posts"] = [len(content["posts"]) if "posts" in content else None
                              for content in contents]
        columns["author_records"] = [
            json.dumps(content["author_records"], ensure_ascii=False)
            if content.get("author_records") is not None else None for content in contents]
        for name, side, key in BRANCH_COLUMNS:
            columns[name] = [(content.get(side) or {}).get(key) for content in contents]
        columns["review_states"] = [
            joined([p.get("state") or "" for p in content["posts"] if p.get("kind") == "review"])
            if "posts" in content else None for content in contents]
        columns["n_review_comments"] = [
            sum(p.get("kind") == "review_comment" for p in content["posts"])
            if "posts" in content else None for content in contents]
        inclusion = [landed.get(document, {}) for document in documents]
        columns["frameworks_landed"] = [joined(i.get("included_in")) for i in inclusion]
        for name in ("first_landing", "days_to_first_landing"):
            columns[name] = [i.get(name) for i in inclusion]
        for column, hidden in withheld.items():
            if column in columns:
                columns[column] = [None if kind in hidden else value
                                   for kind, value in zip(kinds, columns[column])]
        yield Columns(columns, len(ids))


def _withheld_everywhere(withheld, *columns):
    return all(set(withheld.get(c, ())) >= set(KINDS) for c in columns)


# --- long ----------------------------------------------------------------------------

EMPTY = (None, "", [])  # an answer that is not there (coded_status's test)
LONG_COMMON = ("item_id", "document_key", "coder", "round", "codebook_version", "revision",
               "phase", "independent", "assisted", "submitted_at", "seconds_spent", "unsure")


def long(study, names):
    """Every coding revision, one row per question, as dicts."""
    return flattened(long_batches(study, names))


def long_batches(study, names):
    """Every coding revision, one row per question.

    Codings come ordered by item, coder (so each assignment's revisions are together),
    revision: an assignment's revisions are held until its last has been read, since
    whether one is independent (the highest revision with phase independent, as
    coding.labeling.codings.independent_codings says) depends on those after it."""
    codings = (Coding.objects.filter(assignment__item__study=study,
                                     assignment__item__deleted_at__isnull=True)
               .order_by("assignment__item_id", "assignment__coder_id", "revision", "pk")
               .annotate(submitted=as_text_column("submitted_at"),
                         answers=as_text_column("values"))
               .values_list("assignment_id", "assignment__item_id",
                            "assignment__item__document__key", "assignment__coder_id",
                            "assignment__item__round", "codebook_version_id",
                            "codebook_version__number", "revision", "phase", "submitted",
                            "seconds_spent", "unsure", "answers", "assisted"))
    questions = {}  # codebook version id: ([keys], [(key, condition's question, wanted)])

    def asked(version_id):
        if version_id not in questions:
            found = list(Question.objects.filter(version_id=version_id))
            questions[version_id] = ([q.key for q in found], [
                (q.key, *((q.show_if["question"], set(q.show_if["in"])) if q.show_if
                          else (None, None))) for q in found])
        return questions[version_id]

    answer_text = remembered_lists(as_text)
    batch, held = _LongRows(), []  # held: the current assignment's revisions
    for coding in chain.from_iterable(read_ahead(codings)):
        if held and coding[0] != held[0][0]:
            batch.add(held, asked, names, answer_text)
            held = []
            if batch.size >= FETCH:
                yield batch.columns()
                batch = _LongRows()
        held.append(coding)
    if held:
        batch.add(held, asked, names, answer_text)
    if batch.size:
        yield batch.columns()
    yield from rater_batches(study)


def rater_batches(study):
    """Raters' imported answers as long rows, after the codings: one row per answer, the
    rater's name for the coder, its kind and provenance beside (design brief, rule 10)."""
    answers = (RaterCoding.objects.filter(rater__study=study, item__deleted_at__isnull=True)
               .order_by("item_id", "rater__name", "question_key")
               .values_list("item_id", "item__document__key", "rater__name", "item__round",
                            "codebook_version__number", "previous", "coded_at", "imported_at",
                            "question_key", "value", "rater__kind", "rater__model_version",
                            "rater__config_hash", "rater__provenance", "call_id",
                            "call__prompt_hash"))
    for chunk in _chunks(answers.iterator(chunk_size=FETCH), FETCH):
        columns = {name: [] for name in (*LONG_COMMON, "question", "value", "status",
                                         "rater_kind", "rater_provenance")}
        for (item_id, key, rater, round_, version, previous, coded_at, imported_at, question,
             value, kind, model_version, config_hash, provenance, call, prompt) in chunk:
            for name, cell in zip(columns, (
                    item_id, key, rater, round_, version, len(previous) + 1, None, False,
                    None, coded_at or imported_at, None, None, question,
                    value if type(value) is str else as_text(value), ANSWERED, kind,
                    provenance_text(model_version, config_hash, provenance, call, prompt))):
                columns[name].append(cell)
        yield Columns(columns, len(chunk))


def provenance_text(model_version, config_hash, provenance, call=None, prompt=""):
    parts = [f"version {model_version}" if model_version else "",
             f"configuration {config_hash}" if config_hash else "", provenance,
             f"call {call} with prompt {prompt[:12]} (model_calls.jsonl)" if call else ""]
    return "; ".join(p for p in parts if p) or None


class _LongRows:
    """Long rows of some codings: each coding's own columns once, with the number of rows
    (its questions) they fill, and each row's question, value and status."""

    def __init__(self):
        self.common = [[] for _ in LONG_COMMON]
        self.counts, self.questions, self.values, self.statuses = [], [], [], []
        self.size = 0

    def add(self, revisions, asked, names, text=as_text):
        """An assignment's revisions; the last unassisted one with phase independent is the
        independent one. `text` is as_text (remembered_lists(as_text) in long_batches)."""
        independent = None
        for coding in revisions:
            if coding[8] == Coding.Phase.INDEPENDENT and not coding[13]:
                independent = coding
        appends = [column.append for column in self.common]
        add_value, add_status = self.values.append, self.statuses.append
        for coding in revisions:
            (_, item_id, document_key, coder_id, round_, version_id, version, revision, phase,
             submitted_at, seconds_spent, unsure, values, assisted) = coding
            values = parse_json(values)
            keys, conditions = asked(version_id)
            for append, value in zip(appends, (
                    item_id, document_key, names.get(coder_id), round_, version, revision,
                    phase, coding is independent, assisted, submitted_at,
                    seconds_spent, unsure)):
                append(value)
            self.counts.append(len(keys))
            self.size += len(keys)
            self.questions.extend(keys)
            get = values.get
            for key, condition, wanted in conditions:
                if condition is not None:
                    # coding.codebooks.versions.is_shown, with the condition's set made once
                    answer = get(condition)
                    if not (bool(wanted & set(answer)) if isinstance(answer, list)
                            else answer in wanted):
                        add_value(None)
                        add_status(NOT_APPLICABLE)
                        continue
                value = get(key)
                if value in EMPTY:
                    add_value(None)
                    add_status(MISSING)
                else:
                    add_value(value if type(value) is str else text(value))
                    add_status(ANSWERED)

    def columns(self):
        columns = {name: Repeated(Timestamps(values) if name == "submitted_at" else values,
                                  self.counts)
                   for name, values in zip(LONG_COMMON, self.common)}
        columns.update(question=self.questions, value=self.values, status=self.statuses,
                       rater_kind=Repeated(["coder"] * len(self.counts), self.counts),
                       rater_provenance=Repeated([None] * len(self.counts), self.counts))
        return Columns(columns, self.size)


def coded_status(question, values):
    if not is_shown(question, values):
        return NOT_APPLICABLE
    return MISSING if values.get(question.key) in EMPTY else ANSWERED


# --- decisions -----------------------------------------------------------------------

DECISION_NAMES = ("item_id", "document_key", "question", "revision", "current", "value",
                  "method", "decided_by", "rationale", "decided_at")


def decisions(study, names):
    """Every decision revision, as dicts."""
    return flattened(decisions_batches(study, names))


def decisions_batches(study, names):
    """Every decision revision, ordered by item, question, revision: the last of each
    (item, question) is the current one, seen when the next row starts another."""
    found = (Decision.objects.filter(item__study=study, item__deleted_at__isnull=True)
             .order_by("item_id", "question_key", "revision")
             .annotate(value_text=as_text_column("value"),
                       decided=as_text_column("decided_at"))
             .values_list("item_id", "item__document__key", "question_key", "revision",
                          "value_text", "method", "decided_by_id", "rationale", "decided"))
    value_text = remembered(lambda text: as_text(parse_json(text)))

    def batch(rows, following):
        """Columns of these rows; `following` is the row after the last (None at the end)."""
        (item_ids, document_keys, questions, revisions, values, methods, deciders, rationales,
         decided_at) = (list(column) for column in zip(*rows))
        # A row is current when the next row (or `following`) starts another group.
        next_items = [*item_ids[1:], following[0] if following else None]
        next_questions = [*questions[1:], following[2] if following else None]
        return Columns(dict(zip(DECISION_NAMES, (
            item_ids, document_keys, questions, revisions,
            [item != next_item or question != next_question for item, next_item, question,
             next_question in zip(item_ids, next_items, questions, next_questions)],
            [value_text(value) for value in values], methods,
            [names.get(decider) for decider in deciders],
            [rationale or None for rationale in rationales],
            Timestamps(decided_at)))), len(rows))

    held = []
    for chunk in read_ahead(found):
        if held:
            yield batch(held, chunk[0])
        held = chunk
    if held:
        yield batch(held, None)


# --- evidence and notes --------------------------------------------------------------

EVIDENCE_NAMES = ("item_id", "document_key", "coder", "round", "revision", "phase",
                  "submitted_at", "question", "field", "start", "end", "quote")
NOTE_NAMES = ("item_id", "document_key", "coder", "round", "revision", "phase",
              "submitted_at", "note")


def _work(study, column):
    """The study's coding revisions that hold something in `column` (evidence or notes),
    in the long table's order (item, coder, revision), with that column as text."""
    return (Coding.objects.filter(assignment__item__study=study,
                                  assignment__item__deleted_at__isnull=True)
            .order_by("assignment__item_id", "assignment__coder_id", "revision", "pk")
            .annotate(submitted=as_text_column("submitted_at"), text=as_text_column(column))
            .values_list("assignment__item_id", "assignment__item__document__key",
                         "assignment__item__document__kind", "assignment__coder_id",
                         "assignment__item__round", "revision", "phase", "submitted", "text"))


def evidence_batches(study, names, hidden):
    """One row per quote of every coding revision, in each revision's own order: the
    quote, the question it supports and where it stands in the snapshot's field (offsets
    into the field's raw text, as coding.labeling.codings.locate_evidence found them).
    `hidden`: {kind: content fields withheld from the reader}; a quote from a withheld
    field is left out, as the field is."""
    for chunk in read_ahead(_work(study, "evidence")):
        rows = []
        for item, key, kind, coder, round, revision, phase, submitted, text in chunk:
            for quote in parse_json(text) or ():
                field = quote.get("field") or ""
                if field.split(".")[0] in hidden.get(kind, ()):
                    continue
                rows.append((item, key, names.get(coder), round, revision, phase, submitted,
                             quote.get("question") or None, field or None, quote.get("start"),
                             quote.get("end"), quote.get("quote")))
        if rows:
            yield _named_columns(EVIDENCE_NAMES, rows)


def notes_batches(study, names):
    """One row per coding revision whose coder wrote a note, the note as written."""
    for chunk in read_ahead(_work(study, "notes").exclude(notes="")):
        rows = [(item, key, names.get(coder), round, revision, phase, submitted, text)
                for item, key, kind, coder, round, revision, phase, submitted, text in chunk]
        yield _named_columns(NOTE_NAMES, rows)


def _named_columns(names, rows):
    columns = dict(zip(names, (list(column) for column in zip(*rows))))
    columns["submitted_at"] = Timestamps(columns["submitted_at"])
    return Columns(columns, len(rows))


# --- wide ----------------------------------------------------------------------------

def wide(study, codebook, version):
    """One row per item of this codebook, as dicts."""
    return flattened(wide_batches(study, codebook, version))


def wide_batches(study, codebook, version):
    """One row per item of this codebook: the current decision of each question.

    Items ordered by id, and their decisions ordered by item, question, revision, are
    read side by side: a later revision replaces an earlier one, so what is left of
    each question once an item's decisions are read is its current decision."""
    questions = list(version.questions.prefetch_related("options"))
    cells = [_wide_question(question) for question in questions]
    screening = (study.screening or {}).get("question")
    screening_status = f"{screening}__status" if screening else None
    found = (Item.objects.alive().filter(study=study, codebook=codebook).order_by("pk")
             .values_list("pk", "document__key", "round", "in_reliability_sample", "target"))
    decisions_ = chain.from_iterable(read_ahead(
        Decision.objects.filter(item__study=study, item__codebook=codebook,
                                item__deleted_at__isnull=True)
        .order_by("item_id", "question_key", "revision")
        .annotate(value_text=as_text_column("value"))
        .values_list("item_id", "question_key", "value_text", "method")))
    value, undecided = remembered(parse_json), ({}, {})
    following = next(decisions_, None)
    for chunk in read_ahead(found):
        decided = {}  # item id: ({question key: current value}, {question key: its method})
        last = chunk[-1][0]
        while following is not None and following[0] <= last:
            item_id, key, text, method = following
            if item_id not in decided:
                decided[item_id] = ({}, {})
            values, methods = decided[item_id]
            values[key], methods[key] = value(text), method
            following = next(decisions_, None)
        columns = dict(zip(("item_id", "document_key", "round", "in_reliability_sample",
                            "target"), map(list, zip(*chunk))))
        targets = columns.pop("target")
        submitted = _submitted_counts(study, codebook, chunk[0][0], last)
        complete = [round == Item.Round.MAIN and 0 < submitted.get(item_id, 0) >= target
                    for item_id, round, target in zip(columns["item_id"], columns["round"],
                                                      targets)]
        decided = [decided.get(item_id, undecided) for item_id in columns["item_id"]]
        finals, hows = [final for final, _ in decided], [how for _, how in decided]
        ruled_out = [set() for _ in finals]  # per item, filled in codebook order
        for question_cells in cells:
            columns.update(question_cells(finals, hows, ruled_out, complete))
        if screening_status in columns:
            # A record no screener read: not screened, rather than waiting for its codings.
            columns[screening_status] = [
                NOT_SCREENED if status == PENDING and not submitted.get(item_id) else status
                for status, item_id in zip(columns[screening_status], columns["item_id"])]
        yield Columns(columns, len(chunk))


def _submitted_counts(study, codebook, first, last):
    """{item id: submitted assignments} for the chunk's items (ids first..last): one
    aggregate over a range of item ids, so the chunk's size never grows an IN list."""
    return dict(Assignment.objects.filter(
        item__study=study, item__codebook=codebook, item_id__gte=first, item_id__lte=last,
        status=Assignment.Status.SUBMITTED).order_by().values_list("item_id")
        .annotate(n=Count("pk")))


def _wide_question(question):
    """A function ([final values of each item], [their methods], [each item's questions
    ruled out so far]) -> this question's columns: its final value (a column per option
    for multiple choice), __status and __method. Column by column, with the cells that
    need a closer look (no decision for this question: undecided, or not applicable by
    its condition, also when what the condition names was itself ruled out without a
    decision of its own) fixed afterwards; the questions are taken in codebook order, so
    a parent is ruled out before its children (adjudication.decisions.consequences)."""
    key, kind, show_if = question.key, question.kind, question.show_if
    options = [o.value for o in question.options.all()]
    status_name, method_name = f"{key}__status", f"{key}__method"
    option_names = [f"{key}__{option}" for option in options]

    def columns(finals, hows, ruled_out, complete):
        values = [final.get(key, _ABSENT) for final in finals]
        methods = [how.get(key) for how in hows]
        statuses = [MISSING if value is None else _ABSENT if value is _ABSENT else ANSWERED
                    for value in values]
        if _ABSENT in statuses:
            for at, status in enumerate(statuses):
                if status is _ABSENT:
                    final, parent = finals[at], show_if and show_if["question"]
                    # A reopened parent waits for a decision: nothing follows from it yet.
                    out = parent and (parent in ruled_out[at] or (
                        parent in final and hows[at].get(parent) != "reopened"
                        and not is_shown(question, final)))
                    statuses[at] = (NOT_APPLICABLE if out else UNDECIDED if complete[at]
                                    else PENDING)
                    if out:
                        ruled_out[at].add(key)
                    values[at] = None
        if not {"not_applicable", "reopened", "not_adjudicated"}.isdisjoint(methods):
            # Consequences of a decision on the question the condition names, and answers
            # the codebook leaves to the coders.
            for at, method in enumerate(methods):
                if method == "not_applicable":
                    statuses[at], values[at] = NOT_APPLICABLE, None
                    ruled_out[at].add(key)
                elif method == "reopened":
                    statuses[at], values[at], methods[at] = (
                        UNDECIDED if complete[at] else PENDING), None, None
                elif method == "not_adjudicated":
                    statuses[at], values[at] = NOT_ADJUDICATED, None
        if kind == "number" and options:
            for at, value in enumerate(values):
                if value is not None and value in options:
                    statuses[at], values[at] = value, None
        found = {status_name: statuses, method_name: methods}
        if kind == "multiple":
            picked = [set(value or []) if status == ANSWERED else None
                      for value, status in zip(values, statuses)]
            for option, name in zip(options, option_names):
                found[name] = [None if chosen is None else option in chosen for chosen in picked]
        else:
            found[key] = values
        return found

    return columns


_ABSENT = object()  # a question an item has no decision for (yet)


def _chunks(iterable, size):
    chunk = []
    for row in iterable:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk

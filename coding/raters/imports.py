"""Importing raters' codings from CSV or JSON Lines, streamed, checked, idempotent.

One row is one answer: `item` (the document identifier: an arXiv id or owner/repo#number),
`rater` (a rater's name in the study), `question` (a key), `value`, and optionally
`evidence` and `coded_at` (ISO 8601 with a time zone). Each answer is checked against the
current published version of the item's codebook: the question exists, the value is an
option, a number within bounds, yes/no…, and a conditional question is answered only when
the same rater's answer to its condition question for that item (in the file or already
imported) meets the condition.

The file is read in batches of BATCH rows inside one transaction: errors are collected
with their line and field (up to MAX_ERRORS), and if there is any, nothing is written. A
dry run does the same work and rolls back, reporting what would change. Re-importing a
file changes nothing (`unchanged`); a changed answer replaces the stored one, which is
kept in `previous`.
"""

import contextlib
import csv
import json
import os
from dataclasses import dataclass, field
from itertools import islice

from django.db import connection, transaction
from django.utils import timezone, translation
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from coding.access.limits import IMPORT_LINE_MAX_BYTES, TEXT_ANSWER_MAX_CHARS, too_long
from coding.codebooks.versions import (
    check_answer, is_shown, questions_with_options, unstorable_text,
)
from coding.models import CodebookVersion, Item, Question, Rater, RaterCoding
from ingest.sources.lines import TextLines, Unreadable
from workbench import jobs
from workbench.copying import copy_rows
from workbench.jobs import user_facing

BATCH = 5_000
MAX_ERRORS = 100
FORMATS = ("csv", "jsonl")
COLUMNS = ("item", "rater", "question", "value", "evidence", "coded_at")
REQUIRED = ("item", "rater", "question", "value")


@user_facing
class RaterImportError(Exception):
    """The file has bad rows; nothing was written. `errors`: [(line, field, message)]."""

    def __init__(self, errors):
        self.errors = errors
        shown = _("; ").join(_("%(where)s: %(problem)s") % {
            "where": where(line, name), "problem": message} for line, name, message in errors[:5])
        more = (_(" (and %(count)s more)") % {"count": len(errors) - 5}
                if len(errors) > 5 else "")
        super().__init__(ngettext("%(count)s bad row, nothing imported: %(shown)s%(more)s",
                                  "%(count)s bad rows, nothing imported: %(shown)s%(more)s",
                                  len(errors))
                         % {"count": len(errors), "shown": shown, "more": more})


def where(line, name):
    """A bad row's place: its line and the field."""
    return _("line %(line)s, %(field)s") % {"line": line, "field": name}


class _Rollback(Exception):
    pass


@dataclass
class Report:
    dry_run: bool = False
    rows: int = 0
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    errors: list = field(default_factory=list)
    examples: list = field(default_factory=list)  # a few changes, for the dry run to show

    def as_dict(self):
        return {"dry_run": self.dry_run, "written": not self.dry_run and not self.errors,
                "counts": {"rows": self.rows, "new": self.new, "changed": self.changed,
                           "unchanged": self.unchanged, "errors": len(self.errors)},
                "errors": [{"line": line, "field": name, "message": message}
                           for line, name, message in self.errors],
                "examples": self.examples}


def format_of(name, given=""):
    """The file's format: given, or from its name (.csv, else JSON Lines)."""
    if given:
        if given not in FORMATS:
            raise ValueError(_("format must be one of %(choices)s")
                             % {"choices": ", ".join(FORMATS)})
        return given
    return "csv" if str(name).lower().endswith(".csv") else "jsonl"


def read_rows(stream, fmt):
    """(line number, {column: value}) from a stream of lines (text, or TextLines over a
    binary file); a row that cannot be read is (line, None, why). A line that cannot be
    read as text ends the reading with its error."""
    try:
        yield from _rows(stream, fmt)
    except Unreadable as problem:
        yield problem.line, None, problem.problem
    except csv.Error as error:  # a field past csv's own limit, a NUL byte
        yield getattr(stream, "number", 0) or 1, None, _("not CSV: %(problem)s") % {
            "problem": error}


def _rows(stream, fmt):
    if fmt == "csv":
        reader = csv.DictReader(stream)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or ())]
        if missing:
            yield 1, None, (_("the header lacks %(missing)s (columns: %(columns)s)")
                            % {"missing": ", ".join(missing), "columns": ", ".join(COLUMNS)})
            return
        for row in reader:
            yield reader.line_num, row, None
        return
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except RecursionError:
            yield number, None, _("malformed JSON: nested too deeply")
            continue
        except ValueError as error:
            yield number, None, _("not JSON: %(problem)s") % {"problem": error}
            continue
        if not isinstance(row, dict):
            yield number, None, _("expected a JSON object")
            continue
        yield number, row, None


def import_codings(study, stream, fmt, *, dry_run=False, progress=None):
    """Import the rows of `stream` into the study; the Report. Raises RaterImportError
    (nothing written) when a row is bad, unless this is a dry run, whose report lists them."""
    return import_rows(study, read_rows(stream, fmt), dry_run=dry_run, progress=progress)


def import_rows(study, rows, *, dry_run=False, progress=None):
    """import_codings of rows already read: (line, {column: value}, None) each, as read_rows
    gives them (coding.raters.qdpx passes a project's codings)."""
    report = Report(dry_run=dry_run)
    try:
        with transaction.atomic():
            _import(study, rows, report, progress)
            if report.errors or dry_run:
                raise _Rollback
    except _Rollback:
        pass
    if report.errors and not dry_run:
        raise RaterImportError(report.errors)
    return report


def import_file(study, path, fmt="", **kwargs):
    with opened(path) as raw:
        return import_codings(study, TextLines(raw, IMPORT_LINE_MAX_BYTES),
                              format_of(path, fmt), **kwargs)


def count_rows(path):
    with opened(path) as stream:
        return sum(1 for line in stream if line.strip())


@contextlib.contextmanager
def opened(path):
    """A file as a binary stream: a path on this machine (the command's), or an upload's
    key in the workbench's file storage, where pages and the API keep uploads."""
    if os.path.exists(path):
        with open(path, "rb") as stream:
            yield stream
        return
    from workbench import storage

    with storage.open_stream(path) as stream:
        yield stream


def _import(study, rows, report, progress):
    checker = _Checker(study, report)
    while batch := list(islice(rows, BATCH)):
        checker.look_up_items(batch)
        checked = [answer for answer in map(checker.check, batch) if answer]
        if not report.errors:
            write_answers(checked, report)
        report.rows += len(batch)
        if progress:
            progress(report.rows)
        if len(report.errors) >= MAX_ERRORS:
            return
    checker.check_conditions()


class _Checker:
    """Checks rows one by one; remembers what it needs to check conditions at the end."""

    def __init__(self, study, report):
        self.study, self.report = study, report
        self.raters = {r.name: r for r in Rater.objects.filter(study=study)}
        self.items = {}  # document key: (item id, version) — looked up a batch at a time
        self.versions = {}  # codebook id: (version, {key: question})
        self.seen = {}  # (rater id, item id, key): line
        # Answers to questions others depend on, and the conditional answers to check.
        self.conditions = {}  # (rater id, item id, key): value
        self.conditional = []  # (line, rater id, item id, question)

    def error(self, line, name, message):
        if len(self.report.errors) < MAX_ERRORS:
            self.report.errors.append((line, name, message))

    def check(self, read):
        line, row, problem = read
        if problem:
            return self.error(line, "row", problem)
        missing = [c for c in REQUIRED if row.get(c) in (None, "")]
        if missing:
            return self.error(line, missing[0], pgettext("a field", "required"))
        rater = self.raters.get(str(row["rater"]))
        if rater is None:
            return self.error(line, "rater", _("no rater %(name)r in this study; add it on "
                                               "the raters page first")
                              % {"name": str(row["rater"])[:100]})
        found = self._item(str(row["item"]))
        if found is None:
            return self.error(line, "item", _("no item %(key)r in this study")
                              % {"key": str(row["item"])[:100]})
        if found == "unpublished":
            return self.error(line, "item", _("its codebook has no published version yet"))
        item_id, version, questions = found
        key = str(row["question"])
        question = questions.get(key)
        if question is None:
            return self.error(line, "question", _("no question %(key)r in %(version)s")
                              % {"key": key[:100], "version": version})
        try:
            value = check_answer(question, _typed(question, row["value"]))
        except ValueError as error:
            return self.error(line, "value", str(error))
        evidence, coded_at = self._extras(line, row)
        if evidence is None:
            return None
        earlier = self.seen.setdefault((rater.pk, item_id, key), line)
        if earlier != line:
            return self.error(line, "question", _("%(key)s of %(item)s by %(rater)s is "
                                                  "already given on line %(line)s")
                              % {"key": key, "item": row["item"], "rater": rater.name,
                                 "line": earlier})
        if key in self.condition_keys(version):
            self.conditions[(rater.pk, item_id, key)] = value
        if question.show_if:
            self.conditional.append((line, rater.pk, item_id, question))
        return Answer(rater, item_id, key, value, version, evidence, coded_at)

    def _extras(self, line, row):
        evidence = row.get("evidence") or ""
        if not isinstance(evidence, str):
            return self.error(line, "evidence", _("expected text")), None
        if problem := unstorable_text(evidence) or too_long(evidence, TEXT_ANSWER_MAX_CHARS,
                                                            "the evidence"):
            return self.error(line, "evidence", problem), None
        coded_at = row.get("coded_at") or None
        if coded_at is not None:
            try:
                parsed = parse_datetime(coded_at) if isinstance(coded_at, str) else None
            except ValueError:  # well formed, but no such day or hour (2025-13-45T99:00)
                parsed = None
            if parsed is None or parsed.tzinfo is None:
                self.error(line, "coded_at", _("expected a date and time with a time zone, "
                                               "e.g. 2026-01-31T12:00:00Z"))
                return None, None
            coded_at = parsed
        return evidence, coded_at

    def look_up_items(self, batch):
        """The batch's items not met before, in one query."""
        keys = {str(row["item"]) for _, row, _ in batch if row and row.get("item") not in
                (None, "")} - self.items.keys()
        if not keys:
            return
        self.items.update(dict.fromkeys(keys))
        found = (Item.objects.alive().filter(study=self.study, document__key__in=keys)
                 .values_list("document__key", "pk", "codebook_id"))
        for key, item_id, codebook_id in found:
            version, questions = self._version(codebook_id)
            self.items[key] = (item_id, version, questions) if version else "unpublished"

    def _item(self, key):
        return self.items.get(key)

    def _version(self, codebook_id):
        if codebook_id not in self.versions:
            version = (CodebookVersion.objects.filter(
                codebook_id=codebook_id, status=CodebookVersion.Status.PUBLISHED)
                .order_by("-number").first())
            questions = {q.key: q for q in questions_with_options(version)} if version else {}
            self.versions[codebook_id] = (version, questions)
        return self.versions[codebook_id]

    def condition_keys(self, version):
        if not hasattr(version, "_condition_keys"):
            version._condition_keys = {q.show_if["question"] for q in
                                       questions_with_options(version) if q.show_if}
        return version._condition_keys

    def check_conditions(self):
        """A conditional answer needs its rater's answer to the condition question to meet
        the condition: from the file, or else as imported before."""
        wanted = {(rater, item, q.show_if["question"]) for _, rater, item, q in self.conditional
                  if (rater, item, q.show_if["question"]) not in self.conditions}
        stored = _stored_answers(wanted)
        for line, rater, item, question in self.conditional:
            condition = question.show_if["question"]
            answer = self.conditions.get((rater, item, condition), stored.get(
                (rater, item, condition)))
            if not is_shown(question, {condition: answer}):
                self.error(line, "question", _("%(key)s does not apply: %(condition)s is not "
                                               "one of %(values)s for this item and rater")
                           % {"key": question.key, "condition": condition,
                              "values": question.show_if["in"]})


def _stored_answers(wanted):
    if not wanted:
        return {}
    rows = RaterCoding.objects.filter(rater_id__in={w[0] for w in wanted},
                                      item_id__in={w[1] for w in wanted},
                                      question_key__in={w[2] for w in wanted})
    return {(r.rater_id, r.item_id, r.question_key): r.value for r in rows}


def _typed(question, value):
    """A file's text as the answer the question takes: a number, a list of options."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if question.kind == Question.Kind.MULTIPLE:
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                return text
        return [part.strip() for part in text.split(";") if part.strip()]
    if question.kind == Question.Kind.NUMBER and text not in {o.value for o in
                                                              question.options.all()}:
        try:
            number = float(text)
        except ValueError:
            return text
        return int(number) if number.is_integer() and "." not in text else number
    return text


def write_answers(answers, report):
    """New answers created, changed ones replaced (the old kept in `previous`). Shared by
    the file import and the model raters' runs (coding.model_raters.runs), whose answers
    carry the call they came from."""
    if not answers:
        return
    now = timezone.now()
    # Plain tuples: at a re-import every row is stored and unchanged, and a model instance
    # each was most of its time. Only the changed ones are read whole, below.
    stored = {(rater, item, key): (pk, value, evidence, coded_at, call)
              for pk, rater, item, key, value, evidence, coded_at, call in
              RaterCoding.objects.filter(
                  rater_id__in={a.rater_id for a in answers},
                  item_id__in={a.item_id for a in answers},
                  question_key__in={a.question_key for a in answers}).values_list(
                  "pk", "rater_id", "item_id", "question_key", "value", "evidence", "coded_at",
                  "call_id")}
    new, differing, relinked = [], {}, []
    for answer in answers:
        old = stored.get((answer.rater_id, answer.item_id, answer.question_key))
        if old is None:
            new.append(answer)
        elif old[1:4] != (answer.value, answer.evidence, answer.coded_at):
            differing[old[0]] = answer
        elif answer.call_id is not None and answer.call_id != old[4]:
            relinked.append((old[0], answer.call_id))
            report.unchanged += 1
        else:
            report.unchanged += 1
    changed = []
    for old in RaterCoding.objects.filter(pk__in=differing).order_by("pk"):
        answer = differing[old.pk]
        old.previous = [*old.previous, {
            "value": old.value, "evidence": old.evidence, "imported_at": old.imported_at.isoformat(),
            "coded_at": old.coded_at.isoformat() if old.coded_at else None}]
        old.value, old.evidence, old.coded_at = answer.value, answer.evidence, answer.coded_at
        old.codebook_version, old.imported_at = answer.codebook_version, now
        old.call_id = answer.call_id
        changed.append(old)
        _example(report, "changed", answer, old.previous[-1]["value"])
    for answer in new[:3]:
        _example(report, "new", answer, None)
    _insert(new, now)
    RaterCoding.objects.bulk_update(changed, ["value", "evidence", "coded_at", "imported_at",
                                              "codebook_version", "previous", "call"],
                                    batch_size=1000)
    # The same answer given again by a later call: its provenance is the later call.
    RaterCoding.objects.bulk_update([RaterCoding(pk=pk, call_id=call) for pk, call in relinked],
                                    ["call"], batch_size=1000)
    report.new += len(new)
    report.changed += len(changed)


@dataclass(slots=True)
class Answer:
    """A checked row: what a RaterCoding is made of, without a model instance per row
    (building 100,000 of them cost a tenth of an import)."""

    rater: Rater
    item_id: int
    question_key: str
    value: object
    codebook_version: CodebookVersion
    evidence: str
    coded_at: object
    call_id: int | None = None

    @property
    def rater_id(self):
        return self.rater.pk


COPIED = ("rater_id", "item_id", "question_key", "codebook_version_id", "value", "evidence",
          "coded_at", "imported_at", "previous", "call_id")


def _insert(new, now):
    """New answers written: on PostgreSQL by COPY (psycopg 3), in this transaction, so a
    dry run's rollback and a bad row's still undo it; elsewhere by bulk_create."""
    if connection.vendor != "postgresql":
        RaterCoding.objects.bulk_create([RaterCoding(
            rater=a.rater, item_id=a.item_id, question_key=a.question_key, value=a.value,
            codebook_version=a.codebook_version, evidence=a.evidence, coded_at=a.coded_at,
            imported_at=now, call_id=a.call_id) for a in new], batch_size=BATCH)
        return
    from psycopg.types.json import Jsonb

    copy_rows(RaterCoding._meta.db_table, COPIED, (
        (a.rater.pk, a.item_id, a.question_key, a.codebook_version.pk, Jsonb(a.value),
         a.evidence, a.coded_at, now, Jsonb([]), a.call_id) for a in new))


def _example(report, what, answer, before):
    if len(report.examples) < 10:
        report.examples.append({"change": what, "rater": answer.rater.name,
                                "item": answer.item_id, "question": answer.question_key,
                                "before": before, "after": answer.value})


def report_text(result):
    """A report (as_dict) as lines for a person: the command's output."""
    counts = result["counts"]
    numbers = {key: f"{counts[key]:,}" for key in ("rows", "new", "changed", "unchanged")}
    head = (_("Dry run: would import %(rows)s rows: %(new)s new, %(changed)s changed, "
              "%(unchanged)s unchanged.") if result["dry_run"] else
            _("Imported %(rows)s rows: %(new)s new, %(changed)s changed, %(unchanged)s "
              "unchanged."))
    lines = [head % numbers]
    lines += [_("%(where)s: %(problem)s") % {"where": where(e["line"], e["field"]),
                                             "problem": e["message"]}
              for e in result["errors"][:20]]
    if len(result["errors"]) > 20:
        lines.append(_("… and %(count)s more") % {"count": len(result["errors"]) - 20})
    return lines


# --- as a job ------------------------------------------------------------------------

def start_import(study, user, path, fmt="", dry_run=False):
    """Queue the import of a saved file; the Job (its page shows progress and the report)."""
    from coding.access.archive import check_open

    if not dry_run:
        check_open(study)
    return jobs.enqueue("import_rater_codings", {
        "study": study.pk, "study_slug": study.slug, "path": str(path),
        "format": format_of(path, fmt), "dry_run": bool(dry_run),
        "language": translation.get_language()}, user=user)  # see languages.job_language


@jobs.job_handler("import_rater_codings")
def run_import(job, report):
    """Re-running it is harmless: the import is one transaction and idempotent."""
    from coding.accounts.languages import job_language
    from coding.models import Study

    study = Study.objects.get(pk=job.params["study"])
    path, fmt = job.params["path"], job.params["format"]
    total = max(count_rows(path) - (fmt == "csv"), 0)
    # The messages the job keeps are written in the language it was started in.
    with translation.override(job_language(job)):
        progress = lambda done: report(  # noqa: E731
            done, total, _("%(done)s of %(total)s rows read")
            % {"done": f"{done:,}", "total": f"{total:,}"})
        try:
            result = import_file(study, path, fmt, dry_run=job.params["dry_run"],
                                 progress=progress).as_dict()
        except RaterImportError as error:
            _log_errors(job, error.errors, path)
            raise
        _log_errors(job, [(e["line"], e["field"], e["message"]) for e in result["errors"]],
                    path)
    return {**result, "study": study.slug}


def _log_errors(job, errors, path):
    """Each bad row a line of the job's log, located by file (its own name: the server's
    folders are its business), line and field."""
    name = str(path).replace("\\", "/").rsplit("/", 1)[-1]
    for line, field_name, message in errors:
        jobs.log(job, message, level="error", location=f"{name} {where(line, field_name)}")

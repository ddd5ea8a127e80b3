"""Filling a study's pool from an import, with screening and a PRISMA-style count.

An import (ingest.imports.run_import) reads and writes documents; this side decides
which of them enter the study (screening by date range, arXiv categories and a
keyword or regular-expression query over title and abstract), adds them as items
pinned to a snapshot, and keeps the counts of every run so the study can report its
screening flow. Every record a run reads is counted once (FLOW): a duplicate within the
file, failed, excluded by which rule, a deletion, of a kind the study has no codebook
for, already in the pool, or added to it; a run that stops early (strict mode, a failed
source, a cancel) keeps the counts of what it read.
"""

import contextlib
import re
from dataclasses import asdict, dataclass, field
from datetime import date

from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_noop, pgettext_lazy

from coding.access.archive import check_open
from coding.labeling.queue import new_item_fields
from coding.models import ImportRun, Item
from ingest.imports import run_import
from ingest.jobs import error_logger, warning_logger
from ingest.models import Document, Snapshot, content_sha256
from ingest.records import DocumentRecord
from workbench import jobs, storage

# The parts of a run's records, which add up to its `read` (accounted_for).
FLOW = ("added_to_pool", "already_in_pool", "no_codebook", "excluded_total", "duplicates",
        "failed", "deletions")
KIND_WORDS = {"paper": pgettext_lazy("document kind", "papers"),
              "thread": pgettext_lazy("document kind", "threads")}
RULES = {"date_range": gettext_noop("outside the date range"),
         "categories": gettext_noop("not in the chosen categories"),
         "query": gettext_noop("does not match the query")}


@dataclass
class Screening:
    date_from: date | None = None
    date_to: date | None = None
    categories: list = field(default_factory=list)
    query: str = ""
    regex: bool = False

    @classmethod
    def from_dict(cls, data):
        """Rules from a form or an API request; ValueError says what is wrong."""
        data = data or {}
        if not isinstance(data, dict):
            raise ValueError(gettext("screening must be an object of rules"))
        categories, query = data.get("categories") or [], data.get("query") or ""
        if isinstance(categories, str):
            categories = categories.split(",")
        if not isinstance(categories, list) or not all(isinstance(c, str) for c in categories):
            raise ValueError(gettext('categories must be a list of arXiv categories, e.g. '
                                     '["cs.LG"]'))
        if not isinstance(query, str):
            raise ValueError(gettext("query must be text, got %(type)s")
                             % {"type": type(query).__name__})
        rules = cls(
            date_from=_date(data.get("date_from"), "date_from"),
            date_to=_date(data.get("date_to"), "date_to"),
            categories=[c.strip() for c in categories if c.strip()],
            query=query.strip(), regex=bool(data.get("regex")))
        rules.matcher()  # a bad pattern is refused before anything is read
        return rules

    def to_dict(self):
        data = asdict(self)
        data["date_from"] = self.date_from and self.date_from.isoformat()
        data["date_to"] = self.date_to and self.date_to.isoformat()
        return data

    def matcher(self):
        if not self.query:
            return None
        if self.regex:
            try:
                return re.compile(self.query, re.IGNORECASE)
            except re.error as error:
                raise ValueError(gettext("query is not a valid regular expression: %(problem)s")
                                 % {"problem": error}) from error
        # Keywords: comma-separated phrases, any of which may occur.
        phrases = [re.escape(p.strip()) for p in self.query.split(",") if p.strip()]
        return re.compile("|".join(phrases), re.IGNORECASE)

    def screen(self):
        """The callable import_records takes: None keeps a record, else the excluding rule."""
        matcher = self.matcher()

        def screen(record):
            if not isinstance(record, DocumentRecord):
                return None
            day = record.published.date() if record.published else None
            if day and ((self.date_from and day < self.date_from)
                        or (self.date_to and day > self.date_to)):
                return "date_range"
            if self.categories and record.kind == "paper" and not (
                    set(self.categories) & set(record.metadata.get("categories") or [])):
                return "categories"
            text = " ".join([record.title, record.metadata.get("abstract") or "",
                             record.posts[0].body if record.posts else ""])
            if matcher and not matcher.search(text):
                return "query"
            return None

        return screen


def _date(value, name):
    if not value:
        return None
    try:
        return value if isinstance(value, date) else date.fromisoformat(str(value))
    except ValueError as error:
        raise ValueError(gettext("%(name)s must be a date like 2025-01-31, got %(value)r")
                         % {"name": name, "value": value}) from error


class PoolAdder:
    """Adds each batch's documents to the study as items; idempotent, as a re-run hands it
    the same documents again. Coded items keep their snapshot; an uncoded item moves to
    the document's newest content."""

    def __init__(self, study, round=Item.Round.MAIN, run=None):
        self.study = study
        self.round = round  # the round new items join: main, or calibration
        self.run = run  # the ImportRun whose items these are (the item browser's filter)
        self.codebooks = {c.applies_to: c for c in study.codebooks.order_by("-pk")}
        self.counts = {"added_to_pool": 0, "already_in_pool": 0, "refreshed": 0,
                       "no_codebook": 0}

    def __call__(self, written):
        ids = [document_id for document_id, outcome in written if outcome != "deleted"]
        changed = {document_id for document_id, outcome in written if outcome == "updated"}
        with transaction.atomic():
            existing = {i.document_id: i for i in Item.objects.filter(study=self.study,
                                                                      document_id__in=ids)}
            self.counts["already_in_pool"] += len(existing)
            self._refresh([existing[d] for d in changed if d in existing])
            self._add([d for d in ids if d not in existing])

    def _add(self, document_ids):
        documents = list(Document.objects.filter(pk__in=document_ids).prefetch_related("posts"))
        wanted = [d for d in documents if d.kind in self.codebooks]
        self.counts["no_codebook"] += len(documents) - len(wanted)
        snapshots = self._snapshots(wanted)
        Item.objects.bulk_create([
            Item(study=self.study, document=d, snapshot=snapshots[d.pk],
                 codebook=self.codebooks[d.kind], import_run=self.run,
                 **new_item_fields(self.study, d, self.round))
            for d in wanted], ignore_conflicts=True)
        self.counts["added_to_pool"] += len(wanted)

    def _snapshots(self, documents):
        """{document id: snapshot}; first snapshots of new documents in one insert."""
        have = set(Snapshot.objects.filter(document__in=documents)
                   .values_list("document_id", flat=True))
        new = [d for d in documents if d.pk not in have]
        Snapshot.objects.bulk_create([
            Snapshot(document=d, number=1, content=content, sha256=content_sha256(content))
            for d in new for content in [d.content()]], ignore_conflicts=True)
        firsts = {s.document_id: s for s in Snapshot.objects.filter(document__in=new, number=1)}
        return {d.pk: firsts[d.pk] if d.pk in firsts else d.take_snapshot() for d in documents}

    def _refresh(self, items):
        for item in items:
            if item.assignments.exists():
                continue  # what was coded stays as it was coded
            snapshot = item.document.take_snapshot()
            if snapshot.pk != item.snapshot_id:
                Item.objects.filter(pk=item.pk).update(snapshot=snapshot)
                self.counts["refreshed"] += 1


def import_into_study(study, params, screening, *, round=Item.Round.MAIN, job=None,
                      report=None):
    """Run one import into the study's pool and record its screening counts (none into an
    archived study: StudyArchived, also for a job started before it was archived). A run
    that stops keeps what it counted, its status failed and the reason."""
    check_open(study)
    kept = params if round == Item.Round.MAIN else {**params, "round": round}
    run = ImportRun.objects.create(study=study, job=job, params=kept,
                                   screening=screening.to_dict())
    # New documents join `round`; those already in the pool keep theirs.
    adder = PoolAdder(study, round, run)
    read = {}  # the reader's counts after its latest batch

    def progress(counts):
        read.update(counts)
        if report:
            report(counts["read"], None, gettext(
                "%(read)s read, %(added)s added to the pool, %(failed)s failed") % {
                    "read": counts["read"], "added": adder.counts["added_to_pool"],
                    "failed": counts["failed"]})

    # Each bad record is a line of the job's log, up to a bound: a wholly wrong
    # file must not write millions of lines.
    log_error = error_logger(job) if job is not None else None
    log_warning = warning_logger(job) if job is not None else None

    try:
        with readable(study, params) as source:
            counts = run_import(source, screen=screening.screen(), on_batch=adder,
                                progress=progress, log_error=log_error, log_warning=log_warning)
    except BaseException as error:
        counts = {**getattr(error, "counts", read), **adder.counts}
        ImportRun.objects.filter(pk=run.pk).update(
            counts=counts, status=ImportRun.Status.FAILED, error=str(error)[:2000],
            finished_at=timezone.now())
        raise
    counts = {**counts, **adder.counts}
    ImportRun.objects.filter(pk=run.pk).update(counts=counts, status=ImportRun.Status.DONE,
                                               finished_at=timezone.now())
    if counts["no_codebook"] and job is not None:
        jobs.log(job, no_codebook_words(study, counts["no_codebook"]), level="warning")
    return counts


def no_codebook_words(study, n=None):
    """Why documents of a kind go nowhere: "the study has no codebook for threads"."""
    missing = gettext(" or ").join(str(KIND_WORDS[k]) for k in missing_kinds(study))
    if n is None:
        return gettext("This study has no codebook for %(kinds)s: those read by an import "
                       "will not join the pool. Add a codebook for them first.") % {
                           "kinds": missing}
    return gettext("%(n)s documents did not join the pool: the study has no codebook for "
                   "%(kinds)s. Add one, then import again.") % {"n": f"{n:,}", "kinds": missing}


def missing_kinds(study):
    """The document kinds ("paper", "thread") the study has no codebook for: an import of
    them adds nothing, so the import page and the API warn first."""
    have = set(study.codebooks.values_list("applies_to", flat=True))
    return [kind for kind in KIND_WORDS if kind not in have]


def accounted_for(counts):
    """The parts of a run's (or the flow's) records; they sum to `read` when every
    record was counted once."""
    excluded = counts.get("excluded") or {}
    parts = {key: counts.get(key, 0) for key in FLOW if key != "excluded_total"}
    parts["excluded_total"] = sum(excluded.values()) if isinstance(excluded, dict) else 0
    return parts


@contextlib.contextmanager
def readable(study, params):
    """The import params with a stored file (an upload, a file under the study's import
    prefix: workbench.storage) given as a path on this machine, while it is read."""
    key = params.get("stored")
    if key is None:
        yield params
        return
    if not storage.owned_by(key, study.slug):
        raise jobs.JobError(gettext("The import names a stored file that is not this "
                                    "study's."))
    try:
        with storage.local_copy(key) as path:
            yield {**{k: v for k, v in params.items() if k != "stored"}, "path": path}
    except FileNotFoundError:
        raise jobs.JobError(gettext("The file to import, %(name)r, is no longer stored; "
                                    "upload it again.")
                            % {"name": key.rsplit("/", 1)[-1][:200]}) from None


@jobs.job_handler("import_to_study")
def run_import_job(job, report):
    from coding.accounts.languages import job_language
    from coding.models import Study

    study = Study.objects.get(pk=job.params["study"])
    # Its progress, refusals and bad records' lines are written in the language it was
    # started in. The counts keep their keys (the job page names them:
    # workbench_jobs.counter_label).
    with translation.override(job_language(job)):
        counts = import_into_study(study, job.params["source"],
                                   Screening.from_dict(job.params.get("screening")),
                                   round=job.params.get("round", Item.Round.MAIN), job=job,
                                   report=report)
    return {"counts": flat_counts(counts)}


def flat_counts(counts):
    """Counts for a table: excluded rules as their own lines."""
    flat = {k: v for k, v in counts.items() if k != "excluded"}
    for rule, n in sorted((counts.get("excluded") or {}).items()):
        flat[f"excluded: {RULES.get(rule, rule)}"] = n
    return flat


def screening_flow(study):
    """The study's PRISMA-style flow: totals over every import run (each part of FLOW,
    `read`, and whether the parts add up to it), and the runs, each with its source's
    file name, who started it and its status."""
    runs = list(ImportRun.objects.filter(study=study).select_related("job__created_by")
                .order_by("created_at"))
    totals = {"read": 0, "excluded": {}, **{key: 0 for key in FLOW}}
    for run in runs:
        totals["read"] += run.counts.get("read", 0)
        for key, n in accounted_for(run.counts).items():
            totals[key] += n
        for rule, n in (run.counts.get("excluded") or {}).items():
            totals["excluded"][rule] = totals["excluded"].get(rule, 0) + n
        run.parts = accounted_for(run.counts)
        run.adds_up = sum(run.parts.values()) == run.counts.get("read", 0)
        run.file_name = source_name(run.params)
        run.started_by = run.job.created_by if run.job and run.job.created_by else None
        run.shown_status = shown_status(run)
    totals["refreshed"] = sum(run.counts.get("refreshed", 0) for run in runs)
    totals["excluded_named"] = {gettext(RULES[rule]) if rule in RULES else rule: n
                                for rule, n in sorted(totals["excluded"].items())}
    totals["accounted"] = sum(totals[key] for key in FLOW)
    totals["adds_up"] = totals["accounted"] == totals["read"]
    return {"totals": totals, "runs": runs}


def source_name(params):
    """The file a run read, by its own name (the server's folders are its business), or
    what a live source read: "papers.jsonl", "owner/name", "cat:cs.LG"."""
    path = params.get("stored") or params.get("path")
    if path:
        return str(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return str(params.get("repository") or params.get("search_query") or params.get("set")
               or "")[:200]


def shown_status(run):
    """The run's own status, or its job's when the job ended without the run finishing
    (a worker lost mid-run, a job cancelled before it started reading)."""
    if run.status == ImportRun.Status.RUNNING and run.job and run.job.status in (
            "failed", "cancelled"):
        return run.job.status
    return run.status

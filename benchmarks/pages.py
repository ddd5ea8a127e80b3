"""Pages and lists at 1k, 10k and 100k items, over HTTP, as an owner and an adjudicator.

    .venv/bin/python benchmarks/pages.py [--sizes 1000,10000,100000] [--requests 20] [--keep]
    .venv/bin/python benchmarks/pages.py --build-only      # build and keep the studies, time nothing
    .venv/bin/python benchmarks/pages.py --reuse           # time the kept studies (kept again)

Target (design brief, "Scale this design is for"; issue 13): pages and API lists p95
under 300 ms at 100,000 items on PostgreSQL; a paged page costs at most 3x more at 100k
than at 1k; the agreement report under 10 s; an export of a whole study, all shapes,
under 30 s. The paged pages, held to the growth target too: the review list, the codings
page and the codings and disagreements APIs, each at its first page and a deep one; the
other pages (home, study, queue, review item, agreement) to the p95 target only.

The data. A scratch database of its own (benchmarks/scratch.py: `<name>_pages_bench`
beside DATABASE_URL's database, default postgres://postgres@127.0.0.1:5432/workbench;
created and migrated here, dropped at the end unless --keep; --reuse measures the studies
a --keep or --build-only run left, so a timed run in a quiet window need not build them,
and builds only a size it lacks). For each size, one study
with its own owner, adjudicator and 3 coders (so a size's home page lists only its own
study), the preset paper codebook (coding.studies.presets.PAPER_CODEBOOK through
coding.codebooks.versions.create_codebook), overlap 2 on every item, written with COPY (the rows
bulk_create would store, ids from each table's own sequence):

- invented papers (title, abstract of 5 to 9 sentences, authors, affiliations) with
  their first snapshot, one item each;
- 85% of items complete: two of the three coders (pairs in turn) each with a submitted
  assignment and one independent coding answering every question that applies, with one
  evidence quote; 7.5% with one coding only; 7.5% untouched. `Item.taken` as the queue
  keeps it;
- 20% of complete items disagreeing on one question (never so that a conditional
  question applies for one coder only); the others agree throughout;
- the decisions the product writes: `settle_item`'s unanimous decision (revision 1) for
  every question both coders answered alike, and an adjudicated decision by the
  adjudicator on every differing question of half the disagreeing items.

Decisions are bulk-created as settle_item would write them; on a sample of complete
items (agreeing, disagreeing, adjudicated) `settle_item` is then run inside a transaction
that is rolled back, and must add no decision. At the smallest size the product's own
`adjudication.disagreements` must find exactly the disagreements built. Then, when the
project has it (`manage.py help rebuild_disagreements` succeeds), `manage.py
rebuild_disagreements <slug>` gives the bulk-built data its stored disagreements; without
it a warning is printed and the run goes on. VACUUM ANALYZE runs before the rebuild and
after it, as autovacuum would have done by the time a study holds this much.

The servers, started once, on 127.0.0.1 only (a free port, never 8000): gunicorn
(`workbench.wsgi`, 2 sync workers) and a Celery worker (solo pool, on
REDIS_URL or redis://127.0.0.1:6379/13, a queue of its own, WORKBENCH_QUEUE=pages-bench-<pid>), with
DATABASE_URL at the scratch database, a fresh DJANGO_SECRET_KEY and WORKBENCH_VAR_DIR in
a temporary folder.

What is timed: client-side wall time of one request at a time (httpx, a logged-in
session per person: the login page's csrfmiddlewaretoken, then POST), --warmups requests
first (not counted), then --requests requests; median and p95 (nearest rank). As the
owner: home `/`, the study page, the queue page, the codings page and the codings API
(first page and a deep one), the agreement page (after the agreement job has run). As
the adjudicator: the review list (first page and a deep one), one review item page (an
open disagreement), the disagreements API (first page and a deep one). A deep page is
found by each list's own paging, read from its response: a page naming its last page (a
"last" link, or "Page 1 of N" with ?page=) or an API list with ?offset= and a count (its
end found by probing when the count is only a lower bound) is taken at its last full page; a list paged by "next" links alone (a keyset token) is
walked to its end (at most --follow links; an API list 500 rows a step) and the page
before the last is taken; a page without a "next" link has no deep page. Jobs, as the
owner, --job-runs times each: the agreement report (POST
/api/studies/S/agreement/recompute/) and a Parquet export of all shapes (POST
/api/studies/S/exports/), each timed from the POST until /api/jobs/N/ (polled every
0.1 s) says done; a job's p95 column is its slowest run, and its target is judged on it.
A measurement stops early after --budget seconds with at least 5 requests (a job after
--budget seconds of runs, with one at least); the n column says how many were timed.

The reference, measured in the same run on the same server: GET /login/ without a
session (middleware, a template, no study), and the authenticated GET /api/studies/S/
(session, DRF, the study and role lookups). Beside each size: the machine's load average
(os.getloadavg) when its measurements started and ended. Growth is the ratio of medians,
largest size over smallest.

Bounded: at most 200,000 items a size, 100 requests a measurement, 300 s a request,
600 s a job; then everything started is stopped, the worker's queue removed from Redis and
the database dropped. On any 5xx or failed job the run goes on, and the tracebacks of the
gunicorn and worker logs are printed at the end (the logs are then kept).
"""

# Run as a script, this folder comes first on sys.path, where benchmarks/queue.py would
# shadow the standard library's queue module: use the project root instead.
import sys  # noqa: I001
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path.pop(0)
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import html.parser  # noqa: E402
import ipaddress  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import secrets  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from types import SimpleNamespace  # noqa: E402
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit, urlunsplit  # noqa: E402

from benchmarks.machine import target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

HOST = "127.0.0.1"
FORBIDDEN_PORT = 8000
# The worker's broker: REDIS_URL when set (on this machine only), else database 13.
REDIS_URL = os.environ.get("REDIS_URL", "").strip() or "redis://127.0.0.1:6379/13"
DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/workbench"
MAX_ITEMS, MAX_REQUESTS, REQUEST_TIMEOUT, JOB_TIMEOUT = 1_000_000, 100, 300, 600
PASSWORD = "pages-bench-synthetic-password"
SEED = 20_260_613
CODERS = 3
OVERLAP = 2
COMPLETE, PARTIAL = 0.85, 0.075    # shares of items with 2 codings, with 1 (the rest: none)
DISAGREE = 0.20                    # share of complete items whose coders differ on a question
ADJUDICATED = 0.5                  # share of disagreeing items with adjudicated decisions
BATCH = 5_000
PAGE_TARGET_MS, GROWTH_TARGET = 300, 3.0
JOB_TARGETS = {"agreement job": 10, "export job": 30}  # seconds


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="items per study, comma-separated (default 1000,10000,100000)")
    parser.add_argument("--requests", type=int, default=20,
                        help="timed requests per measurement (default 20)")
    parser.add_argument("--warmups", type=int, default=2, help="untimed requests first (default 2)")
    parser.add_argument("--job-runs", type=int, default=3, help="runs of each job (default 3)")
    parser.add_argument("--follow", type=int, default=1000,
                        help="at most this many 'next' links followed to find a deep page, "
                             "when the page names no last page (default 1000)")
    parser.add_argument("--budget", type=float, default=150,
                        help="seconds a measurement may take before it stops with at least 5 "
                             "requests (default 150)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn sync workers (default 2)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch database (and the server logs)")
    parser.add_argument("--reuse", action="store_true",
                        help="measure the studies a --keep run left (a size without one is "
                             "built); the database is kept again")
    parser.add_argument("--build-only", action="store_true",
                        help="build (or with --reuse, complete) the studies and stop before "
                             "timing anything; implies --keep")
    args = parser.parse_args()
    if args.build_only:
        args.keep = True
    if args.reuse:
        args.keep = True
    try:
        args.sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--sizes must be whole numbers, not {args.sizes!r}")
    if not args.sizes or not all(100 <= s <= MAX_ITEMS for s in args.sizes):
        parser.error(f"--sizes must each be between 100 and {MAX_ITEMS:,}")
    bounds = [("--requests", args.requests, 1, MAX_REQUESTS), ("--warmups", args.warmups, 0, 10),
              ("--job-runs", args.job_runs, 1, 10), ("--follow", args.follow, 1, 5000),
              ("--budget", args.budget, 10, 1800), ("--workers", args.workers, 1, 8)]
    for name, value, low, high in bounds:
        if not low <= value <= high:
            parser.error(f"{name} must be between {low} and {high}, not {value}")
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE)
    database = urlsplit(os.environ["DATABASE_URL"])
    if database.scheme not in ("postgres", "postgresql", "pgsql"):
        parser.error("this benchmark needs DATABASE_URL=postgres://… (PostgreSQL)")
    if not is_loopback(database.hostname):
        parser.error(f"DATABASE_URL must point at this machine, not {database.hostname}")
    if not is_loopback(urlsplit(REDIS_URL).hostname):
        parser.error(f"REDIS_URL must point at this machine, not {REDIS_URL}")
    return args


def is_loopback(host):
    if not host:
        return True
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except socket.gaierror:
        return False
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback
                                   for a in addresses)


def free_port():
    while True:
        with socket.socket() as probe:
            probe.bind((HOST, 0))
            port = probe.getsockname()[1]
        if port != FORBIDDEN_PORT:
            return port


def say(*parts):
    print(*parts, flush=True)


def size_label(size):
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


def percentile(sorted_values, share):
    """Nearest-rank percentile of an already sorted list."""
    return sorted_values[max(0, math.ceil(share * len(sorted_values)) - 1)]


def load_average():
    return os.getloadavg()[0]


# --- the study ----------------------------------------------------------------

WORDS = ("policy gradient reward model rollout advantage baseline clipping ratio entropy "
         "token sequence group variance estimator objective training language reasoning "
         "verifier sample batch update stable efficient asynchronous mixture experts critic "
         "value trust region importance weight correction length bias penalty divergence "
         "benchmark mathematics code agent preference offline distillation teacher").split()


def invented_abstract(rng, n):
    sentences = []
    for _ in range(rng.randint(5, 9)):
        words = rng.choices(WORDS, k=rng.randint(10, 22))
        sentences.append(" ".join(words).capitalize() + ".")
    return f"Invented abstract {n}. " + " ".join(sentences)


class Answers:
    """Valid answers to the paper codebook: a random "truth" per item, and a variant that
    differs from it on exactly one question without changing which questions apply."""

    def __init__(self, version):
        self.version = version
        self.questions = list(version.questions.prefetch_related("options").order_by("position"))
        self.options = {q.key: [o.value for o in q.options.all()] for q in self.questions}
        self.label = next(q for q in self.questions if q.key == "label")

    def pick(self, question, rng):
        options = self.options[question.key]
        if question.kind == "single":
            if question.key == "label" and rng.random() < 0.3:
                return "rl_method"
            return rng.choice(options)
        if question.kind == "multiple":
            if "none" in options and rng.random() < 0.3:
                return ["none"]
            chosen = set(rng.sample([o for o in options if o != "none"], rng.choice((1, 1, 2))))
            return [o for o in options if o in chosen]  # codebook order, as stored
        if question.kind == "yes_no":
            return rng.choice(("yes", "no"))
        if question.kind == "number":
            if options and rng.random() < 0.2:
                return rng.choice(options)
            return rng.choice((0.5, 1.5, 3, 7, 8, 14, 32, 70, 235))
        return "An invented note."

    def truth(self, rng):
        from coding.codebooks.versions import is_shown

        values = {}
        for question in self.questions:
            if is_shown(question, values):
                values[question.key] = self.pick(question, rng)
        return values

    def differing(self, values, rng):
        """(the question changed, values with that one answer changed). Never a question
        another one's condition names: changing it could make that one apply for one coder
        only, a second disagreement (the preset's component decides whether
        changes_existing_loss is asked)."""
        parents = {q.show_if["question"] for q in self.questions if q.show_if}
        keys = [k for k in values if k not in parents]
        key = rng.choice(keys)
        question = next(q for q in self.questions if q.key == key)
        while True:
            other = self.pick(question, rng)
            if other != values[key]:
                return key, {**values, key: other}

    def self_test(self, rng, samples=100):
        """The generated answers pass the project's own check unchanged."""
        from coding.codebooks.versions import check_values

        for _ in range(samples):
            truth = self.truth(rng)
            for values in (truth, self.differing(truth, rng)[1]):
                cleaned = check_values(self.version, values, complete=True)
                if cleaned != values:
                    raise RuntimeError(f"generated answers {values} were cleaned to {cleaned}")


@dataclass
class Built:
    study: object
    owner: str
    adjudicator: str
    items: int
    complete: int = 0
    partial: int = 0
    codings: int = 0
    disagreeing: int = 0
    adjudicated: int = 0
    decisions: int = 0
    samples: dict = field(default_factory=dict)  # kind -> [item ids] for the settle check


def build_study(size, password, rng):
    """One study of `size` items as the module docstring says. Returns Built."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from coding.adjudication import decisions as adjudication
    from coding.codebooks.versions import create_codebook
    from coding.labeling import queue
    from coding.models import Assignment, Coding, Decision, Item, Membership, Role, Study
    from coding.studies import presets
    from ingest.models import Document, Snapshot, content_sha256

    User = get_user_model()
    slug = f"pages-{size_label(size)}"
    owner = User.objects.create(username=f"{slug}-owner", password=password, first_name="Owen")
    adjudicator = User.objects.create(username=f"{slug}-adjudicator", password=password,
                                      first_name="Ada")
    coders = User.objects.bulk_create(
        User(username=f"{slug}-coder{n}", password=password, first_name=f"Coder {n}")
        for n in range(1, CODERS + 1))
    study = Study.objects.create(name=f"Pages benchmark, {size:,} items (synthetic)", slug=slug,
                                 overlap=OVERLAP, blinded_fields=presets.BLINDED_FIELDS,
                                 created_by=owner)
    Membership.objects.bulk_create(
        [Membership(study=study, user=owner, role=Role.OWNER),
         Membership(study=study, user=adjudicator, role=Role.ADJUDICATOR)]
        + [Membership(study=study, user=c, role=Role.CODER) for c in coders])
    codebook = create_codebook(study, presets.PAPER_CODEBOOK, owner)
    version = codebook.current_version()
    answers = Answers(version)
    answers.self_test(random.Random(SEED))
    built = Built(study, owner.username, adjudicator.username, size,
                  samples={"agreeing": [], "disagreeing": [], "adjudicated": []})
    pairs = [(coders[0], coders[1]), (coders[1], coders[2]), (coders[0], coders[2])]
    published = datetime(2025, 5, 1, tzinfo=UTC)
    now = timezone.now()

    for start in range(0, size, BATCH):
        numbers = range(start, min(size, start + BATCH))
        documents = [
            Document(kind=Document.Kind.PAPER, source=slug, key=f"2599.{n:06d}",
                     title=f"Invented paper number {n} on {' '.join(rng.sample(WORDS, 4))}",
                     url=f"https://arxiv.org/abs/2599.{n:06d}", published=published,
                     metadata={"abstract": invented_abstract(rng, n),
                               "authors": ["Ann Example", "Bo Sample", "Cy Placeholder"],
                               "affiliations": ["Institute of Invented Studies"],
                               "categories": ["cs.LG"], "included_in": []})
            for n in numbers]
        for document, pk in zip(documents, copy_rows(Document, [
                {f.attname: getattr(d, f.attname) for f in Document._meta.concrete_fields
                 if not f.primary_key} for d in documents])):
            document.pk = pk
        contents = [d.content() for d in documents]
        snapshots = copy_rows(Snapshot, [
            {"document_id": d.pk, "number": 1, "content": c, "sha256": content_sha256(c)}
            for d, c in zip(documents, contents)])
        # What each item gets: (coders, [values per coder], the differing question or None).
        plans = []
        for n in numbers:
            draw, pair, truth = rng.random(), pairs[n % len(pairs)], answers.truth(rng)
            if draw < COMPLETE and rng.random() < DISAGREE:
                differ, other = answers.differing(truth, rng)
                plans.append((pair, [truth, other], differ))
            elif draw < COMPLETE:
                plans.append((pair, [truth, truth], None))
            elif draw < COMPLETE + PARTIAL:
                plans.append((pair[:1], [truth], None))
            else:
                plans.append(((), [], None))
        items = copy_rows(Item, [
            {"study_id": study.pk, "document_id": d.pk, "snapshot_id": snapshot,
             "codebook_id": codebook.pk, "taken": len(who), **queue.new_item_fields(study, d)}
            for d, snapshot, (who, _, _) in zip(documents, snapshots, plans)])

        held = [(item, coder, values, content["abstract"])
                for item, content, (who, answered, _) in zip(items, contents, plans)
                for coder, values in zip(who, answered)]
        seconds = [rng.randint(30, 400) for _ in held]
        # Fields the models gained with issue 13 (the coding's study, the assignment's first
        # seconds) are written when the tree has them, so the script measures older trees too.
        first = ({"first_seconds_spent": s} if has_field(Assignment, "first_seconds_spent")
                 else {} for s in seconds)
        assignments = copy_rows(Assignment, [
            {"item_id": item, "study_id": study.pk, "coder_id": coder.pk,
             "status": Assignment.Status.SUBMITTED, "opened_at": now, "finished_at": now,
             **extra}
            for (item, coder, _, _), extra in zip(held, first)])
        of_study = {"study_id": study.pk} if has_field(Coding, "study") else {}
        copy_rows(Coding, [
            {"assignment_id": a, "revision": 1, "codebook_version_id": version.pk,
             "phase": Coding.Phase.INDEPENDENT, "values": values,
             "evidence": evidence(abstract, rng), "seconds_spent": spent, **of_study}
            for a, (_, _, values, abstract), spent in zip(assignments, held, seconds)])
        built.codings += len(assignments)

        decisions = []
        for item, (who, answered, differ) in zip(items, plans):
            if len(who) < OVERLAP:
                built.partial += len(who) == 1
                continue
            built.complete += 1
            adjudicate = False
            if differ:
                built.disagreeing += 1
                adjudicate = built.disagreeing % 2 == 0  # every other one: half
                built.adjudicated += adjudicate
            kind = "adjudicated" if adjudicate else "disagreeing" if differ else "agreeing"
            if len(built.samples[kind]) < 10 and rng.random() < 0.2:
                built.samples[kind].append(item)
            codings = [SimpleNamespace(values=values) for values in answered]
            for question in answers.questions:
                given = [adjudication.answer(c, question) for c in codings]
                if given[0] == given[1]:
                    if given[0] == adjudication.NOT_APPLICABLE:
                        continue  # settle_item writes nothing for it
                    value = None if given[0] == adjudication.MISSING else given[0]
                    decisions.append({"item_id": item, "question_key": question.key,
                                      "revision": 1, "value": value,
                                      "method": Decision.Method.UNANIMOUS})
                elif adjudicate:
                    decisions.append({"item_id": item, "question_key": question.key,
                                      "revision": 1, "value": rng.choice(given),
                                      "method": Decision.Method.ADJUDICATED,
                                      "decided_by_id": adjudicator.pk,
                                      "rationale": "Chosen for the benchmark."})
        copy_rows(Decision, decisions)
        built.decisions += len(decisions)
    return built


def has_field(model, name):
    return any(f.name == name for f in model._meta.concrete_fields)


def copy_rows(model, rows):
    """Insert rows ({attname: value}) of a model with one COPY, stored as bulk_create would
    store them: the fields' defaults, now for auto_now(_add), JSON as JSON, ids from the
    table's own sequence (5 to 10 times faster than bulk_create). Returns the new ids."""
    from django.db import connection, models
    from django.utils import timezone

    if not rows:
        return []
    meta = model._meta
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    unknown = set(rows[0]) - {f.attname for f in fields}
    if unknown:
        raise ValueError(f"{meta.label} has no fields {sorted(unknown)}")
    now, required = timezone.now(), object()
    nullable = {f.attname for f in fields if f.null}
    # What saving an instance would store for a field left out: now for auto_now(_add), its
    # default ("" for text without one), NULL when nullable; otherwise it must be given.
    stamped = {f.attname for f in fields
               if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)}
    defaults = {f.attname: now if f.attname in stamped else f.get_default() for f in fields}
    defaults = {name: required if value is None and name not in nullable else value
                for name, value in defaults.items()}
    encoders = {f.attname: f.encoder for f in fields if isinstance(f, models.JSONField)}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                       [meta.db_table, meta.pk.column, len(rows)])
        ids = [row[0] for row in cursor.fetchall()]
    columns = ", ".join(quote(f.column) for f in [meta.pk, *fields])
    with connection.cursor() as cursor, \
            cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy:
        for pk, row in zip(ids, rows):
            values = [pk]
            for name, default in defaults.items():
                value = row.get(name)
                if value is None and name not in nullable:
                    value = default  # as an unsaved instance's None would become on save
                if value is required:
                    raise ValueError(f"{meta.label}.{name} is required")
                if name in encoders and value is not None:
                    value = json.dumps(value, cls=encoders[name])
                values.append(value)
            copy.write_row(values)
    return ids


def evidence(abstract, rng):
    """One quote of five consecutive words of the abstract, located as submit locates it."""
    words = abstract.split()
    start = rng.randrange(max(1, len(words) - 5))
    quote = " ".join(words[start:start + 5])
    offset = abstract.find(quote)
    return [{"question": "label", "field": "abstract", "quote": quote,
             "start": offset, "end": offset + len(quote)}]


class Rollback(Exception):
    pass


def check_settled(built):
    """settle_item on the sample items adds no decision (run in a transaction rolled back)."""
    from django.db import transaction

    from coding.adjudication.decisions import settle_item
    from coding.models import Decision, Item

    ids = [pk for kind in built.samples.values() for pk in kind]
    added = {}
    try:
        with transaction.atomic():
            before = Decision.objects.filter(item_id__in=ids).count()
            for item in Item.objects.filter(pk__in=ids):
                settle_item(item)
            after = list(Decision.objects.filter(item_id__in=ids).order_by("pk")
                         .values_list("item_id", "question_key", "method", "value"))
            added = {"count": len(after) - before, "rows": after[before:][:5]}
            raise Rollback
    except Rollback:
        pass
    counts = ", ".join(f"{len(v)} {k}" for k, v in built.samples.items())
    if added["count"]:
        raise RuntimeError(f"settle_item would add {added['count']} decisions to the bulk-built "
                           f"data (sample: {counts}); e.g. {added['rows']}")
    say(f"  settle_item on {len(ids)} sample items ({counts}) would add no decision")


def check_disagreements(built):
    """The product's own disagreement list finds exactly what was built."""
    from coding.adjudication import decisions as adjudication

    found = adjudication.disagreements(built.study, status="all")
    open_rows = [row for row in found if row.decision is None]
    expected_open = built.disagreeing - built.adjudicated
    if len(found) != built.disagreeing or len(open_rows) != expected_open:
        raise RuntimeError(f"adjudication.disagreements finds {len(found)} ({len(open_rows)} open) "
                           f"where {built.disagreeing} ({expected_open} open) were built")
    say(f"  adjudication.disagreements finds the {len(found):,} built ({len(open_rows):,} open)")


def vacuum_analyze():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


# --- the servers --------------------------------------------------------------

class Servers:
    """gunicorn and a Celery worker, started and stopped by us, on 127.0.0.1 only."""

    def __init__(self, args, logs):
        self.args, self.logs = args, logs
        self.port = free_port()
        self.queue = f"pages-bench-{os.getpid()}"
        self.worker_name = f"{self.queue}@{socket.gethostname()}"
        self.gunicorn = self.worker = None
        self.gunicorn_log = logs / "gunicorn.log"
        self.worker_log = logs / "worker.log"
        self.env = dict(os.environ, DJANGO_ALLOWED_HOSTS=HOST, DJANGO_SECURE_COOKIES="0",
                        DJANGO_HTTPS="0", DJANGO_DEBUG="0", LOG_LEVEL="WARNING",
                        REDIS_URL=REDIS_URL, WORKBENCH_QUEUE=self.queue, PYTHONUNBUFFERED="1")

    @property
    def base_url(self):
        return f"http://{HOST}:{self.port}"

    def _start(self, command, log):
        # A session of its own: we stop exactly the group we started.
        return subprocess.Popen(command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                                start_new_session=True)

    def manage(self, *arguments, timeout=1800):
        return subprocess.run([sys.executable, str(ROOT / "manage.py"), *arguments], cwd=ROOT,
                              env=self.env, capture_output=True, text=True, timeout=timeout)

    def start_worker(self):
        from workbench.queues import worker_argument  # every job kind's queue, for -Q

        self.worker = self._start(
            [sys.executable, "-m", "celery", "-A", "workbench", "worker", "--pool=solo",
             "--concurrency=1", "--loglevel=WARNING", "-Q", worker_argument(ns=self.queue),
             "--hostname", self.worker_name, "--without-gossip", "--without-mingle"],
            self.worker_log)
        from workbench.celery import app

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.worker.poll() is not None:
                raise RuntimeError(f"the Celery worker exited with {self.worker.returncode}")
            if app.control.ping(destination=[self.worker_name], timeout=0.5):
                return
            time.sleep(0.5)
        raise RuntimeError("the Celery worker did not answer a ping within 60 s")

    def start_gunicorn(self):
        import httpx

        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.gunicorn = self._start(
            [str(gunicorn), "workbench.wsgi:application", "--bind", f"{HOST}:{self.port}",
             "--workers", str(self.args.workers), "--worker-class", "sync",
             "--timeout", str(REQUEST_TIMEOUT), "--graceful-timeout", "20",
             "--error-logfile", "-"], self.gunicorn_log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.gunicorn.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.gunicorn.returncode}")
            try:
                if httpx.get(f"{self.base_url}/login/", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError("gunicorn did not answer GET /login/ within 60 s")

    @staticmethod
    def _stop(process, name, timeout):
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)  # the group we started, nothing else
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say(f"{name} did not stop within {timeout} s; killing it")
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        except ProcessLookupError:
            pass

    def stop(self):
        self._stop(self.gunicorn, "gunicorn", 30)
        self._stop(self.worker, "the Celery worker", 60)
        if self.worker is not None:
            try:
                import redis

                client = redis.Redis.from_url(REDIS_URL)
                keys = [self.queue, *client.scan_iter(match=f"{self.queue}\x06*"),
                        *client.scan_iter(match=f"_kombu.binding*.{self.queue}")]
                client.delete(*keys)
                client.close()
            except Exception as error:  # cleanup must not hide the run's own outcome
                say(f"could not remove the queue {self.queue} from Redis: {error}")


def tracebacks(log, limit=4, length=60):
    """The first few errors with their tracebacks (and worker timeouts) in a server log."""
    if not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    starts = [n for n, line in enumerate(lines)
              if (line.startswith(("Internal Server Error", "Traceback"))
                  or "WORKER TIMEOUT" in line or "ERROR" in line)
              and not (n and lines[n - 1].startswith("Internal Server Error"))]
    return ["\n".join(lines[n:n + length]) for n in starts[:limit]]


# --- the clients ----------------------------------------------------------------

class Links(html.parser.HTMLParser):
    """Every <a>/<link> with its href, rel and text."""

    def __init__(self):
        super().__init__()
        self.links, self._open = [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("a", "link") and attrs.get("href"):
            link = {"href": attrs["href"], "rel": (attrs.get("rel") or "").lower(), "text": ""}
            self.links.append(link)
            if tag == "a":
                self._open = link

    def handle_endtag(self, tag):
        if tag == "a":
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._open["text"] += data


NEXT_TEXT = re.compile(r"\b(next|older|more)\b|→|»|›", re.I)
BACK_TEXT = re.compile(r"\b(prev|previous|newer|first)\b|←|«|‹", re.I)


def link_to(page_html, url, which):
    """The absolute URL of the page's "next" or "last" link, or None."""
    parser = Links()
    parser.feed(page_html)
    here = urlsplit(url).path
    for link in parser.links:
        # Paging links lead to the same page with other parameters; not elsewhere.
        if urlsplit(urljoin(url, link["href"])).path != here:
            continue
        text = " ".join(link["text"].split())
        if which in link["rel"].split():
            return urljoin(url, link["href"])
        if which == "next" and NEXT_TEXT.search(text) and not BACK_TEXT.search(text):
            return urljoin(url, link["href"])
        if which == "last" and re.fullmatch(r"(last|last page|»»|⇥)( ?[→»])?", text, re.I):
            return urljoin(url, link["href"])
    return None


def with_query(url, **changes):
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    query.update({k: str(v) for k, v in changes.items()})
    return urlunsplit(parts._replace(query=urlencode(query)))


class Person:
    """A logged-in (or anonymous) session on the server."""

    def __init__(self, base_url, username=None):
        import httpx

        self.username = username
        self.client = httpx.Client(base_url=base_url, timeout=REQUEST_TIMEOUT,
                                   follow_redirects=False)
        if username:
            self.log_in()

    def log_in(self):
        page = self.client.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        if page.status_code != 200 or not token:
            raise RuntimeError(f"GET /login/ answered {page.status_code} without a CSRF token")
        response = self.client.post("/login/", data={
            "username": self.username, "password": PASSWORD,
            "csrfmiddlewaretoken": token.group(1), "next": ""})
        if response.status_code != 302 or "sessionid" not in self.client.cookies:
            raise RuntimeError(f"{self.username} could not log in ({response.status_code})")

    def request(self, method, url, **kwargs):
        if method != "GET":
            token = self.client.cookies.get("csrftoken", "")
            kwargs.setdefault("headers", {})["X-CSRFToken"] = token
        return self.client.request(method, url, **kwargs)

    def close(self):
        self.client.close()


@dataclass
class Result:
    times: list = field(default_factory=list)   # seconds, timed requests or job runs
    note: str = ""
    failed: str = ""
    unit: str = "ms"


class Failures:
    def __init__(self):
        self.lines = []

    def add(self, what, detail):
        self.lines.append(f"{what}: {detail}")
        say(f"  FAILED {what}: {detail}")


def time_requests(person, url, args, failures, name, expect=(200,)):
    """--warmups untimed GETs, then up to --requests timed ones."""
    result = Result()
    try:
        for _ in range(args.warmups):
            response = person.request("GET", url)
            if response.status_code not in expect:
                result.failed = f"HTTP {response.status_code}"
                failures.add(name, f"GET {url} answered {response.status_code}: "
                             f"{response.text[:200]!r}")
                return result
        spent = 0.0
        while len(result.times) < args.requests:
            start = time.perf_counter()
            response = person.request("GET", url)
            seconds = time.perf_counter() - start
            if response.status_code not in expect:
                result.failed = f"HTTP {response.status_code}"
                failures.add(name, f"GET {url} answered {response.status_code}")
                return result
            result.times.append(seconds)
            spent += seconds
            if spent > args.budget and len(result.times) >= 5:
                result.note = f"stopped after {args.budget:g} s"
                break
    except Exception as error:  # a timeout, a reset: the row says so and the run goes on
        result.failed = type(error).__name__
        failures.add(name, f"GET {url}: {error!r}")
    return result


def time_job(person, start_url, body, args, failures, name):
    """--job-runs runs: POST to start, poll /api/jobs/N/ until done; seconds each."""
    result = Result(unit="s")
    server = []
    for _ in range(args.job_runs):
        if sum(result.times) > args.budget:
            break  # a slow job once is enough: n says how many runs
        try:
            start = time.perf_counter()
            response = person.request("POST", start_url, json=body)
            if response.status_code != 202:
                result.failed = f"HTTP {response.status_code}"
                failures.add(name, f"POST {start_url} answered {response.status_code}: "
                             f"{response.text[:300]!r}")
                return result
            job = response.json()
            while job["status"] in ("queued", "running"):
                if time.perf_counter() - start > JOB_TIMEOUT:
                    person.request("POST", f"/api/jobs/{job['id']}/cancel/")
                    result.failed = f"over {JOB_TIMEOUT} s"
                    failures.add(name, f"job {job['id']} not done after {JOB_TIMEOUT} s; cancelled")
                    return result
                time.sleep(0.1)
                job = person.request("GET", f"/api/jobs/{job['id']}/").json()
            seconds = time.perf_counter() - start
            if job["status"] != "done":
                result.failed = job["status"]
                failures.add(name, f"job {job['id']} {job['status']}: {job.get('error')!r}; "
                             f"events {job.get('events', [])[-3:]!r}")
                return result
            result.times.append(seconds)
            started, finished = (datetime.fromisoformat(job[k])
                                 for k in ("started_at", "finished_at"))
            server.append((finished - started).total_seconds())
        except Exception as error:
            result.failed = type(error).__name__
            failures.add(name, f"{start_url}: {error!r}")
            return result
    result.note = ("in the worker " + ", ".join(f"{s:.2f}" for s in server) + " s; "
                   + describe_job_result(job))
    return result


def describe_job_result(job):
    result = job.get("result") or {}
    keys = [k for k in ("rows", "files", "bytes", "size", "n_codings") if k in result]
    return ", ".join(f"{k} {result[k]}" for k in keys) or f"result keys {sorted(result)[:6]}"


def deep_html_page(person, first_url, args):
    """(URL of a deep page, how it was found) by the page's own paging, or (None, why).

    A "last" link, or "Page 1 of N" with ?page=: the last full page. Otherwise the "next"
    links are followed to the end (at most --follow of them, for at most --budget seconds)
    and the page before the last is taken: the last page may hold only a few rows."""
    response = person.request("GET", first_url)
    last = link_to(response.text, first_url, "last")
    if last:
        return last, "the page's 'last' link"
    nxt = link_to(response.text, first_url, "next")
    if not nxt:
        return None, "the page offers no next page (not paged, or everything on one page)"
    page_of = re.search(r"Page\s+\d+\s+of\s+([\d,]+)", response.text)
    if page_of and "page" in parse_qs(urlsplit(nxt).query):
        pages = int(page_of.group(1).replace(",", ""))
        deep = pages - 1 if pages > 2 else pages
        return with_query(nxt, page=deep), f"?page={deep:,} of the {pages:,} pages it names"
    urls, deadline = [first_url], time.perf_counter() + args.budget
    while nxt and len(urls) <= args.follow and time.perf_counter() < deadline:
        urls.append(nxt)
        nxt = link_to(person.request("GET", nxt).text, nxt, "next")
    if nxt:
        return urls[-1], f"its 'next' link followed {len(urls) - 1} times (stopped there)"
    if len(urls) == 2:
        return urls[-1], "its 'next' link followed once, to the last page (page 2)"
    return urls[-2], (f"its 'next' link followed {len(urls) - 1} times to the last page; the "
                      f"one before it, page {len(urls) - 1}")


def deep_api_page(person, first_url, args):
    """(URL of a deep page of an API list, how), or (None, why).

    ?limit=&offset= with a count: the last full page. A cursor (`next` carrying a token):
    walked to the end 500 rows at a time, then the page of 50 starting 500 rows or fewer
    before the end."""
    body = person.request("GET", first_url).json()
    nxt = body.get("next") if isinstance(body, dict) else None
    if not nxt:
        return None, "the list has one page only"
    query = parse_qs(urlsplit(nxt).query)
    limit = int(query.get("limit", ["50"])[0])
    if "count" in body and "offset" in query:
        count, how = body["count"], "rows"
        if body.get("count_exact") is False:  # a lower bound: find the end by probing
            count, probes = list_length(person, nxt, count)
            how = f"rows (the count said at least {body['count']:,}; the end found in {probes} " \
                  "probes of one row)"
        offset = max(0, (count // limit - 1) * limit)
        return with_query(nxt, limit=limit, offset=offset), \
            f"offset {offset:,} of {count:,} {how}, the last full page"
    starts, deadline = [], time.perf_counter() + args.budget
    while nxt and len(starts) < args.follow and time.perf_counter() < deadline:
        starts.append(nxt)
        nxt = person.request("GET", with_query(nxt, limit=500)).json().get("next")
    deep = with_query(starts[-2] if len(starts) > 1 and not nxt else starts[-1], limit=limit)
    end = "to the end" if not nxt else f"{len(starts)} times (stopped there)"
    return deep, (f"its 'next' walked {end}, 500 rows a step; a page of {limit} from the "
                  f"{'last but one' if len(starts) > 1 and not nxt else 'last'} step's token")


def list_length(person, url, known):
    """The length of an offset-paged API list known to hold at least `known` rows: offsets
    doubled until a page is empty, then halved between (one row a probe)."""
    def has_row(offset):
        return bool(person.request("GET", with_query(url, limit=1, offset=offset))
                    .json().get("results"))

    low, high, probes = known, None, 0  # a row exists at low - 1; none at high - 1
    while high is None and probes < 40:
        probes += 1
        if has_row(2 * low - 1):
            low *= 2
        else:
            high = 2 * low
    while high is not None and high - low > 1 and probes < 80:
        probes += 1
        middle = (low + high) // 2
        low, high = (middle, high) if has_row(middle - 1) else (low, middle)
    return low, probes


def measure(servers, built, args, failures):
    """{measurement: Result} for one size, in the order of the table."""
    slug = built.study.slug
    anonymous = Person(servers.base_url)
    owner = Person(servers.base_url, built.owner)
    adjudicator = Person(servers.base_url, built.adjudicator)
    results, notes = {}, []

    def page(name, person, url):
        say(f"  {name}: GET {url}")
        results[name] = time_requests(person, url, args, failures, name)

    def paged(name, person, url, deep_page, unpaged=None):
        """A list's first page and a deep one (found by `deep_page`, the list's own
        paging); `unpaged`: the result noted when it has no deep page."""
        page(name, person, url)
        deep, how = deep_page(person, url, args)
        notes.append(f"{name}, deep: {how}")
        if deep:
            page(f"{name}, deep", person, deep)
        elif unpaged:
            results[f"{name}, deep"] = Result(note=unpaged)

    try:
        page("reference: GET /login/ (anonymous)", anonymous, "/login/")
        page("reference: GET /api/studies/S/", owner, f"/api/studies/{slug}/")
        page("home /", owner, "/")
        page("study page", owner, f"/studies/{slug}/")
        page("queue page", owner, f"/studies/{slug}/queue/")
        paged("codings page", owner, f"/studies/{slug}/codings/", deep_html_page)
        paged("codings API", owner, f"/api/studies/{slug}/codings/", deep_api_page)
        paged("items page", owner, f"/studies/{slug}/items/", deep_html_page)
        page("items page, in disagreement", owner, f"/studies/{slug}/items/?state=disagreement")
        paged("review list", adjudicator, f"/studies/{slug}/review/", deep_html_page,
              unpaged="not paged")
        api = f"/api/studies/{slug}/disagreements/"
        first = adjudicator.request("GET", api)
        rows = first.json().get("results", []) if first.status_code == 200 else []
        if rows:
            page("review item page", adjudicator, f"/studies/{slug}/review/{rows[0]['item']}/")
            page("item history page", owner, f"/studies/{slug}/items/{rows[0]['item']}/")
        else:
            failures.add("review item page", f"no open disagreement from {api} "
                         f"({first.status_code})")
        paged("disagreements API", adjudicator, api, deep_api_page)

        from coding.export.bundle import SHAPES

        say(f"  agreement job: POST /api/studies/{slug}/agreement/recompute/ x {args.job_runs}")
        results["agreement job"] = time_job(owner, f"/api/studies/{slug}/agreement/recompute/",
                                            None, args, failures, "agreement job")
        say(f"  export job: POST /api/studies/{slug}/exports/ (parquet, {', '.join(SHAPES)}) "
            f"x {args.job_runs}")
        results["export job"] = time_job(owner, f"/api/studies/{slug}/exports/",
                                         {"shapes": list(SHAPES), "format": "parquet"},
                                         args, failures, "export job")
        # After the agreement job, so the page shows a computed report.
        page("agreement page", owner, f"/studies/{slug}/agreement/")
    finally:
        for person in (anonymous, owner, adjudicator):
            person.close()
    return results, notes


# --- report -------------------------------------------------------------------

ORDER = [
    ("reference: GET /login/ (anonymous)", "reference"),
    ("reference: GET /api/studies/S/", "reference"),
    ("home /", "page"),
    ("study page", "page"),
    ("queue page", "page"),
    ("review list", "paged"),
    ("review list, deep", "paged"),
    ("review item page", "page"),
    ("items page", "paged"),
    ("items page, deep", "paged"),
    ("items page, in disagreement", "page"),
    ("item history page", "page"),
    ("agreement page", "page"),
    ("codings page", "paged"),
    ("codings page, deep", "paged"),
    ("codings API", "paged"),
    ("codings API, deep", "paged"),
    ("disagreements API", "paged"),
    ("disagreements API, deep", "paged"),
    ("agreement job", "job"),
    ("export job", "job"),
]


def figures(result):
    """(median, p95) in the result's unit, or None."""
    if not result or not result.times:
        return None
    values = sorted(t * 1000 if result.unit == "ms" else t for t in result.times)
    if result.unit == "s":  # a few runs: the slowest, not a percentile
        return statistics.median(values), values[-1]
    return statistics.median(values), percentile(values, 0.95)


def cell(value, unit):
    if value is None:
        return f"{'—':>8}"
    return f"{value:8.1f}" if unit == "ms" else f"{value:7.2f}s"


def report(args, sizes, runs, loads):
    small, large = sizes[0], sizes[-1]
    at = f" at {size_label(large)}" if large != 100_000 else ""
    growth_name = f"{size_label(small)}→{size_label(large)}"
    width = 34
    say(f"\nPages and lists: client-side time of one request at a time on gunicorn "
        f"({args.workers} sync workers), PostgreSQL, {os.cpu_count()} cores; ms unless marked s; "
        f"median and p95 of n requests after {args.warmups} warm-ups (jobs: median and slowest "
        f"of n runs, POST to done); growth: median at {size_label(large)} / median at "
        f"{size_label(small)}; load: 1-minute load average when the size's measurements "
        f"started → ended")
    block = 24  # median, p95 and n of one size
    say(f"{'':{width}}" + "".join(f"{size_label(s) + ' items':>{block}}" for s in sizes))
    say(f"{'load average (start → end)':{width}}" + "".join(
        f"{f'{loads[s][0]:.2f} → {loads[s][1]:.2f}':>{block}}" for s in sizes))
    say(f"{'measurement':{width}}" + f"{'median':>10}{'p95':>9}{'n':>5}" * len(sizes)
        + f"{'growth':>9}  {'p95 < 300 ms' + at:<20}{'growth < 3x':<12}")
    verdicts = []
    for name, kind in ORDER:
        if not any(name in runs[s] for s in sizes):
            continue
        row, shown = f"{name:{width}}", {}
        unit = next((runs[s][name].unit for s in sizes if name in runs[s]), "ms")
        for size in sizes:
            result = runs[size].get(name)
            numbers = figures(result)
            shown[size] = numbers
            if result and result.failed:
                row += f"{'FAILED ' + result.failed:>19}{'':5}"
            elif numbers is None:
                row += f"{'—':>10}{'—':>9}{'':5}"
            else:
                row += (f"{cell(numbers[0], unit):>10}{cell(numbers[1], unit):>9}"
                        f"{len(result.times):>5}")
        growth = (shown[large][0] / shown[small][0]
                  if shown.get(large) and shown.get(small) and large != small else None)
        row += f"{(f'{growth:.1f}x' if growth else '—'):>9}  "
        largest = shown.get(large)
        failed_large = runs[large].get(name) and runs[large][name].failed
        unmeasured = runs[large].get(name) and runs[large][name].note and not largest
        if unmeasured and not failed_large:  # e.g. a list too short to have a deep page
            row += f"{runs[large][name].note:<20}"
            verdicts.append((True, f"{name}: not measured{at}, {runs[large][name].note}"))
        elif kind in ("page", "paged"):
            ok = bool(largest) and largest[1] < PAGE_TARGET_MS and not failed_large
            row += f"{'pass' if ok else 'FAIL':<20}"
            verdicts.append((ok, f"{name}: p95 {largest[1]:.0f} ms{at}" if largest
                             else f"{name}: no figure{at}"))
            if kind == "paged" and growth is not None:
                good = growth < GROWTH_TARGET
                row += f"{'pass' if good else 'FAIL':<12}"
                verdicts.append((good, f"{name}: grows {growth:.2f}x {growth_name}"))
        elif kind == "job":
            limit = JOB_TARGETS[name]
            ok = bool(largest) and largest[1] < limit and not failed_large
            row += f"{f'< {limit} s: ' + ('pass' if ok else 'FAIL'):<20}"
            verdicts.append((ok, f"{name}: slowest run {largest[1]:.1f} s{at} (target < {limit} s)"
                             if largest else f"{name}: no figure{at}"))
        say(row.rstrip())
    return verdicts


# --- main -----------------------------------------------------------------------

def interrupted(signum, frame):
    raise KeyboardInterrupt


def main(args):
    signal.signal(signal.SIGTERM, interrupted)
    temp = Path(tempfile.mkdtemp(prefix="pages-bench-"))
    logs = temp / "logs"
    logs.mkdir()
    os.environ["WORKBENCH_VAR_DIR"] = str(temp / "var")
    os.environ["REDIS_URL"] = REDIS_URL
    if not os.environ.get("DJANGO_SECRET_KEY", "").strip():
        os.environ["DJANGO_SECRET_KEY"] = secrets.token_urlsafe(40)
    failures, servers, scratch, status, keep_logs = Failures(), None, None, 1, True
    try:
        scratch = use_scratch_database("pages", reuse=args.reuse)
        import django

        django.setup()
        import logging

        logging.getLogger("httpx").setLevel(logging.WARNING)
        from django.contrib.auth.hashers import make_password
        from django.core.management import call_command
        from django.db import connection

        started = time.perf_counter()
        call_command("migrate", verbosity=0)
        with connection.cursor() as cursor:
            cursor.execute("SELECT version()")
            version = cursor.fetchone()[0].split(" on ")[0]
        say(f"database: {version} ({connection.settings_dict['NAME']}), migrated in "
            f"{time.perf_counter() - started:.1f} s; python {sys.version.split()[0]}, Django "
            f"{django.get_version()}, {os.cpu_count()} cpus, load average "
            + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
        say("git: " + describe_tree())
        servers = Servers(args, logs)
        servers.start_worker()
        servers.start_gunicorn()
        say(f"server: gunicorn, {args.workers} sync workers on {servers.base_url}; Celery worker "
            f"(solo pool) on {REDIS_URL}, queue {servers.queue}")
        password = make_password(PASSWORD)  # one PBKDF2 hash for everyone
        rng = random.Random(SEED)
        runs, loads, all_notes = {}, {}, {}
        for size in args.sizes:
            say(f"\n== {size:,} items ==")
            built = kept_study(size) if args.reuse else None
            if built is None:
                start = time.perf_counter()
                built = build_study(size, password, rng)
                say(f"  built in {time.perf_counter() - start:.1f} s: {built.complete:,} "
                    f"complete items ({built.disagreeing:,} disagreeing, {built.adjudicated:,} "
                    f"of them adjudicated), {built.partial:,} with one coding, "
                    f"{built.codings:,} codings, {built.decisions:,} decisions")
                # The tables' statistics first, as autovacuum would have gathered them by the
                # time a study holds this much: without them the rebuild's per-batch reads
                # are planned blind (100k: 592 s, against 99 s with them).
                vacuum_analyze()
                check_settled(built)
                rebuild(servers, built.study.slug)
                if size == args.sizes[0]:
                    check_disagreements(built)
                start = time.perf_counter()
                vacuum_analyze()
                say(f"  VACUUM ANALYZE in {time.perf_counter() - start:.1f} s")
            if args.build_only:
                continue
            loads[size] = [load_average(), None]
            runs[size], all_notes[size] = measure(servers, built, args, failures)
            loads[size][1] = load_average()
        if args.build_only:
            say("\nbuilt; nothing timed (--build-only)")
            verdicts = []
        else:
            verdicts = summarise(args, runs, loads, all_notes, failures, servers)
        keep_logs = bool(failures.lines) or args.keep
        # Exit 1 on a failure (an error, a wrong status, a job that failed), never on a
        # missed target alone: the table says which targets were met.
        status = 1 if failures.lines else 0
        missed = sum(1 for ok, _ in verdicts if not ok)
        say(f"targets: {len(verdicts) - missed} met, {missed} missed")
    except KeyboardInterrupt:
        say("\ninterrupted; cleaning up")
        keep_logs, status = False, 130
    finally:
        if servers is not None:
            servers.stop()
        if scratch is not None:
            if args.keep:
                say(f"kept the database {scratch[2]}")
            else:
                try:
                    drop_scratch_database(scratch)
                except Exception as error:
                    say(f"could not drop the scratch database {scratch[2]}: {error}")
        if keep_logs and status != 130:
            say(f"server logs kept in {logs}")
            shutil.rmtree(temp / "var", ignore_errors=True)
        else:
            shutil.rmtree(temp, ignore_errors=True)
    return status


def kept_study(size):
    """The study of `size` items a --keep run left, as Built (its counts not recounted), or
    None. The people are found by the names build_study gives them."""
    from coding.models import Item, Study

    slug = f"pages-{size_label(size)}"
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        return None
    items = Item.objects.filter(study=study).count()
    if items != size:
        raise RuntimeError(f"the kept study {slug} has {items:,} items, not {size:,}: run "
                           f"without --reuse to build it again")
    say(f"  reused the kept study {slug} ({items:,} items; built by an earlier --keep run)")
    return Built(study, f"{slug}-owner", f"{slug}-adjudicator", size)


def summarise(args, runs, loads, all_notes, failures, servers):
    """Print the notes, the table, the targets and any failures; return the verdicts."""
    for size in args.sizes:
        for note in all_notes[size]:
            say(f"  {size_label(size)} {note}")
        for name, result in runs[size].items():
            if result.note:
                say(f"  {size_label(size)} {name}: {result.note}")
    verdicts = report(args, args.sizes, runs, loads)
    say("\nReference: GET /login/ without a session is a template and the middleware, no "
        "study; GET /api/studies/S/ adds the session, DRF and the study and role lookups. "
        "What a page costs beyond them is its own work.")
    say("\nTargets:")
    for ok, line in verdicts:
        say(f"  [{'pass' if ok else 'FAIL'}] {line}")
    for ok, line in verdicts:  # the same, as lines benchmarks/suite.py gathers
        name, figure = line.split(": ", 1)
        wanted = ("under 3x" if "grows" in figure else f"under {JOB_TARGETS[name]} s"
                  if name in JOB_TARGETS else f"p95 under {PAGE_TARGET_MS} ms")
        say(target(f"pages: {name}", wanted, figure, ok))
    if failures.lines:
        say("\nFailures:")
        for line in failures.lines:
            say(f"  {line}")
        for name, log in (("gunicorn", servers.gunicorn_log), ("worker", servers.worker_log)):
            for block in tracebacks(log):
                say(f"\n--- from the {name} log ---\n{block}")
    return verdicts


def describe_tree():
    """The commit measured, and whether the working tree differs from it (other work in
    progress is measured too: gunicorn serves the files as they are)."""
    def git(*arguments):
        return subprocess.run(["git", *arguments], cwd=ROOT, capture_output=True,
                              text=True).stdout

    changed = [line[3:] for line in git("status", "--short", "--untracked-files=no").splitlines()
               if line.strip()]
    return git("log", "--oneline", "-1").strip()[:120] + (
        f"; working tree: {len(changed)} tracked files changed since ({', '.join(changed[:8])}"
        f"{', …' if len(changed) > 8 else ''})" if changed else "; working tree clean")


def rebuild(servers, slug):
    """Stored disagreements for the bulk-built data, when the project has the command."""
    if servers.manage("help", "rebuild_disagreements", timeout=120).returncode != 0:
        say("  WARNING: no `manage.py rebuild_disagreements` yet: the bulk-built study has no "
            "stored disagreements (the pages compute them, as before that work)")
        return
    start = time.perf_counter()
    done = servers.manage("rebuild_disagreements", slug)
    if done.returncode != 0:
        raise RuntimeError(f"rebuild_disagreements {slug} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}{done.stderr[-4000:]}")
    output = " ".join(done.stdout.split())[:200]
    say(f"  manage.py rebuild_disagreements {slug} in {time.perf_counter() - start:.1f} s"
        + (f": {output}" if output else ""))


if __name__ == "__main__":
    sys.exit(main(parse_arguments()))

"""Assignment queue at scale: next item + submit with 1, 10 and 50 concurrent coders.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=x \\
        .venv/bin/python benchmarks/queue.py [--items 100000] [--coders 1,10,50] [--think 20]
    .venv/bin/python benchmarks/queue.py --items 20000       # embedded SQLite

Target (design brief): p95 under 50 ms server time per step at 50 concurrent coders,
100k items, PostgreSQL, one 2-core machine. Issue 13: next item + submit together under
25 ms p95 at 50 paced coders on 1M items (`--items 1000000 --keep` once, then `--reuse`).

The run never touches real data (benchmarks/scratch.py): it creates its own database,
`<name>_queue_bench` beside the configured PostgreSQL database (the login needs CREATEDB;
point DATABASE_URL at a scratch server or database anyway), or the embedded mode's SQLite
file in a temporary folder, migrates it, and drops it at the end (--keep keeps it, for
EXPLAIN ANALYZE). In it: a study part-way through, bulk-created in about a minute:
--items main-round papers wanting 2 coders each, --done of those codings already
submitted by 20 earlier coders (handed out as the queue would: each walking the study's
order from their own offset), --calibration calibration items every coder has passed,
and one fresh coder per simulated coder. ANALYZE runs after the build on PostgreSQL.

What is timed ("server time"). Each simulated coder is a forked process with its own
database connection: 50 coders are 50 Django processes and 50 database sessions, so the
figures measure the database and our code, not the GIL. A coder loops until the level's
time is up: `coding.labeling.queue.next_item(study, coder)`, the assignment fetched as the submit
views fetch it (`access_assignment`: timed as "fetch assignment", on its own line and not
in "next_item + submit", which is what issue 13's target names), then
`coding.actions.submit.submit` with valid answers and one evidence quote. A step's time is the wall time of that one call: our
Python and the ORM, every round trip, the database's work, waiting for row locks and
waiting for a CPU core. Left out is what every request pays around it: HTTP, session and
permission lookups, rendering the page. Beside each step: its statements (counted with an
execute wrapper), the share of its time spent inside them, and the coder process's own
CPU time (Python and the driver, not the database's), which wanders less than wall time
on a shared machine.

Two kinds of level. "Flat out": each coder asks again the moment it is answered, which
measures the cost of a step (1 coder) and the machine's capacity (steps/s at 10 and 50);
far beyond 2 cores' capacity, its latencies are queueing. "Paced" (--paced coders, the
target's level): each coder holds its item for a random time with mean --think seconds
before submitting, as people read before they answer; 20 s is several times faster than
people code.

The reference, measured in the same loop by the same processes under the same load: a
`SELECT 1` round trip, and "lock one item": a transaction taking one row with the plain
indexed `SELECT ... ORDER BY random_key LIMIT 1 FOR UPDATE SKIP LOCKED` of the queue,
without the queue's logic (no rounds, no lease, no assignment). When the reference is
slow too, the machine was busy, not the queue.
"""

# Run as a script, this folder comes first on sys.path, where this file would shadow the
# standard library's queue module (which multiprocessing imports): use the root instead.
import sys  # noqa: I001
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path.pop(0)
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import bisect  # noqa: E402
import math  # noqa: E402
import multiprocessing  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections import namedtuple  # noqa: E402
from datetime import UTC, datetime  # noqa: E402

from benchmarks.machine import footer, target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--done", type=float, default=0.3,
                        help="share of the study's codings already in (default 0.3)")
    parser.add_argument("--calibration", type=int, default=5,
                        help="calibration items, passed by every coder (default 5)")
    parser.add_argument("--coders", default="1,10,50",
                        help="flat-out levels, comma-separated (default 1,10,50)")
    parser.add_argument("--seconds", type=float, default=10, help="per flat-out level")
    parser.add_argument("--paced", type=int, default=50,
                        help="coders in the paced level, 0 for none (default 50)")
    parser.add_argument("--think", type=float, default=20,
                        help="mean seconds a paced coder holds an item (default 20)")
    parser.add_argument("--paced-seconds", type=float, default=90)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--reuse", action="store_true",
                        help="PostgreSQL: run on the study a --keep run left (its database is "
                             "kept again), with fresh coders; building 1M items takes 15 min")
    return parser.parse_args()


# Settings read DATABASE_URL once, so the arguments are checked and the scratch database
# made before Django is set up.
if __name__ == "__main__":
    ARGUMENTS = parse_arguments()
    SCRATCH = use_scratch_database("queue", reuse=ARGUMENTS.reuse)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections, transaction  # noqa: E402
from django.db.models import F  # noqa: E402
from django.utils import timezone  # noqa: E402

from coding.access.roles import access_assignment  # noqa: E402
from coding.actions.submit import submit  # noqa: E402
from coding.codebooks.versions import create_codebook  # noqa: E402
from coding.labeling import queue  # noqa: E402
from coding.models import Assignment, Coding, Item, Membership, Role, Study  # noqa: E402
from ingest.models import Document, Snapshot, content_sha256  # noqa: E402
from workbench.copying import copy_create  # noqa: E402
from tests.factories import SMALL_PAPER_CODEBOOK  # noqa: E402

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
REFERENCE = {"label": "analysis", "code_released": "no"}  # calibration items' reference answers
EVIDENCE = [{"question": "label", "field": "abstract", "quote": "invented abstract"}]
STEPS = ("round trip", "lock one item", "next_item", "submit", "next_item + submit",
         "fetch assignment")
# What each coder process times; "next_item + submit" is summed from two of them.
RECORDED = (*STEPS[:4], "fetch assignment")
OVERLAP = 2
EARLIER_CODERS = 20
BATCH = 5_000
TARGET_MS = 50
BOTH_TARGET_MS = 25  # issue 13: next item + submit together, at 50 paced coders on 1M items
FLAT_TARGET_MS = 150  # issue 42: the same, 50 coders flat out


# --- the study ----------------------------------------------------------------

SLUG = "queue-bench"


def build_study(items, done, calibration):
    """A study part-way through, bulk-created: `items` main-round paper items wanting
    OVERLAP coders each, a share `done` of those codings already submitted by earlier
    coders, and `calibration` calibration items (with their reference answers)."""
    slug = SLUG
    study = Study.objects.create(name="Queue benchmark", slug=slug, overlap=OVERLAP)
    codebook = create_codebook(study, SMALL_PAPER_CODEBOOK)
    User = get_user_model()
    earlier = User.objects.bulk_create(
        User(username=f"{slug}-earlier{n:02d}", password="!") for n in range(EARLIER_CODERS))
    Membership.objects.bulk_create(
        Membership(study=study, user=u, role=Role.CODER) for u in earlier)
    documents = add_documents(slug, items + calibration)
    keys = [queue.new_item_fields(study, d) for d, _ in documents[:items]]
    taken_by = earlier_work(study, [k["random_key"] for k in keys], earlier, done)
    main = create(Item, (
        Item(study=study, document=d, snapshot=s, codebook=codebook,
             taken=len(taken_by.get(n, ())), **keys[n])
        for n, (d, s) in enumerate(documents[:items])))
    create(Item, (
        Item(study=study, document=d, snapshot=s, codebook=codebook,
             reference_values=REFERENCE, **queue.new_item_fields(study, d, Item.Round.CALIBRATION))
        for d, s in documents[items:]))
    add_codings(codebook, [(main[n], c) for n, cs in taken_by.items() for c in cs])
    if connection.vendor == "postgresql":
        # What autovacuum would have done by the time a study has this many rows.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return study


def add_coders(study, coders):
    """`coders` fresh coders who passed every calibration item (a run's own: a reused
    study gets new ones, named after the run's start, since coders use up items)."""
    User = get_user_model()
    run = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")
    users = User.objects.bulk_create(
        User(username=f"{study.slug}-{run}-coder{n:03d}", password="!") for n in range(coders))
    Membership.objects.bulk_create(
        Membership(study=study, user=u, role=Role.CODER) for u in users)
    calibration = list(Item.objects.filter(study=study, round=Item.Round.CALIBRATION))
    add_codings(study.codebooks.get(), [(item, c) for item in calibration for c in users])
    Item.objects.filter(pk__in=[i.pk for i in calibration]).update(taken=F("taken") + coders)
    return users


def create(model, objects):
    """The rows through COPY on PostgreSQL (a million items in minutes: bulk_create's
    INSERTs took 12 to 14), bulk_create elsewhere."""
    if connection.vendor == "postgresql":
        return copy_create(model, objects)
    return model.objects.bulk_create(objects)


def add_documents(slug, count):
    """`count` invented papers with their first snapshot: [(document, snapshot)]."""
    published = datetime(2025, 5, 1, tzinfo=UTC)
    pairs = []
    for start in range(0, count, BATCH):
        documents = create(Document, (
            Document(kind=Document.Kind.PAPER, source=slug, key=f"2599.{n:06d}",
                     title=f"Benchmark paper number {n}", published=published,
                     metadata={"abstract": f"An invented abstract for paper {n}.",
                               "authors": ["Ann Example", "Bo Sample"]})
            for n in range(start, min(count, start + BATCH))))
        snapshots = create(Snapshot, (
            Snapshot(document=d, number=1, content=d.content(), sha256=content_sha256(d.content()))
            for d in documents))
        pairs += zip(documents, snapshots)
    return pairs


def earlier_work(study, keys, coders, done):
    """{item index: [coders]} as the queue would have handed them out: each earlier coder
    walks the study's order from their own offset, taking items that still have room,
    until `done` of the OVERLAP x items codings are in. (One coder after the other, where
    real coders interleave; the filled stretches of the order are what matters here.)"""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ordered_keys = [keys[n] for n in order]
    quota = round(done * len(keys) * OVERLAP / len(coders))
    taken_by = {}
    for coder in coders:
        start, got = bisect.bisect_left(ordered_keys, queue.coder_offset(study, coder)), 0
        for step in range(len(order)):
            if got == quota:
                break
            held = taken_by.setdefault(order[(start + step) % len(order)], [])
            if len(held) < OVERLAP:
                held.append(coder)
                got += 1
    return taken_by


def add_codings(codebook, pairs):
    """A submitted assignment with one coding for each (item, coder)."""
    version = codebook.current_version()
    now = timezone.now()
    for start in range(0, len(pairs), BATCH):
        assignments = create(Assignment, (
            Assignment(item=item, study_id=item.study_id, coder=coder,
                       status=Assignment.Status.SUBMITTED,
                       opened_at=now, finished_at=now)
            for item, coder in pairs[start:start + BATCH]))
        create(Coding, (
            Coding(assignment=a, study_id=a.study_id, revision=1, codebook_version=version,
                   values=ANSWERS, seconds_spent=60) for a in assignments))


# --- one coder ----------------------------------------------------------------

# One timed call: wall seconds, statements executed, seconds inside them, and the
# coder process's own CPU seconds (Python and the driver; not the database's).
Sample = namedtuple("Sample", "seconds queries sql cpu")


class QueryMeter:
    """Counts the statements a connection executes and the time spent inside them."""

    def __init__(self):
        self.count, self.seconds = 0, 0.0

    def __call__(self, execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.count += 1
            self.seconds += time.perf_counter() - start


def lock_one_item(study, offset):
    """The reference: one indexed row lock with SKIP LOCKED, none of the queue's logic."""
    with transaction.atomic():
        return (Item.objects.alive().filter(study=study, round=Item.Round.MAIN, priority=0,
                                            taken__lt=F("target"), random_key__gte=offset)
                .order_by("random_key").select_for_update(skip_locked=True)
                .values_list("pk", flat=True).first())


def round_trip():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def one_step(study, coder, offset, timed, read=lambda: True):
    """The references, then next item, `read()`, and submit; `timed(name, call)` times each.
    False when the coder stops: nothing left, or time was up before they finished reading."""
    timed("round trip", round_trip)
    timed("lock one item", lambda: lock_one_item(study, offset))
    assignment = timed("next_item", lambda: queue.next_item(study, coder))
    if assignment is None or not read():
        return False
    assignment = timed("fetch assignment", lambda: access_assignment(coder, study, assignment.pk))
    timed("submit", lambda: submit(assignment, ANSWERS, evidence=EVIDENCE))
    return True


def run_coder(study, coder, seconds, think, barrier, results):
    """A coder's loop in its own process; puts {step: [Sample]} on `results`."""
    samples = {step: [] for step in RECORDED}
    meter = QueryMeter()
    offset = queue.coder_offset(study, coder)
    rng = random.Random(coder.pk)

    def timed(name, call, record=True):
        count, sql, cpu = meter.count, meter.seconds, time.process_time()
        start = time.perf_counter()
        result = call()
        if record:
            samples[name].append(Sample(time.perf_counter() - start, meter.count - count,
                                        meter.seconds - sql, time.process_time() - cpu))
        return result

    def read():
        """Hold the item a while, as a person reading it would. A coder whose reading runs
        past the deadline stops without submitting: cutting every reading short at the
        deadline would send all their submissions at the same instant."""
        pause = rng.expovariate(1 / think) if think else 0
        if time.perf_counter() + pause > deadline:
            return False
        time.sleep(pause)
        return True

    try:
        with connection.execute_wrapper(meter):
            # Connect and warm the process up before the clock starts.
            one_step(study, coder, offset, lambda name, call: timed(name, call, record=False))
            barrier.wait()
            deadline = time.perf_counter() + seconds
            # Paced coders start at random moments, not all in the first second.
            time.sleep(rng.uniform(0, think))
            while time.perf_counter() < deadline and one_step(study, coder, offset, timed, read):
                pass
        results.put(samples)
    except BaseException as error:
        results.put(error)
        raise
    finally:
        connections.close_all()


def run_level(study, coders, seconds, think):
    """Run len(coders) coder processes at once; their samples and the elapsed seconds."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(len(coders) + 1)
    results = context.Queue()
    # Each forked process opens its own connection; none may inherit ours.
    connections.close_all()
    processes = [context.Process(target=run_coder,
                                 args=(study, coder, seconds, think, barrier, results))
                 for coder in coders]
    for process in processes:
        process.start()
    barrier.wait(timeout=120)
    start = time.perf_counter()
    collected = [results.get(timeout=seconds + 120) for _ in processes]
    elapsed = time.perf_counter() - start
    for process in processes:
        process.join()
    errors = [r for r in collected if isinstance(r, BaseException)]
    if errors:
        raise RuntimeError(f"{len(errors)} coder(s) failed; first: {errors[0]!r}")
    merged = {step: [s for r in collected for s in r[step]] for step in RECORDED}
    merged["next_item + submit"] = [Sample(*map(sum, zip(n, s))) for r in collected
                                    for n, s in zip(r["next_item"], r["submit"])]
    return merged, elapsed


# --- report -------------------------------------------------------------------

def percentile(sorted_values, share):
    """Nearest-rank percentile of an already sorted list."""
    return sorted_values[max(0, math.ceil(share * len(sorted_values)) - 1)]


def report_level(title, samples, elapsed):
    """Print the level's table; return {step: p95 ms}."""
    steps = len(samples["submit"])
    print(f"\n{title}: {steps:,} next item + submit in {elapsed:.1f} s "
          f"= {steps / elapsed:,.1f} steps/s; load average {os.getloadavg()[0]:.2f}")
    print(f"  {'':22}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'queries':>9}{'in SQL':>8}{'cpu ms':>8}")
    p95 = {}
    for step in STEPS:
        rows = samples[step]
        if not rows:
            continue
        times = sorted(1000 * r.seconds for r in rows)
        queries = statistics.median(r.queries for r in rows)
        in_sql = sum(r.sql for r in rows) / sum(r.seconds for r in rows)
        cpu = 1000 * statistics.median(r.cpu for r in rows)
        print(f"  {step:22}" + "".join(f"{percentile(times, p):9.1f}" for p in (.5, .95, .99))
              + f"{times[-1]:9.1f}{queries:9g}{in_sql:8.0%}{cpu:8.1f}")
        p95[step] = percentile(times, .95)
    return p95


def verdict(title, p95, paced):
    met = "meets" if max(p95["next_item"], p95["submit"]) < TARGET_MS else "misses"
    print(f"{title}: {met} the target of p95 under {TARGET_MS} ms per step "
          f"(next_item {p95['next_item']:.1f} ms, submit {p95['submit']:.1f} ms; under the "
          f"same load a round trip took {p95['round trip']:.1f} ms and locking one item "
          f"{p95['lock one item']:.1f} ms at p95)")
    if paced:
        both = p95["next_item + submit"]
        print(f"  issue 13 (paced coders): next item + submit together p95 {both:.1f} ms: "
              f"{'meets' if both < BOTH_TARGET_MS else 'misses'} the target of "
              f"{BOTH_TARGET_MS} ms (load average now {os.getloadavg()[0]:.2f})")


def describe_database():
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()" if connection.vendor == "postgresql"
                       else "SELECT 'SQLite ' || sqlite_version()")
        version = cursor.fetchone()[0].split(" on ")[0]
    print(f"database: {version} ({connection.settings_dict['NAME']}); "
          f"python {sys.version.split()[0]}, Django {django.get_version()}, "
          f"{os.cpu_count()} cpus, load average "
          + ", ".join(f"{v:.2f}" for v in os.getloadavg()))


def main(args, scratch):
    levels = [(int(n), 0, args.seconds) for n in args.coders.split(",") if n.strip()]
    if args.paced:
        levels.append((args.paced, args.think, args.paced_seconds))

    try:
        call_command("migrate", verbosity=0)
        describe_database()
        start = time.perf_counter()
        study = Study.objects.filter(slug=SLUG).first() if args.reuse else None
        if study is None:
            study = build_study(args.items, args.done, args.calibration)
            print(f"built {args.items:,} items ({args.done:.0%} of their codings in) and "
                  f"{args.calibration} calibration items in {time.perf_counter() - start:.1f} s")
        else:
            items = Item.objects.filter(study=study, round=Item.Round.MAIN).count()
            coded = Coding.objects.filter(assignment__study=study).count()
            print(f"reused the study of {items:,} items ({coded:,} codings in so far)")
        users = add_coders(study, sum(n for n, _, _ in levels))
        verdicts = []
        for n, think, seconds in levels:
            coders, users = users[:n], users[n:]
            samples, elapsed = run_level(study, coders, seconds, think)
            title = (f"{n} coder{'s' * (n > 1)}, " + (
                f"paced (each holds an item {think:g} s on average, about {n / think:.1f} "
                "steps/s offered)" if think else "flat out"))
            verdicts.append((title, report_level(title, samples, elapsed)))
    finally:
        if args.keep or args.reuse:
            print(f"\nkept the database {connection.settings_dict['NAME']}")
        else:
            drop_scratch_database(scratch)
    print()
    most = max(n for n, _, _ in levels)
    for (n, think, _), (title, p95) in zip(levels, verdicts):
        if n == most:
            verdict(title, p95, paced=bool(think))
    flat = [(n, p95) for (n, think, _), (_, p95) in zip(levels, verdicts) if not think]
    paced = [(n, p95) for (n, think, _), (_, p95) in zip(levels, verdicts) if think]
    items = f"{args.items:,} items" if not args.reuse else "the kept study"
    for kind, found, limit in (("flat out", flat, FLAT_TARGET_MS), ("paced", paced,
                                                                     BOTH_TARGET_MS)):
        if found:
            n, p95 = max(found, key=lambda level: level[0])
            both = p95["next_item + submit"]
            print(target(f"queue: {n} coders {kind}, {items}, next item + submit",
                         f"p95 under {limit} ms", f"p95 {both:.1f} ms (round trip "
                         f"{p95['round trip']:.1f} ms, one row lock {p95['lock one item']:.1f} "
                         "ms)", both < limit))
    print(footer())


if __name__ == "__main__":
    main(ARGUMENTS, SCRATCH)

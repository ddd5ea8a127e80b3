"""Parquet export at scale: 1,000,000 long-format rows, ours beside pyarrow writing them directly.

    .venv/bin/python benchmarks/export.py                       # end to end on a scratch SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench_dev DJANGO_SECRET_KEY=x \\
        .venv/bin/python benchmarks/export.py [--rows 1000000] [--small 200000] [--repeat 3]
        [--e2e-rows 200000] [--skip-e2e]

Targets: our Parquet writer at least as fast as pyarrow writing the same rows directly
from memory (docs/performance.md); the streaming path, rows made one by one, at least 80%
of it and under 500 MB peak, flat as the rows grow (issue 42).

Every measured run is a fresh Python process started by this script (`--child`), so
the variants never share a heap; its peak RSS is that process's own high-water mark,
VmHWM in /proc/self/status, reported back by it. Not ru_maxrss: on Linux a child's
ru_maxrss starts from the parent's RSS at fork and survives exec (a 13 MB child of a
500 MB parent reports 513 MB), and RUSAGE_CHILDREN in the parent gives the largest of
all children waited for so far, not each one's.

1. Writer against pyarrow. The same synthetic long rows (LONG_FIELDS's 14 columns:
   ints, short strings, JSON-list strings, timezone-aware datetimes, booleans, nulls
   where a question is not applicable, missing or unanswered), built as Python dicts the
   way `coding.export.rows.long` yields them (one per coding revision x question, the
   coding's values shared by its rows), held in a list, then written
   (a) by ours, `write_parquet(path, LONG_FIELDS, rows)`: batches of rows, a row group
       each, written as they come;
   (b) by pyarrow directly, `pq.write_table(pa.Table.from_pylist(rows, schema=...),
       path, compression="zstd")`: one in-memory table of every row.
   Same schema (`arrow_schema(LONG_FIELDS)`), same compression; both files are read back
   afterwards and must hold equal tables. Timed: the write only, from the list in memory
   to the closed file (building the rows, and importing pandas, which pyarrow loads on
   its first conversion and a worker has loaded already, are outside it). Variants alternate,
   --repeat runs each; printed: median wall and CPU seconds of the write, rows/s, and our
   speed as a share of pyarrow's (pyarrow seconds / our seconds). Peak RSS is the whole
   process: interpreter, pyarrow, the rows held in the list, and the write; "added"
   is the peak minus the peak before the write began, i.e. what the write itself needed.
2. Memory as the rows grow: the same at --small rows, and ours fed by a generator that
   makes each row when asked (as rows come from the database), where nothing holds the
   rows: that peak should not grow with the number of rows. pyarrow's direct write
   cannot stream: from_pylist needs every row at once.
3. End to end: a study with enough codings for --e2e-rows long rows in the configured
   database (the small paper codebook of the tests: 6 questions per coding), then in a
   fresh process `build_bundle(study, path, shapes=["long"], fmt="parquet")`: rows
   streamed from the database, the Parquet file, codebook.json, datapackage.json,
   README (a few queries), checksums and the zip. Beside it, also in a fresh process,
   `rows.long` alone, iterated with nothing written: the database and row-building share.
   "added" there is the peak over the process once Django is set up.

The study lives in a scratch database made for the run and dropped after it
(`<name>_export_bench` beside the configured PostgreSQL database, or a temporary SQLite
directory), so real data is never touched. Timings are wall time on a shared machine;
run it a few times and read the CPU seconds beside them.
"""

import argparse
import itertools
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this folder comes first on sys.path, where a sibling benchmark
# named like a stdlib module (queue.py) would shadow it: use the root instead.
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path.pop(0)
sys.path.insert(0, str(ROOT))

from benchmarks.machine import footer, header, target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

QUESTIONS = ("label", "scope", "size_b", "failures", "code_released", "note")
START = datetime(2025, 9, 1, 8, tzinfo=UTC)
TARGET = 1.0  # our speed as a share of pyarrow's direct write, rows held (docs/performance.md)
STREAM_TARGET = 0.8  # rows made one by one, against the same (issue 42)


# --- synthetic long rows ------------------------------------------------------

def coding_plan():
    """(item, coder, revision) of each coding: two coders per item, every tenth assignment
    revised once after discussion (revision 2, reconciliation)."""
    for assignment in itertools.count():
        for revision in (1, 2) if assignment % 10 == 9 else (1,):
            yield assignment // 2, assignment % 2, revision


def synthetic_rows(n, seed=0):
    """n long rows as `rows.long` yields them: one dict per coding x question, the coding's
    own values shared by its six rows."""
    rng = random.Random(seed)
    emitted = 0
    for number, (item, coder, revision) in enumerate(coding_plan()):
        common = {
            "item_id": 10_000 + item,
            "document_key": f"{2501 + item // 99_999}.{item % 99_999:05d}",
            "coder": f"coder_{(2 * item + coder) % 12 + 1}",
            "round": "calibration" if item < 50 else "main",
            "codebook_version": 2 if item % 7 == 0 else 1, "revision": revision,
            "phase": "reconciliation" if revision == 2 else "independent",
            "independent": revision == 1, "submitted_at": START + timedelta(seconds=41 * number),
            "seconds_spent": None if number % 31 == 0 else rng.randint(15, 1800),
            "unsure": rng.random() < 0.08,
        }
        for question, (value, status) in zip(QUESTIONS, synthetic_answers(rng, number)):
            if emitted == n:
                return
            yield {**common, "question": question, "value": value, "status": status}
            emitted += 1


def synthetic_answers(rng, coding):
    label = rng.choice(("rl_method", "analysis"))
    size = rng.choice(("7", "70", "1.5", "not_reported", None))
    note = rng.random() < 0.2
    return [
        (label, "answered"),
        (rng.choice(("general", "embedded")), "answered") if label == "rl_method"
        else (None, "not_applicable"),
        (size, "answered" if size else "missing"),
        (json.dumps(rng.choice((["none"], ["entropy_collapse"], ["entropy_collapse", "none"]))),
         "answered"),
        (rng.choice(("yes", "no")), "answered"),
        (f"Invented remark on coding {coding}: naïve baseline?", "answered") if note
        else (None, "missing"),
    ]


# --- child processes: one measured run each ------------------------------------

def peak_rss_mb():
    """This process's peak resident set size so far (Linux; ru_maxrss elsewhere, see above)."""
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM")) / 1024
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(task, n, path, slug):
    """One measured run in this fresh process; prints its figures as a JSON line."""
    if task in ("bundle", "long-rows"):
        return child_database(task, path, slug)
    # pyarrow imports pandas on its first conversion from Python objects (half a second
    # here); a worker has it loaded already, so every child imports it before the timer.
    import django
    import pandas  # noqa: F401
    import pyarrow as pa

    # The fields module reads the study's blinding settings, so it needs Django set up
    # (no database is touched).
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    django.setup()
    import pyarrow.parquet as pq

    from coding.export.fields import LONG_FIELDS
    from coding.export.writers import arrow_schema, write_parquet

    figures = {"rss_start": peak_rss_mb()}
    rows = synthetic_rows(n) if task == "ours-streamed" else list(synthetic_rows(n))
    figures["rss_before"] = peak_rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    if task == "pyarrow":
        pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema(LONG_FIELDS)), path,
                       compression="zstd")
    else:
        write_parquet(path, LONG_FIELDS, rows)
    figures.update(wall=time.perf_counter() - wall, cpu=time.process_time() - cpu, rows=n,
                   rss_peak=peak_rss_mb())
    print(json.dumps(figures))


def child_database(task, path, slug):
    import django
    import pandas  # noqa: F401  (as in child)

    django.setup()
    from coding.access.names import pseudonyms
    from coding.export import rows
    from coding.export.bundle import build_bundle
    from coding.models import Study

    study = Study.objects.get(slug=slug)
    figures = {"rss_before": peak_rss_mb()}
    wall, cpu = time.perf_counter(), time.process_time()
    if task == "bundle":
        count = build_bundle(study, path, shapes=["long"], fmt="parquet")["rows"]["long"]
    else:
        count = sum(1 for _ in rows.long(study, pseudonyms(study)))
    figures.update(wall=time.perf_counter() - wall, cpu=time.process_time() - cpu, rows=count,
                   rss_peak=peak_rss_mb())
    print(json.dumps(figures))


def run_child(task, n=0, path="", slug=""):
    done = subprocess.run([sys.executable, __file__, "--child", task, str(n), str(path), slug],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the {task} run failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- 1 and 2: the writer against pyarrow ---------------------------------------

HEADER = f"{'wall s':>8}{'CPU s':>8}{'rows/s':>11}{'peak RSS':>11}{'added':>9}"


def median(runs, key):
    return statistics.median(run[key] for run in runs)


def timed_line(label, runs, n, width):
    """Medians of the runs: wall and CPU seconds, rows/s, peak RSS and what the run added."""
    wall, cpu, peak = (median(runs, key) for key in ("wall", "cpu", "rss_peak"))
    added = peak - median(runs, "rss_before")
    return (f"   {label:{width}}{wall:8.2f}{cpu:8.2f}{n / wall:11,.0f}"
            f"{peak:8,.0f} MB{added:6,.0f} MB")


def compare_writers(n, repeat, folder):
    """Part 1; returns the runs, which part 2 reuses for its larger size."""
    paths = {"pyarrow": folder / "pyarrow.parquet", "ours": folder / "ours.parquet"}
    runs = {"pyarrow": [], "ours": []}
    for _ in range(repeat):
        for name in runs:  # alternating, so a change in the machine's load hits both
            runs[name].append(run_child(name, n, paths[name]))
    print(f"1. Writing {n:,} long rows to Parquet (zstd, the LONG_FIELDS schema), rows held in "
          f"memory as dicts.\n   Timed: the write only; each run a fresh process; median of "
          f"{repeat} run(s) each, alternating.")
    print(f"   {'':38}{HEADER}")
    print(timed_line("pyarrow direct (from_pylist + write)", runs["pyarrow"], n, 38))
    print(timed_line("ours (write_parquet)", runs["ours"], n, 38))
    for name, done in runs.items():
        print(f"   {name} runs, wall s: " + ", ".join(f"{run['wall']:.2f}" for run in done))
    share = median(runs["pyarrow"], "wall") / median(runs["ours"], "wall")
    cpu_share = median(runs["pyarrow"], "cpu") / median(runs["ours"], "cpu")
    print(f"   ours runs at {share:.0%} of pyarrow's direct speed (wall; CPU time: "
          f"{cpu_share:.0%}); target at least {TARGET:.0%}: "
          + ("met" if share >= TARGET else "MISSED"))
    print("   " + same_rows(paths["ours"], paths["pyarrow"]))
    print(target(f"export: our Parquet writer, {n:,} long rows held", f"at least {TARGET:.0%} "
                 "of pyarrow's speed", f"{share:.0%} (CPU {cpu_share:.0%})", share >= TARGET))
    return runs


def same_rows(ours, direct):
    import pyarrow.parquet as pq

    equal = pq.read_table(ours).equals(pq.read_table(direct))
    groups = [pq.ParquetFile(p).metadata.num_row_groups for p in (ours, direct)]
    sizes = [p.stat().st_size / 1e6 for p in (ours, direct)]
    return (f"files read back {'EQUAL' if equal else 'DIFFERENT (a bug)'}; ours {groups[0]} row "
            f"groups, {sizes[0]:.1f} MB; pyarrow's {groups[1]} row group(s), {sizes[1]:.1f} MB")


def memory(n, small, runs, folder):
    """Part 2: peak RSS at two sizes, rows held and rows made one by one."""
    written = folder / "memory.parquet"
    held = {name: [run_child(name, small, written), runs[name][0]] for name in runs}
    streamed = [run_child("ours-streamed", size, written) for size in (small, n)]
    lines = [
        ("interpreter + Django, pyarrow, pandas, our writer", [r["rss_start"] for r in streamed]),
        ("the rows held as dicts (before writing)", [r["rss_before"] for r in held["ours"]]),
        ("pyarrow direct, rows held", [r["rss_peak"] for r in held["pyarrow"]]),
        ("ours, rows held", [r["rss_peak"] for r in held["ours"]]),
        ("ours, rows made one by one, none held", [r["rss_peak"] for r in streamed]),
    ]
    print(f"\n2. Peak RSS as the rows grow (each a fresh process, MB){small:>12,}{n:>12,} rows")
    for label, figures in lines:
        print(f"   {label:52}" + "".join(f"{f:12,.0f}" for f in figures))
    print(f"   ours streamed: {n / streamed[1]['wall']:,.0f} rows/s including making the rows")
    share = median(runs["pyarrow"], "wall") / streamed[1]["wall"]
    print(target(f"export: streaming path, {n:,} long rows made one by one", "at least 80% of "
                 "pyarrow from Python lists", f"{share:.0%}", share >= STREAM_TARGET))
    print(target(f"export: streaming path, {n:,} long rows, peak RSS", "under 500 MB",
                 f"{streamed[1]['rss_peak']:,.0f} MB", streamed[1]["rss_peak"] < 500))


# --- 3: end to end through the database ----------------------------------------

def end_to_end(long_rows, repeat, folder):
    scratch = use_scratch_database("export")
    try:
        vendor, slug, codings, built = prepare_study(long_rows)
        runs = {task: [run_child(task, 0, folder / "bundle.zip", slug) for _ in range(repeat)]
                for task in ("bundle", "long-rows")}
    finally:
        drop_scratch_database(scratch)
    n = runs["bundle"][0]["rows"]
    print(f"\n3. End to end on {vendor}: a study with {codings:,} codings = {n:,} long rows "
          f"(built in {built:.0f} s, scratch database dropped).\n   Each run a fresh process; "
          f"median of {repeat}; 'added' is over Django set up.")
    print(f"   {'':48}{HEADER}")
    print(timed_line('build_bundle(shapes=["long"], fmt="parquet")', runs["bundle"], n, 48))
    print(timed_line("rows.long alone (iterated, nothing written)", runs["long-rows"], n, 48))
    print("   bundle runs, wall s: " + ", ".join(f"{r['wall']:.2f}" for r in runs["bundle"]))
    bundle, rows = median(runs["bundle"], "wall"), median(runs["long-rows"], "wall")
    print(f"   the rest (Parquet, zip, checksums, README queries): {bundle - rows:.2f} s; "
          f"rows.long is {rows / bundle:.0%} of the bundle's time")


def prepare_study(long_rows):
    """(database vendor, study slug, codings, seconds to build) in the scratch database."""
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    start = time.perf_counter()
    slug, codings = build_study(long_rows)
    built = time.perf_counter() - start
    connection.close()  # the children open their own
    return connection.vendor, slug, codings, built


def build_study(long_rows):
    """A study in the small paper codebook with codings enough for `long_rows` long rows,
    as coding_plan lays them out; bulk-created, papers in batches. (slug, codings)"""
    import secrets

    from django.contrib.auth import get_user_model
    from django.db import connection

    from coding.codebooks.versions import create_codebook
    from coding.labeling import queue
    from coding.models import Item, Membership, Role, Study
    from tests.factories import SMALL_PAPER_CODEBOOK

    slug = f"export-bench-{secrets.token_hex(4)}"
    study = Study.objects.create(name=f"Export benchmark {slug}", slug=slug, overlap=2)
    codebook = create_codebook(study, SMALL_PAPER_CODEBOOK)
    version = codebook.current_version()
    User = get_user_model()
    coders = User.objects.bulk_create(User(username=f"{slug}-coder{n}", password="!")
                                      for n in range(2))
    Membership.objects.bulk_create(Membership(study=study, user=u, role=Role.CODER) for u in coders)
    plan = list(itertools.islice(coding_plan(), -(-long_rows // version.questions.count())))
    rng, papers = random.Random(0), plan[-1][0] + 1
    for start in range(0, papers, 5_000):
        items = Item.objects.bulk_create(
            Item(study=study, document=d, snapshot=s, codebook=codebook, taken=2,
                 **queue.new_item_fields(study, d))
            for d, s in add_papers(slug, range(start, min(papers, start + 5_000))))
        add_codings(version, [(items[i - start], coders[c], r) for i, c, r in plan
                              if start <= i < start + 5_000], rng)
    if connection.vendor == "postgresql":
        # What autovacuum would have done by the time a study has this many rows.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return slug, len(plan)


def add_papers(slug, numbers):
    """Invented papers with their first snapshot: [(document, snapshot)]."""
    from ingest.models import Document, Snapshot, content_sha256

    documents = Document.objects.bulk_create(
        Document(kind=Document.Kind.PAPER, source=slug, key=f"2599.{n:06d}",
                 title=f"Benchmark paper number {n}", published=START,
                 metadata={"abstract": f"An invented abstract for paper {n}.",
                           "authors": ["Ann Example", "Bo Sample"]})
        for n in numbers)
    return list(zip(documents, Snapshot.objects.bulk_create(
        Snapshot(document=d, number=1, content=d.content(), sha256=content_sha256(d.content()))
        for d in documents)))


def add_codings(version, planned, rng):
    """A submitted assignment per (item, coder) and a coding per [(item, coder, revision)]."""
    from django.utils import timezone

    from coding.models import Assignment, Coding

    now, pairs = timezone.now(), sorted({(i.pk, c.pk): (i, c) for i, c, _ in planned}.items())
    assignments = dict(zip((key for key, _ in pairs), Assignment.objects.bulk_create(
        Assignment(item=i, study_id=i.study_id, coder=c, status=Assignment.Status.SUBMITTED,
                   opened_at=now,
                   finished_at=now) for _, (i, c) in pairs)))
    Coding.objects.bulk_create(
        Coding(assignment=assignments[i.pk, c.pk], revision=r, codebook_version=version,
               phase=Coding.Phase.RECONCILIATION if r == 2 else Coding.Phase.INDEPENDENT,
               values=database_answers(rng), seconds_spent=rng.randint(15, 1800),
               unsure=rng.random() < 0.08)
        for i, c, r in planned)


def database_answers(rng):
    values = {"label": rng.choice(("rl_method", "analysis")),
              "size_b": rng.choice((7, 70, 1.5, "not_reported")),
              "failures": rng.choice((["none"], ["entropy_collapse"],
                                      ["entropy_collapse", "none"])),
              "code_released": rng.choice(("yes", "no"))}
    if values["label"] == "rl_method":
        values["scope"] = rng.choice(("general", "embedded"))
    if rng.random() < 0.2:
        values["note"] = "An invented remark: naïve baseline?"
    if rng.random() < 0.05:
        del values["size_b"]
    return values


def main():
    if sys.argv[1:2] == ["--child"]:
        task, n, path, slug = sys.argv[2:6]
        return child(task, int(n), path, slug)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=200_000, help="second size for memory")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--e2e-rows", type=int, default=200_000)
    parser.add_argument("--skip-e2e", action="store_true")
    args = parser.parse_args()
    import pyarrow

    print(header(f"pyarrow {pyarrow.__version__}") + "\n")
    with tempfile.TemporaryDirectory(prefix="export-bench-") as folder:
        runs = compare_writers(args.rows, args.repeat, Path(folder))
        memory(args.rows, args.small, runs, Path(folder))
        if not args.skip_e2e:
            end_to_end(args.e2e_rows, args.repeat, Path(folder))
    print(footer())


if __name__ == "__main__":
    main()

"""A whole study's export: the export job, all shapes, Parquet, at 10k and 100k items.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=x \\
        .venv/bin/python benchmarks/export_study.py [--sizes 10000,100000] [--repeat 1] [--keep]
    ... benchmarks/export_study.py --build-only      # build and keep the studies, time nothing
    ... benchmarks/export_study.py --reuse [--repeat 3]    # time the kept studies

Target (issue 13): the export job of a 100,000-item study, all shapes (wide per codebook,
long, decisions, items, reliability, inclusion: coding.export.bundle.SHAPES) in Parquet,
under 30 s on this machine (2 cores), with memory flat: bounded by a batch, not by the
study, so the peak at 100k is that at 10k.

The data: the study benchmarks/pages.py builds (its `build_study`, imported, so both
measure the same thing): 3 coders, overlap 2, the preset paper codebook, 85% of items
complete (two independent codings), 7.5% with one, 20% of complete items disagreeing on
one question, the decisions the product writes (settle_item's unanimous revision 1 for
every question the coders answered alike, an adjudicated one on half the disagreeing
items): about 454,000 decision rows and 2.9M long rows at 100k items. Written with COPY
into a scratch database of its own (benchmarks/scratch.py: `<DATABASE_URL's
name>_export_study_bench`, PostgreSQL only), VACUUM ANALYZE after each size, then one
agreement snapshot taken (`snapshots.take_snapshot`, as the agreement job would: the
reliability table is read from it); dropped at the end unless --keep. --reuse times the
studies a --keep run left (a size without one is built), so a quiet window is spent
measuring; --build-only builds and keeps them and times nothing.

What is timed, each in a fresh Python process (so runs never share a heap):

- job: the export job's own function as the worker runs it, `workbench.jobs.run(id)` on a
  queued `export` Job row asked for by the study's owner (every shape; format parquet):
  claim, `coding.export.jobs.run_export` (rows streamed from the database, the Parquet
  files, codebook.json, datapackage.json, README, checksums, zip, the store) and its
  progress reports on the row. Wall and CPU seconds, and
  each table's share (the writer timed per table). Peak RSS is the process's VmHWM
  (/proc/self/status); "added" is the peak minus the RSS once Django, pandas and pyarrow
  are loaded.
- job, traced: the same again under tracemalloc; its peak is the Python heap's high-water
  mark during the job (Arrow's own buffers are not Python allocations and show only in
  RSS). tracemalloc slows Python down, so this run's time is not the one reported.
- reference: pyarrow writing the same rows from Python lists, in the same run. The job's
  Parquet tables are read back (untimed), each row group turned into one Python list per
  column (untimed), then timed: `pa.array(list, type)` per column and
  `ParquetWriter.write_table` (zstd, the same schema), table by table, as the job's
  writer does with its batches. That is what turning the rows into a Parquet file costs
  at the least; the job's time beyond it is reading the database and building rows.

--repeat runs each of the three; medians are printed, with every job run's wall time.
Run it when the machine is quiet: on 2 cores other work moves wall times (the load
average is printed before and after each size; CPU seconds move less).
"""

import sys  # noqa: I001
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this folder comes first on sys.path, where benchmarks/queue.py would
# shadow the standard library's queue module: use the project root instead.
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path.pop(0)
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import zipfile  # noqa: E402

from benchmarks.machine import footer, header, target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

SEED = 20_260_613
MAX_ITEMS = 1_000_000
TARGET_SECONDS, TARGET_MB = 60, 500  # a whole 1,000,000-item study, every shape (issue 42)
STREAM_TARGET = 0.8  # the job's rows/s against pyarrow's from Python lists, same rows


def say(*parts):
    print(*parts, flush=True)


def rss_mb(field="VmHWM"):
    """This process's peak (VmHWM) or current (VmRSS) resident set size, MB."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field)) / 1024


# --- child processes: one measured run each --------------------------------------

def child(task, slug, out):
    import django
    import pandas  # noqa: F401  (pyarrow loads it on a first conversion; a worker has it)
    import pyarrow  # noqa: F401

    django.setup()
    if task == "reference":
        figures = reference(out)
    else:
        figures = run_job(slug, traced=task == "traced")
    print(json.dumps(figures))


def run_job(slug, traced):
    import tracemalloc

    from coding.export import bundle
    from coding.export.bundle import SHAPES
    from coding.models import Membership, Role, Study
    from workbench import jobs, storage
    from workbench.models import Job

    study = Study.objects.get(slug=slug)
    owner = Membership.objects.filter(study=study, role=Role.OWNER).first().user
    job = Job.objects.create(kind="export", created_by=owner, params={
        "study": study.pk, "study_slug": study.slug, "shapes": list(SHAPES), "format": "parquet",
        "include_mapping": False})
    # Each table's writer timed: the bundle looks the writer up when it starts.
    tables = {}
    write, extension = bundle.WRITERS["parquet"]

    def timed_write(path, fields, rows, on_batch=None):
        start = time.perf_counter()
        count = write(path, fields, rows, on_batch=on_batch)
        tables[Path(path).stem] = {"rows": count, "wall": time.perf_counter() - start}
        return count

    bundle.WRITERS["parquet"] = (timed_write, extension)
    figures = {"rss_before": rss_mb("VmRSS")}
    if traced:
        tracemalloc.start()
    wall, cpu = time.perf_counter(), time.process_time()
    jobs.run(job.pk)
    figures.update(wall=time.perf_counter() - wall, cpu=time.process_time() - cpu,
                   rss_peak=rss_mb(), tables=tables)
    if traced:
        figures["traced_peak"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    job.refresh_from_db()
    if job.status != Job.Status.DONE:
        raise RuntimeError(f"the export job ended {job.status}: {job.error}")
    from coding.export.jobs import export_key

    with storage.local_copy(export_key(job)) as path:  # locally the stored file itself
        figures.update(bundle=str(path), bytes=job.result["bytes"])
    return figures


def reference(bundle_path):
    """pyarrow writing the bundle's rows from Python lists, row group by row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    wall = cpu = 0.0
    rows = 0
    with zipfile.ZipFile(bundle_path) as bundle, tempfile.TemporaryDirectory() as folder:
        for name in sorted(n for n in bundle.namelist() if n.endswith(".parquet")):
            source = pq.ParquetFile(io.BytesIO(bundle.read(name)))
            schema = source.schema_arrow
            with pq.ParquetWriter(Path(folder) / name, schema, compression="zstd") as writer:
                for group in range(source.num_row_groups):
                    table = source.read_row_group(group)
                    columns = [column.to_pylist() for column in table.columns]
                    started, started_cpu = time.perf_counter(), time.process_time()
                    writer.write_table(pa.Table.from_arrays(
                        [pa.array(c, type=f.type) for c, f in zip(columns, schema)],
                        schema=schema))
                    wall += time.perf_counter() - started
                    cpu += time.process_time() - started_cpu
                    rows += len(columns[0]) if columns else 0
                    del table, columns
    return {"wall": wall, "cpu": cpu, "rows": rows, "rss_peak": rss_mb()}


def run_child(task, slug="", out=""):
    done = subprocess.run([sys.executable, __file__, "--child", task, slug, out],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the {task} run failed:\n{done.stderr[-6000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the parent -------------------------------------------------------------------

def build(size, password, rng, reuse):
    from benchmarks.pages import build_study, kept_study, vacuum_analyze
    from coding.agreement import snapshots

    if reuse and (kept := kept_study(size)) is not None:
        return kept.study.slug
    start = time.perf_counter()
    built = build_study(size, password, rng)
    vacuum_analyze()
    say(f"  built in {time.perf_counter() - start:.0f} s (VACUUM ANALYZE included): "
        f"{built.complete:,} complete items ({built.disagreeing:,} disagreeing, "
        f"{built.adjudicated:,} adjudicated), {built.codings:,} codings, "
        f"{built.decisions:,} decisions")
    start = time.perf_counter()
    snapshots.take_snapshot(built.study, force=True)
    say(f"  agreement snapshot taken in {time.perf_counter() - start:.0f} s (the reliability "
        "table's figures)")
    return built.study.slug


def measure(slug, repeat, trace=True):
    from django.db import connection

    connection.close()  # the children open their own
    runs = {"job": [], "traced": [], "reference": []}
    for _ in range(repeat):
        runs["job"].append(run_child("job", slug))
        if trace:
            runs["traced"].append(run_child("traced", slug))
        runs["reference"].append(run_child("reference", out=runs["job"][-1]["bundle"]))
        for run in (runs["job"][-1], *runs["traced"][-1:]):
            Path(run["bundle"]).unlink(missing_ok=True)
    return runs


def median(runs, key):
    return statistics.median(run[key] for run in runs)


def report(size, runs):
    job, traced, ref = runs["job"], runs["traced"], runs["reference"]
    middle = sorted(job, key=lambda run: run["wall"])[len(job) // 2]  # the median run
    tables = middle["tables"]
    rows = sum(t["rows"] for t in tables.values())
    wall, cpu = median(job, "wall"), median(job, "cpu")
    peak, added = median(job, "rss_peak"), median(job, "rss_peak") - median(job, "rss_before")
    say(f"  export job, all shapes, Parquet: {rows:,} rows in {len(tables)} tables, "
        f"{job[0]['bytes'] / 1e6:.1f} MB zip")
    say(f"    wall {wall:.1f} s, CPU {cpu:.1f} s (runs: "
        + ", ".join(f"{r['wall']:.1f}" for r in job) + f" s); target < {TARGET_SECONDS} s: "
        + ("met" if wall < TARGET_SECONDS else "MISSED"))
    traced_peak = median(traced, "traced_peak") if traced else float("nan")
    say(f"    peak RSS {peak:.0f} MB, {added:.0f} MB over Django + pyarrow loaded"
        + (f"; tracemalloc peak {traced_peak:.1f} MB (traced run {median(traced, 'wall'):.1f} s)"
           if traced else ""))
    for name, table in tables.items():  # the median run's
        say(f"    {name:18}{table['rows']:>11,} rows {table['wall']:7.1f} s "
            f"{table['rows'] / max(table['wall'], 1e-9):>11,.0f} rows/s")
    say(f"    the rest (README and counts, checksums, zip; median run): "
        f"{middle['wall'] - sum(t['wall'] for t in tables.values()):.1f} s")
    rwall = median(ref, "wall")
    say(f"  reference, pyarrow from Python lists, same rows and schema: wall {rwall:.1f} s, "
        f"CPU {median(ref, 'cpu'):.1f} s, {median(ref, 'rows') / max(rwall, 1e-9):,.0f} rows/s; "
        f"the job takes {wall / max(rwall, 1e-9):.1f}x that")
    return {"size": size, "rows": rows, "wall": wall, "cpu": cpu, "rss_peak": peak,
            "rss_added": added, "traced_peak": traced_peak,
            "reference_wall": rwall, "tables": tables}


def main():
    if sys.argv[1:2] == ["--child"]:
        return child(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--reuse", action="store_true",
                        help="time the studies a --keep run left (kept again)")
    parser.add_argument("--build-only", action="store_true",
                        help="build (or with --reuse, complete) the studies and time nothing; "
                             "implies --keep")
    parser.add_argument("--no-trace", action="store_true",
                        help="skip the tracemalloc run (it takes several times the job's time)")
    args = parser.parse_args()
    args.keep = args.keep or args.reuse or args.build_only
    sizes = [int(s) for s in args.sizes.split(",")]
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        parser.error("PostgreSQL only: set DATABASE_URL (the study is written with COPY)")
    if any(not 0 < s <= MAX_ITEMS for s in sizes) or not 1 <= args.repeat <= 10:
        parser.error(f"sizes 1 to {MAX_ITEMS:,}, --repeat 1 to 10")
    var = tempfile.mkdtemp(prefix="export-study-bench-")
    os.environ["WORKBENCH_VAR_DIR"] = var
    os.environ.pop("REDIS_URL", None)  # the job runs here, in process
    os.environ.setdefault("DJANGO_SECRET_KEY", "export-study-bench")
    scratch = use_scratch_database("export_study", reuse=args.reuse)
    results = []
    try:
        import django

        django.setup()
        import pyarrow
        from django.contrib.auth.hashers import make_password
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        say(header(f"pyarrow {pyarrow.__version__}"))
        say(f"scratch database {scratch[2]}; git "
            + subprocess.run(["git", "log", "--oneline", "-1"], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip())
        password, rng = make_password("export-study-bench"), random.Random(SEED)
        for size in sizes:
            say(f"\n== {size:,} items ==")
            slug = build(size, password, rng, args.reuse)
            if args.build_only:
                continue
            say("  load average before: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
            results.append(report(size, measure(slug, args.repeat, not args.no_trace)))
            say("  load average after: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
        say(f"\n{'items':>9}{'rows':>12}{'wall s':>8}{'CPU s':>7}{'peak RSS':>10}{'added':>8}"
            f"{'tracemalloc':>13}{'pyarrow ref':>13}")
        for r in results:
            say(f"{r['size']:>9,}{r['rows']:>12,}{r['wall']:>8.1f}{r['cpu']:>7.1f}"
                f"{r['rss_peak']:>7.0f} MB{r['rss_added']:>5.0f} MB{r['traced_peak']:>10.1f} MB"
                f"{r['reference_wall']:>11.1f} s")
        for r in results:
            say(target(f"export: a whole {r['size']:,}-item study, every shape, Parquet",
                       f"under {TARGET_SECONDS} s and {TARGET_MB} MB",
                       f"{r['wall']:.1f} s, {r['rss_peak']:,.0f} MB",
                       r["wall"] < TARGET_SECONDS and r["rss_peak"] < TARGET_MB))
            share = r["reference_wall"] / r["wall"]
            say(target(f"export: the job streaming {r['rows']:,} rows from the database",
                       f"at least {STREAM_TARGET:.0%} of pyarrow from Python lists",
                       f"{share:.0%}", share >= STREAM_TARGET))
        say(footer())
    finally:
        if args.keep:
            say(f"kept the database {scratch[2]}")
        else:
            drop_scratch_database(scratch)
        shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()

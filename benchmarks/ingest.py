"""Ingest benchmark: N synthetic arXiv snapshot records into the configured database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=x \\
        .venv/bin/python benchmarks/ingest.py [--records 200000] [--batch-size 1000]

Targets (issue 42), on PostgreSQL: at least 10,000 records/s end to end, and at least
half the rate of `psql`'s own COPY of the same rows; the JSON decoding at least half the
rate of the fastest JSON parser installed (orjson); the import's process under 150 MB
peak RSS, flat in the file's length. The import runs in a scratch database made for the
run and dropped after it (`<name>_ingest_bench` beside the configured PostgreSQL
database, or a temporary SQLite file), so real data is never touched.

In the same run, on the same rows:
- import: the import job's own path (ingest.imports.run_import), first, so the peak RSS
  printed is the import's in a process that has loaded Django and every app; its
  resident memory is also sampled after each batch, to show it flat in the length;
- parse: the file read into records with no database (decoding, checks, the record
  built), and the JSON decoding alone three ways, interleaved, median and best of five:
  ours (the strict decoder that refuses duplicate keys, NaN and overlong numbers),
  `json.loads` as it is and `orjson.loads`;
- re-import: the same file again, every record unchanged (nothing written);
- psql COPY: the rows the import stored, the same columns, copied by `psql \\copy` into a
  table made LIKE the documents table (its indexes and constraints too): the floor of
  writing them (PostgreSQL only; skipped when `psql` is not on PATH).
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this folder comes first on sys.path, where a sibling benchmark
# named like a stdlib module (queue.py, export.py…) would shadow it: use the root.
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path.pop(0)
sys.path.insert(0, str(ROOT))

from benchmarks.machine import footer, header, target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

ABSTRACT = ("  We study an invented problem in reinforcement learning for language models and\n"
            "propose an invented method. Experiments on invented benchmarks show invented gains;\n"
            "we release no code, as none of this exists.\n")
RATE_TARGET = 10_000
RSS_TARGET_MB = 150
DECODE_SAMPLE = 20_000  # lines the three decoders are timed on, five rounds interleaved


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    scratch = use_scratch_database("ingest")
    import django

    django.setup()
    import orjson
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(header(f"Django {django.get_version()}", f"orjson {orjson.__version__}"))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = write_snapshot(Path(tmp) / "snapshot.jsonl", args.records)
            ok = run(path, args.records, args.batch_size, Path(tmp))
    finally:
        drop_scratch_database(scratch)
    print(footer())
    sys.exit(0 if ok else 1)


def run(path, n, batch_size, tmp):
    from django.db import connection

    from ingest.imports import run_import

    postgresql = connection.vendor == "postgresql"
    print(f"{n:,} synthetic snapshot records ({path.stat().st_size / 1e6:,.0f} MB) into "
          f"{connection.vendor}, batches of {batch_size:,}")
    params = {"format": "arxiv_snapshot_file", "path": str(path), "batch_size": batch_size}
    rss_before = peak_rss_mb()  # Django and every app loaded, nothing read yet
    samples, counts = [], {}

    def sample(progress):
        samples.append((progress["read"], resident_mb()))

    seconds = timed(lambda: counts.update(run_import(params, progress=sample)))
    if counts["added"] != n:
        print(f"FAILED: {counts['added']:,} of {n:,} records added: {counts}")
        return False
    rate = report("import (new records)", n, seconds)
    peak = peak_rss_mb()
    tenth = next((mb for read, mb in samples if read >= n / 10), samples[0][1])
    print(f"peak RSS of the process: {peak:,.0f} MB ({rss_before:,.0f} MB before the import "
          f"began); resident after 10% of the records {tenth:,.0f} MB, at the end "
          f"{samples[-1][1]:,.0f} MB")

    ours = report("parse into records (no database)", n, timed(lambda: parse_all(path)))
    decoders = time_decoders(path)
    seconds = timed(lambda: counts.update(run_import(params)))
    if counts["unchanged"] != n:
        print(f"FAILED: re-import counted {counts}")
        return False
    report("re-import (all unchanged)", n, seconds)

    copy_rate = psql_copy(n, tmp) if postgresql else None
    print(target("ingest: records/s end to end into PostgreSQL", f"{RATE_TARGET:,}/s",
                 f"{rate:,.0f}/s" if postgresql else "not measured (SQLite)",
                 postgresql and rate >= RATE_TARGET))
    print(target("ingest: share of psql COPY's rate", "at least 50%",
                 f"{rate / copy_rate:.0%} ({copy_rate:,.0f}/s)" if copy_rate else "not measured",
                 bool(copy_rate) and rate >= copy_rate / 2))
    share = decoders["orjson.loads"] / decoders["ours (strict)"]
    print(target("ingest: JSON decoding, share of orjson's rate", "at least 50%",
                 f"{share:.0%}", share >= 0.5))
    print(f"  reading whole records (decoding, checks, the record built): {ours:,.0f}/s, "
          f"{ours / (1 / decoders['orjson.loads']):.0%} of orjson's decoding alone")
    print(target("ingest: peak RSS of the import's process", f"under {RSS_TARGET_MB} MB",
                 f"{peak:,.0f} MB", peak < RSS_TARGET_MB))
    return True


def parse_all(path):
    from ingest.sources import arxiv_snapshot

    return sum(1 for _ in arxiv_snapshot.read_file(path))


def time_decoders(path):
    """Seconds a line of each decoder over the first DECODE_SAMPLE lines, five rounds
    interleaved; prints median and best as records/s."""
    import orjson

    from ingest.sources.lines import parse_json

    with open(path, "rb") as file:
        lines = [line for _, line in zip(range(DECODE_SAMPLE), file)]
    decoders = {"ours (strict)": parse_json, "json.loads": json.loads,
                "orjson.loads": orjson.loads}
    times = {name: [] for name in decoders}
    for _ in range(5):
        for name, decode in decoders.items():
            start = time.perf_counter()
            for line in lines:
                decode(line)
            times[name].append((time.perf_counter() - start) / len(lines))
    for name, values in times.items():
        print(f"  JSON decoding, {name:<14} median {1 / statistics.median(values):>10,.0f} "
              f"records/s, best {1 / min(values):>10,.0f}")
    return {name: statistics.median(values) for name, values in times.items()}


def psql_copy(n, tmp):
    """Records/s of `psql \\copy` of the rows the import stored (same columns) into a
    table LIKE the documents table; None without psql."""
    from django.db import connection

    from ingest.load import INSERTED_COLUMNS
    from ingest.models import Document

    if not shutil.which("psql"):
        print("psql COPY (reference): skipped, psql is not on PATH")
        return None
    table = Document._meta.db_table
    columns = ", ".join(connection.ops.quote_name(c) for c in INSERTED_COLUMNS)
    rows = tmp / "rows.copy"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE copy_reference (LIKE {table} INCLUDING ALL)")
        with open(rows, "wb") as file, cursor.cursor.copy(
                f"COPY (SELECT {columns} FROM {table}) TO STDOUT") as copy:
            for data in copy:
                file.write(data)
    url = os.environ["DATABASE_URL"]
    seconds = timed(lambda: subprocess.run(
        ["psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c",
         f"\\copy copy_reference ({columns}) FROM '{rows}'"], check=True))
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM copy_reference")
        copied = cursor.fetchone()[0]
        cursor.execute("DROP TABLE copy_reference")
    if copied != n:
        print(f"psql COPY copied {copied:,} rows, not {n:,}")
    return report("psql COPY (reference)", n, seconds)


def write_snapshot(path, n):
    with open(path, "w", encoding="utf-8") as file:
        for i in range(n):
            file.write(json.dumps({
                "id": f"{2501 + i // 99_999:04d}.{i % 99_999:05d}", "submitter": "Ann Example",
                "authors": "Ann Example, Bo Sample and Cy Person",
                "title": f"An Invented Paper on\n  Invented Method Number {i}",
                "comments": "9 pages, 3 figures", "journal-ref": None, "doi": None,
                "report-no": None, "categories": "cs.LG stat.ML",
                "license": "http://creativecommons.org/licenses/by/4.0/", "abstract": ABSTRACT,
                "versions": [{"version": "v1", "created": "Wed, 1 Oct 2025 10:00:00 GMT"},
                             {"version": "v2", "created": "Fri, 3 Oct 2025 10:00:00 GMT"}],
                "update_date": "2025-10-03",
                "authors_parsed": [["Example", "Ann", ""], ["Sample", "Bo", ""],
                                   ["Person", "Cy", "", "Invented University"]],
            }) + "\n")
    return path


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def report(what, n, seconds):
    print(f"{what:<34} {n / seconds:>10,.0f} records/s  ({seconds:,.1f} s; load average "
          f"{os.getloadavg()[0]:.1f})")
    return n / seconds


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def resident_mb():
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf(
            "SC_PAGE_SIZE") / 2**20
    except OSError:
        return peak_rss_mb()


if __name__ == "__main__":
    main()

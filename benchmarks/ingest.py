"""Ingest benchmark: N synthetic arXiv snapshot records into the configured database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=x \
        .venv/bin/python benchmarks/ingest.py [--records 200000] [--batch-size 1000]

Target (design brief): 5,000 records/s into PostgreSQL, memory flat in file size
(peak RSS under 300 MB). The import runs in a scratch database made for the run
and dropped after it (`<name>_ingest_bench` beside the configured PostgreSQL
database, or a temporary SQLite file), so real data is never touched.

Printed beside it, measured in the same run on the same rows:
- parse only: reading the file into records, no database;
- re-import: the same file again, every record unchanged (nothing written);
- plain bulk insert: Document.objects.bulk_create of the same rows, built
  beforehand outside the timer: the floor of writing through the ORM.
"""

import argparse
import json
import os
import resource
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

from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

ABSTRACT = ("  We study an invented problem in reinforcement learning for language models and\n"
            "propose an invented method. Experiments on invented benchmarks show invented gains;\n"
            "we release no code, as none of this exists.\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    scratch = use_scratch_database("ingest")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = write_snapshot(Path(tmp) / "snapshot.jsonl", args.records)
            run(path, args.records, args.batch_size)
    finally:
        drop_scratch_database(scratch)


def run(path, n, batch_size):
    from django.db import connection

    from ingest.imports import run_import
    from ingest.models import Document
    from ingest.sources import arxiv_snapshot

    print(f"{n:,} synthetic snapshot records ({path.stat().st_size / 1e6:,.0f} MB) into "
          f"{connection.vendor}, batches of {batch_size:,}")
    seconds = timed(lambda: sum(1 for _ in arxiv_snapshot.read_file(path)))
    report("parse only (no database)", n, seconds)
    params = {"format": "arxiv_snapshot_file", "path": str(path), "batch_size": batch_size}
    rss_before_import = peak_rss_mb()  # Django and every app loaded, the file parsed once
    counts = {}
    seconds = timed(lambda: counts.update(run_import(params)))
    assert counts["added"] == n, counts
    report("import (new records)", n, seconds)
    rss_after_import = peak_rss_mb()
    seconds = timed(lambda: counts.update(run_import(params)))
    assert counts["unchanged"] == n, counts
    report("re-import (all unchanged)", n, seconds)
    seconds = plain_bulk_insert(path, batch_size, Document, arxiv_snapshot)
    report("plain bulk insert (reference)", n, seconds)
    print(f"peak RSS after the import: {rss_after_import:,.0f} MB (target < 300 MB), of which "
          f"{rss_before_import:,.0f} MB before it began; at the end: {peak_rss_mb():,.0f} MB")


def plain_bulk_insert(path, batch_size, Document, arxiv_snapshot):
    """Time only bulk_create, on Document objects of the same rows built per batch.

    The rows go in under another source name, beside the imported ones, so nothing
    has to be deleted first (deleting through the ORM would load every row).
    """
    total, batch = 0.0, []
    for record in arxiv_snapshot.read_file(path):
        batch.append(Document(kind=record.kind, source="plain", key=record.key,
                              title=record.title, url=record.url, published=record.published,
                              updated=record.updated, metadata=record.metadata))
        if len(batch) == batch_size:
            total += timed(lambda: Document.objects.bulk_create(batch))
            batch = []
    if batch:
        total += timed(lambda: Document.objects.bulk_create(batch))
    return total


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
    print(f"{what:<32} {n / seconds:>10,.0f} records/s  ({seconds:,.1f} s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()

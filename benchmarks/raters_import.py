"""Importing raters' codings: 100,000 CSV rows, ours beside a bulk_create of the same rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=x \\
        .venv/bin/python benchmarks/raters_import.py [--rows 100000] [--repeat 3]

Target (issue 16): 100,000 rows in under a minute on PostgreSQL.

A study of rows/2 papers with a three-option question and two model raters is built in a
scratch database (benchmarks/scratch.py). The file has one `label` answer per paper and
rater. Timed, each --repeat times, the median printed:
(a) ours: `coding.raters.imports.import_file` on the CSV, everything it does for a person
    (parsing, items looked up by identifier, every answer checked against the codebook,
    duplicates and conditions, the stored answers read to tell new from changed, the
    write: COPY on PostgreSQL), in one transaction; the rows are deleted between runs;
(b) the reference: the same RaterCoding rows, made in memory with their item ids known,
    written with `bulk_create(batch_size=5000)` in one transaction: the database's share;
(c) ours again on the imported rows: the idempotent re-import, nothing written.
"""

import argparse
import csv
import os
import statistics
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

from benchmarks.machine import target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

LABELS = ("rl_method", "analysis", "systems")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scratch = use_scratch_database("raters")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run(Path(tmp) / "labels.csv", args.rows, args.repeat)
    finally:
        drop_scratch_database(scratch)


def build(n_items):
    from coding.codebooks.versions import create_codebook
    from coding.models import Item, Rater, Study
    from ingest.models import Document, Snapshot

    study = Study.objects.create(name="Raters benchmark")
    codebook = create_codebook(study, {"name": "Screening", "applies_to": "paper", "questions": [
        {"key": "label", "kind": "single", "text": "Label?",
         "options": [{"value": v} for v in LABELS]}]})
    documents = Document.objects.bulk_create(
        [Document(kind="paper", source="bench", key=f"2601.{n:06d}", title=f"Paper {n}")
         for n in range(n_items)], batch_size=5000)
    snapshot = Snapshot.objects.create(document=documents[0], number=1, content={}, sha256="0")
    Item.objects.bulk_create([Item(study=study, document=d, snapshot=snapshot,
                                   codebook=codebook, target=1) for d in documents],
                             batch_size=5000)
    raters = [Rater.objects.create(study=study, kind="model", name=f"model-{i}",
                                   model_version="v1") for i in range(2)]
    return study, raters


def run(path, n_rows, repeat):
    from django.db import connection, transaction
    from django.utils import timezone

    from coding.models import Item, RaterCoding
    from coding.raters.imports import import_file

    study, raters = build(n_rows // 2)
    keys = dict(Item.objects.filter(study=study).values_list("document__key", "pk"))
    answers = [(key, rater, LABELS[(n + i) % 3]) for n, key in enumerate(sorted(keys))
               for i, rater in enumerate(raters)][:n_rows]
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["item", "rater", "question", "value"])
        writer.writerows((key, rater.name, "label", value) for key, rater, value in answers)
    version = study.codebooks.get().current_version()
    print(f"{len(answers):,} rows ({path.stat().st_size / 1e6:.1f} MB) into {connection.vendor}; "
          f"load average at start {load()}")

    def ours():
        report = import_file(study, str(path))
        assert report.new == len(answers), report.as_dict()["counts"]

    def reference():
        now = timezone.now()
        with transaction.atomic():
            RaterCoding.objects.bulk_create(
                [RaterCoding(rater=rater, item_id=keys[key], question_key="label", value=value,
                             codebook_version=version, imported_at=now)
                 for key, rater, value in answers], batch_size=5000)

    def again():
        report = import_file(study, str(path))
        assert report.unchanged == len(answers), report.as_dict()["counts"]

    times = {"ours": [], "reference": [], "again": []}
    for _ in range(repeat):
        for name, step in (("reference", reference), ("ours", ours), ("again", again)):
            if name != "again":
                RaterCoding.objects.all().delete()
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    ours_s, ref_s = statistics.median(times["ours"]), statistics.median(times["reference"])
    print(f"ours (import_file, checked):    {ours_s:6.1f} s  {len(answers) / ours_s:9,.0f} rows/s")
    print(f"reference (bulk_create only):   {ref_s:6.1f} s  {len(answers) / ref_s:9,.0f} rows/s")
    print(f"re-import (all unchanged):      {statistics.median(times['again']):6.1f} s")
    print(f"ours / reference: {ours_s / ref_s:.2f}x; target: under 60 s "
          f"({'met' if ours_s < 60 else 'NOT met'}); runs: "
          + ", ".join(f"{k} {[round(t, 1) for t in v]}" for k, v in times.items()))
    print(target(f"rater import: {len(answers):,} CSV rows into {connection.vendor}",
                 "under 60 s", f"{ours_s:.1f} s (bulk_create {ref_s:.1f} s)", ours_s < 60))
    print(f"load average at end {load()} (1, 5, 15 min; 2 cores)")


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()

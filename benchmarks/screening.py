"""Screening prioritised by our model beside ASReview LAB's default model, in the same run.

    .venv/bin/python benchmarks/screening.py ../shared/screening/Nagtegaal_2019.csv --seeds 10

For each seed both tools replay the fully labelled set from the same two prior records (one
include, one exclude, drawn by coding.screening.simulate.draw_priors with the seed), ours
first, then ASReview's `asreview simulate` with its default model (TF-IDF, linear SVM,
balanced sampling, maximum relevance), its seed set to the same. Both orders are scored by
the same code (coding.screening.stopping.figures): records screened to 95% recall, WSS@95,
RRF@10, and the wall time of each replay. Ours also reports where the stopping rule (95%
recall, 95% confidence) would have stopped and the true recall there.

ASReview runs from its own virtual environment (--asreview, default
benchmarks/.asreview-venv, made with `python -m venv` and `pip install asreview` on first
use), so the project's environment never holds it. --skip-asreview runs ours alone.

Then the ranking latency: a retrain-and-rerank (TF-IDF weighting, fit on 500 labels, score
and order every record) on invented records at 10,000 and 100,000, features computed once
as the study's cache holds them (their own time printed beside), median of --repeats.
No database is needed.
"""

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

sys.path[0] = str(Path(__file__).resolve().parents[1])
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "benchmark-only-" + "x" * 40)

import django  # noqa: E402

django.setup()

from benchmarks.machine import target  # noqa: E402
from coding.screening import model as screening_model  # noqa: E402
from coding.screening import stopping  # noqa: E402
from coding.screening.simulate import draw_priors, read_labelled, simulate  # noqa: E402

HERE = Path(__file__).resolve().parent


def asreview_env(path):
    binary = Path(path) / "bin" / "asreview"
    if not binary.exists():
        print(f"making {path} with asreview from PyPI …", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
        subprocess.run([str(Path(path) / "bin" / "pip"), "install", "-q", "asreview"],
                       check=True)
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             cwd=tempfile.gettempdir())  # not here: it leaves a cache file
    return binary, version.stdout.strip()


def asreview_order(binary, dataset, priors, seed):
    """ASReview's labelling order after the priors (row numbers) and its wall time."""
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "run.asreview"
        started = time.perf_counter()
        # In its own folder: asreview leaves a dataset cache (synergy_cache.sqlite) in the
        # working directory.
        subprocess.run([str(binary), "simulate", str(Path(dataset).resolve()), "--prior-idx",
                        *map(str, priors), "--seed", str(seed), "-o", str(project)],
                       check=True, capture_output=True, cwd=folder)
        wall = time.perf_counter() - started
        with zipfile.ZipFile(project) as archive:
            archive.extract("results.db", folder)
        db = sqlite3.connect(Path(folder) / "results.db")
        rows = db.execute("SELECT r.dataset_row FROM results JOIN record r USING (record_id) "
                          "ORDER BY results.rowid").fetchall()
        db.close()
    order = [row for (row,) in rows]
    return [row for row in order if row not in set(priors)], wall


def figures_of(order, labels, priors):
    total = len(labels) - len(priors)
    relevant = int(labels.sum() - labels[priors].sum())
    return stopping.figures(labels[order], total, relevant)


def show(value, fmt):
    return "—" if value is None else format(value, fmt)


def latency(repeats, sizes):
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(20000)]
    print("\nretrain-and-rerank on invented records (500 labels, 10% includes):")
    for size in sizes:
        texts = [" ".join(rng.choice(vocabulary, 120)) for _ in range(size)]
        started = time.perf_counter()
        counts = screening_model.features(texts)
        featuring = time.perf_counter() - started
        rows = rng.choice(size, 500, replace=False)
        labels = (rng.random(500) < 0.1).astype(int)
        labels[:2] = [0, 1]
        ranker = screening_model.ranker()
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            scores = ranker.scores(counts, rows, labels)
            screening_model.order(scores, np.arange(size))
            times.append(time.perf_counter() - started)
        limit = 1 if size <= 10_000 else 10
        print(f"  {size:>7,} records: median {np.median(times):.2f} s, best {min(times):.2f} s "
              f"(target {limit} s); features once {featuring:.1f} s")
        print(target(f"screening: retrain and rerank, {size:,} records", f"under {limit} s",
                     f"{np.median(times):.2f} s", np.median(times) < limit))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--asreview", default=str(HERE / ".asreview-venv"))
    parser.add_argument("--skip-asreview", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--latency-sizes", default="10000,100000",
                        help="records in the ranking-latency runs (default 10000,100000)")
    args = parser.parse_args()

    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"python {sys.version.split()[0]}, scikit-learn "
          f"{__import__('sklearn').__version__}, {os.cpu_count()} cpus, load average {load}")
    binary = version = None
    if not args.skip_asreview:
        binary, version = asreview_env(args.asreview)
        print(f"reference: {version} (simulate, default model)")
    texts, labels, _ = read_labelled(args.dataset)
    counts = screening_model.features(texts)
    print(f"{args.dataset}: {len(labels):,} records, {int(labels.sum())} included; ours: "
          f"{screening_model.DEFAULT}\n")
    print(f"{'seed':>4}  {'tool':<9} {'to 95%':>6} {'WSS@95':>7} {'RRF@10':>7} {'wall s':>7}"
          f"  stopping rule")
    ours, theirs = [], []
    for seed in range(args.seeds):
        priors = draw_priors(labels, seed)
        run = simulate(texts, labels, seed=seed, priors=priors, counts=counts)
        ours.append(run)
        print(f"{seed:>4}  {'ours':<9} {show(run['records_to_95'], '6d')} "
              f"{show(run['wss_95'], '7.3f')} {show(run['rrf_10'], '7.3f')} "
              f"{run['seconds']:7.1f}  stops after {show(run['stop'], 'd')}, recall "
              f"{show(run['stop_recall'], '.3f')}, work saved {show(run['stop_saved'], '.3f')}",
              flush=True)
        if binary:
            order, wall = asreview_order(binary, args.dataset, priors, seed)
            figures = {**figures_of(order, labels, priors), "seconds": wall}
            theirs.append(figures)
            print(f"{seed:>4}  {'ASReview':<9} {show(figures['records_to_95'], '6d')} "
                  f"{show(figures['wss_95'], '7.3f')} {show(figures['rrf_10'], '7.3f')} "
                  f"{wall:7.1f}", flush=True)

    def mean(runs, key):
        values = [r[key] for r in runs if r[key] is not None]
        return float(np.mean(values)) if values else None

    print()
    for name, runs in (("ours", ours), ("ASReview", theirs)):
        if runs:
            print(f"mean  {name:<9} {show(mean(runs, 'records_to_95'), '6.1f')} "
                  f"{show(mean(runs, 'wss_95'), '7.3f')} {show(mean(runs, 'rrf_10'), '7.3f')} "
                  f"{show(mean(runs, 'seconds'), '7.1f')}")
    if theirs:
        ratio = mean(ours, "records_to_95") / mean(theirs, "records_to_95")
        print(f"records to 95% recall, ours / ASReview: {ratio:.3f} (target at most 1, aim 0.9)")
        print(target(f"screening: records read to 95% recall, {len(ours)} seeds",
                     "at most ASReview's default model", f"{ratio:.3f} of ASReview's",
                     ratio <= 1))
    safe = sum(1 for r in ours if r["stop_recall"] is not None and r["stop_recall"] >= 0.95)
    print(f"stopping rule (95% recall, 95% confidence): recall ≥ 0.95 at its stop in {safe} of "
          f"{len(ours)} seeds (target 9 of 10); mean work saved "
          f"{show(mean(ours, 'stop_saved'), '.3f')}")
    print(target("screening: stopping rule, recall at its stop", "at least 95% in 9 of 10 seeds",
                 f"{safe} of {len(ours)}", safe >= 0.9 * len(ours)))
    if not args.no_latency:
        latency(args.repeats, [int(size) for size in args.latency_sizes.split(",")])
    print("load average after: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()

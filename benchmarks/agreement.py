"""Agreement at scale: our Krippendorff's alpha beside the krippendorff package.

    .venv/bin/python benchmarks/agreement.py [--scale 1] [--repeats 5] [--seed 0]

Five shapes of seeded ratings (each coder copies a unit's true value 70% of the time,
else guesses): 1,000,000 units x 3 coders nominal with 10% and with 20% of ratings
missing, 100,000 x 10 ordinal (a 7-point scale), 20,000 x 4 interval (0 to 100: at 100,000
units the package ran out of 24 GB), 10,000 x 50 nominal with half missing; --scale multiplies the units (0.01 for a quick look). For
each shape, --repeats rounds, interleaved: ours, then the package on the same matrix (it
takes coders x units; the transpose is a view), then the floor, one `numpy.bincount` pass
over the same matrix (as whole numbers, missing as a value of its own). Printed: median and
best of each, the ratio of medians (target: ours at least 10x faster), and both alphas;
the script exits 1 if they differ by more than 1e-9 (a correctness check, never a timing
one). The machine, its cores and the load average before and after are printed too.

With --study it also times the full reliability report of one study
(`coding.agreement.reliability.study_report`: every question's alpha with its 95% bootstrap
interval, kappa, per-category and coder-by-coder tables) on --items items x 20
questions, each item coded by two of three coders. That part needs Django and makes a
scratch database of its own (benchmarks/scratch.py: `<DATABASE_URL's name>_agreement_bench`
on PostgreSQL, dropped afterwards; SQLite in a temporary folder without DATABASE_URL):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=$(python3 -c "import secrets; print(secrets.token_urlsafe(50))") \\
        .venv/bin/python benchmarks/agreement.py --study [--items 100000]

The study is written with bulk_create inside one transaction that is rolled back at
the end, so the database is left as it was. Its in-run references: reading the
independent codings alone (the floor for any report computed from the database), and
the krippendorff package's alpha on the same 20 rating matrices, without intervals.
"""

import argparse
import sys
import time
from importlib import metadata
from pathlib import Path

import krippendorff
import numpy as np

# The project replaces this script's directory on sys.path: benchmarks/queue.py would
# shadow the standard library's queue module, which Django imports (--study).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks.machine import footer, header, target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402
from coding.agreement.alpha import krippendorff_alpha  # noqa: E402

# (name, units at scale 1, coders, level, values on the scale, share missing)
SHAPES = [
    ("nominal, 10% missing", 1_000_000, 3, "nominal", 5, 0.10),
    ("nominal, 20% missing", 1_000_000, 3, "nominal", 5, 0.20),
    ("ordinal, 7 points", 100_000, 10, "ordinal", 7, 0.10),
    # 20,000 units, not the 100,000 of issue 42: at 100,000 x 4 the package's interval
    # alpha ran this 24 GB machine out of memory (killed by the kernel).
    ("interval, 0 to 100", 20_000, 4, "interval", 101, 0.10),
    ("nominal, 50 coders, half missing", 10_000, 50, "nominal", 5, 0.50),
]
TARGET = 10  # ours at least this many times faster than the package (ratio of medians)
AGREE_WITHIN = 1e-9


def ratings_for(units, coders, values, missing, seed):
    """Ratings (units x coders): each coder copies a unit's true value 70% of the time and
    otherwise picks one at random; `missing` of them left out (NaN)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, values, size=(units, 1))
    guess = rng.integers(0, values, size=(units, coders))
    ratings = np.where(rng.random((units, coders)) < 0.7, truth, guess).astype(float)
    ratings[rng.random((units, coders)) < missing] = np.nan
    return ratings


def compare_shapes(scale, repeats, seed):
    """Every shape, interleaved rounds; whether every pair of alphas agreed."""
    agreed, verdicts = True, []
    print(f"{'shape':34}{'units':>10}{'coders':>7}  {'ours med/best s':>17}"
          f"{'package med/best s':>20}{'floor med s':>12}{'x':>7}  target  alpha (ours, package)")
    for n, (name, units, coders, level, values, missing) in enumerate(SHAPES):
        units = max(100, int(units * scale))
        ratings = ratings_for(units, coders, values, missing, seed + n)
        whole = np.where(np.isnan(ratings), values, ratings).astype(np.int64).ravel()
        times = {"ours": [], "package": [], "floor": []}
        for _ in range(repeats):
            start = time.perf_counter()
            ours = krippendorff_alpha(ratings, level)
            times["ours"].append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs = float(krippendorff.alpha(ratings.T, level_of_measurement=level))
            times["package"].append(time.perf_counter() - start)
            start = time.perf_counter()
            np.bincount(whole)
            times["floor"].append(time.perf_counter() - start)
        median = {key: float(np.median(value)) for key, value in times.items()}
        ratio = median["package"] / median["ours"]
        same = abs(ours - theirs) <= AGREE_WITHIN
        agreed &= same
        print(f"{name:34}{units:>10,}{coders:>7}  {median['ours']:8.3f}/{min(times['ours']):.3f}"
              f"  {median['package']:9.3f}/{min(times['package']):.3f}"
              f"  {median['floor']:10.4f}{ratio:6.1f}x  {'met' if ratio >= TARGET else 'MISSED':6}"
              f"  {ours:.12f}, {theirs:.12f}{'' if same else '  DIFFER'}", flush=True)
        verdicts.append(target(f"alpha, {name}, {units:,} x {coders}",
                               f"{TARGET}x the krippendorff package",
                               f"{ratio:.1f}x ({median['ours']:.3f} s)", ratio >= TARGET and same))
    print(f"median of {repeats} interleaved rounds each; target: ours at least {TARGET}x faster "
          "than the package; floor: one numpy.bincount pass over the same matrix")
    print("\n".join(verdicts))
    return agreed


def timed(function):
    """Wall-clock seconds of one call, and its result."""
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def describe_machine():
    print(header(f"numpy {np.__version__}", f"krippendorff {metadata.version('krippendorff')}"))


# ---------------------------------------------------------------------------
# The full study report (Django and a database; imported only with --study)
# ---------------------------------------------------------------------------

STUDY_CODERS = 3
BATCH = 5_000
AGREE = 0.85  # each coder copies the item's true answer this often


def study_codebook():
    """20 questions: 12 single choice (2 to 9 options, one ordinal), 1 conditional,
    3 yes/no, 2 multiple choice, 2 numbers (ratio) with a 'not reported' option."""
    def options(k):
        return [{"value": f"o{i}"} for i in range(k)]

    questions = [{"key": f"single_{n:02d}", "kind": "single", "text": f"Single {n}",
                  "level": "ordinal" if n == 1 else "nominal", "options": options(k)}
                 for n, k in enumerate([2, 3, 4, 5, 7, 9] * 2, start=1)]
    questions.append({"key": "conditional", "kind": "single", "text": "Only when single_01 is o0",
                      "show_if": {"question": "single_01", "in": ["o0"]}, "options": options(3)})
    questions += [{"key": f"yes_no_{n}", "kind": "yes_no", "text": f"Yes or no {n}"}
                  for n in range(1, 4)]
    questions += [{"key": f"multiple_{n}", "kind": "multiple", "text": f"Any of {n}",
                   "options": options(5)} for n in range(1, 3)]
    questions += [{"key": f"number_{n}", "kind": "number", "level": "ratio", "text": f"Size {n}",
                   "options": [{"value": "not_reported"}]} for n in range(1, 3)]
    return {"name": "Benchmark codebook", "applies_to": "paper", "questions": questions}


def simulated_answers(spec, items, rng):
    """{question key: (truth, coder copies)}: vectorised draws, one column per coder."""
    columns = {}
    for q in spec["questions"]:
        k = len(q.get("options", [])) or 2
        truth = rng.integers(0, 8 if q["kind"] == "number" else k, size=items)
        guess = rng.integers(0, 8 if q["kind"] == "number" else k, size=(items, STUDY_CODERS))
        copies = np.where(rng.random((items, STUDY_CODERS)) < AGREE, truth[:, None], guess)
        columns[q["key"]] = copies
    return columns


def answer(question, code, extra):
    if question["kind"] == "yes_no":
        return ("yes", "no")[code]
    if question["kind"] == "number":
        return "not_reported" if code == 7 else [0.5, 1.5, 3, 7, 8, 14, 32][code]
    if question["kind"] == "multiple":
        return sorted({f"o{code}", f"o{extra}"})
    return f"o{code}"


def coding_values(spec, columns, item, coder):
    values = {}
    for q in spec["questions"]:
        if q.get("show_if") and values.get(q["show_if"]["question"]) not in q["show_if"]["in"]:
            continue  # not applicable for this coder
        code = int(columns[q["key"]][item, coder])
        values[q["key"]] = answer(q, code, (code + item) % 5)
    return values


def build_study(items, seed):
    """The study, written with bulk_create in batches; returns (study, spec, columns)."""
    from django.contrib.auth import get_user_model

    from coding.codebooks.versions import create_codebook
    from coding.models import Assignment, Coding, Item, Membership, Role, Study
    from ingest.models import Document, Snapshot, content_sha256

    rng = np.random.default_rng(seed)
    slug = f"agreement-bench-{rng.integers(1 << 30)}"
    study = Study.objects.create(name=slug, slug=slug, overlap=2)
    coders = get_user_model().objects.bulk_create(
        get_user_model()(username=f"{slug}-c{n}") for n in range(STUDY_CODERS))
    Membership.objects.bulk_create(Membership(study=study, user=u, role=Role.CODER) for u in coders)
    spec = study_codebook()
    codebook = create_codebook(study, spec)
    version = codebook.current_version()
    columns = simulated_answers(spec, items, rng)
    for start in range(0, items, BATCH):
        numbers = range(start, min(items, start + BATCH))
        documents = Document.objects.bulk_create(
            Document(kind=Document.Kind.PAPER, source=slug, key=f"{n:07d}", title=f"Paper {n}")
            for n in numbers)
        contents = [d.content() for d in documents]
        snapshots = Snapshot.objects.bulk_create(
            Snapshot(document=d, number=1, content=c, sha256=content_sha256(c))
            for d, c in zip(documents, contents))
        placed = Item.objects.bulk_create(
            Item(study=study, document=d, snapshot=s, codebook=codebook, target=2, taken=2,
                 random_key=rng.random()) for d, s in zip(documents, snapshots))
        pairs = [(item, n, c) for item, n in zip(placed, numbers)
                 for c in (n % STUDY_CODERS, (n + 1) % STUDY_CODERS)]
        assignments = Assignment.objects.bulk_create(
            Assignment(item=item, study_id=item.study_id, coder=coders[c], status=Assignment.Status.SUBMITTED)
            for item, _, c in pairs)
        Coding.objects.bulk_create(
            Coding(assignment=a, revision=1, codebook_version=version,
                   values=coding_values(spec, columns, n, c))
            for a, (_, n, c) in zip(assignments, pairs))
    return study, spec, columns


def reference_alphas(spec, columns, items):
    """The krippendorff package on the same matrices (two of three coders per item)."""
    rows = np.arange(items)
    missing = (rows + 2) % STUDY_CODERS  # the coder who did not code the item
    for q in spec["questions"]:
        if q["kind"] == "multiple":
            continue  # the package has no distance for sets
        table = columns[q["key"]].astype(float)
        table[rows, missing] = np.nan
        if q["kind"] == "number":
            table[table == 7] = np.nan  # "not reported" is not a number
        level = "ratio" if q["kind"] == "number" else q.get("level", "nominal")
        krippendorff.alpha(table.T, level_of_measurement=level)


def time_study_report(items, seed):
    import django
    from django.core.management import call_command

    django.setup()
    from django.db import connection, transaction

    from coding.agreement import reliability

    call_command("migrate", verbosity=0)
    print(f"full study report, {items:,} items x 20 questions, each item coded by 2 of "
          f"{STUDY_CODERS} coders, on {connection.vendor}")

    class RolledBack(Exception):
        pass

    try:
        with transaction.atomic():
            start = time.perf_counter()
            study, spec, columns = build_study(items, seed)
            print(f"  built with bulk_create           {time.perf_counter() - start:8.1f} s "
                  "(not part of the figures)")
            if connection.vendor == "postgresql":
                # A live database has statistics from autovacuum; fresh rows in an open
                # transaction have none, and the planner would take the tables for empty.
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
            questions = {book.pk: reliability._questions(book)
                         for book in study.codebooks.all()}
            read_seconds, (groups, n_codings, _) = timed(
                lambda: reliability._independent(study, questions))
            report_seconds, report = timed(lambda: reliability.study_report(study))
            reference_seconds, _ = timed(lambda: reference_alphas(spec, columns, items))
            main = report["rounds"]["main"]["codebooks"][0]["questions"]
            print(f"  study_report                     {report_seconds:8.1f} s   "
                  f"{n_codings:,} codings, alphas {min(q['alpha']['value'] for q in main):.3f}"
                  f" to {max(q['alpha']['value'] for q in main):.3f}")
            print(f"  of which reading the codings     {read_seconds:8.1f} s   (reference: the "
                  "floor from the database)")
            print(f"  krippendorff.alpha, 18 matrices  {reference_seconds:8.1f} s   (reference: "
                  "alpha alone, no intervals, no sets)")
            raise RolledBack
    except RolledBack:
        pass

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiplies every shape's units (default 1: up to 1,000,000)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--study", action="store_true",
                        help="also time a full study report (needs Django and a database)")
    parser.add_argument("--items", type=int, default=100_000, help="items in that study")
    args = parser.parse_args()
    describe_machine()
    agreed = compare_shapes(args.scale, args.repeats, args.seed)
    if args.study:
        scratch = use_scratch_database("agreement")
        try:
            time_study_report(args.items, args.seed)
        finally:
            drop_scratch_database(scratch)
    print(footer())
    if not agreed:  # a correctness check, never a timing one
        sys.exit("our alpha differs from the krippendorff package's")


if __name__ == "__main__":
    main()

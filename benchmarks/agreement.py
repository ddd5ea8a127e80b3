"""Agreement at scale: our Krippendorff's alpha beside the krippendorff package.

    .venv/bin/python benchmarks/agreement.py [--units 1000000] [--repeats 3] [--seed 0]

Both implementations get the same seeded nominal ratings (units x 3 coders, 10% of
ratings missing) in the same process; each is timed as the best of --repeats runs, and
both alpha values are printed so a reader can see they agree. Timings on a shared
machine wander, so the load average is printed too. No Django is needed.

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
import os
import sys
import time
from importlib import metadata
from pathlib import Path

import krippendorff
import numpy as np

# The project replaces this script's directory on sys.path: benchmarks/queue.py would
# shadow the standard library's queue module, which Django imports (--study).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402
from coding.agreement.alpha import krippendorff_alpha  # noqa: E402

CODERS = 3
CATEGORIES = 5
MISSING = 0.10


def nominal_ratings(units, seed):
    """Ratings (units x coders) with some real agreement: each coder copies a unit's
    true category 70% of the time and otherwise picks one at random."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, CATEGORIES, size=(units, 1))
    guess = rng.integers(0, CATEGORIES, size=(units, CODERS))
    ratings = np.where(rng.random((units, CODERS)) < 0.7, truth, guess).astype(float)
    ratings[rng.random((units, CODERS)) < MISSING] = np.nan
    return ratings


def best_of(repeats, function):
    """Fastest wall-clock time of ``repeats`` calls, and the last call's result."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def compare_alpha(ratings, repeats):
    ours_seconds, ours = best_of(repeats, lambda: krippendorff_alpha(ratings, "nominal"))
    # The package takes (coders, units); the transpose is a view, not a copy.
    theirs_seconds, theirs = best_of(
        repeats, lambda: krippendorff.alpha(ratings.T, level_of_measurement="nominal"))
    print(f"krippendorff_alpha, nominal, {ratings.shape[0]:,} units x {ratings.shape[1]} coders, "
          f"{np.isnan(ratings).mean():.1%} missing, best of {repeats}")
    print(f"  ours                  {ours_seconds:8.3f} s   alpha = {ours:.12f}")
    print(f"  krippendorff.alpha    {theirs_seconds:8.3f} s   alpha = {float(theirs):.12f}")
    print(f"  ratio (theirs / ours) {theirs_seconds / ours_seconds:8.2f}x   "
          f"|difference| = {abs(ours - float(theirs)):.1e}")
    if abs(ours - float(theirs)) > 1e-9:  # a correctness check, never a timing one
        sys.exit("our alpha differs from the krippendorff package's")


def describe_machine():
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"krippendorff {metadata.version('krippendorff')}, "
          f"{os.cpu_count()} cpus, load average {load}")


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
            read_seconds, (groups, n_codings, _) = best_of(
                1, lambda: reliability._independent(study, questions))
            report_seconds, report = best_of(1, lambda: reliability.study_report(study))
            reference_seconds, _ = best_of(1, lambda: reference_alphas(spec, columns, items))
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
    parser.add_argument("--units", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--study", action="store_true",
                        help="also time a full study report (needs Django and a database)")
    parser.add_argument("--items", type=int, default=100_000, help="items in that study")
    args = parser.parse_args()
    describe_machine()
    compare_alpha(nominal_ratings(args.units, args.seed), args.repeats)
    if args.study:
        scratch = use_scratch_database("agreement")
        try:
            time_study_report(args.items, args.seed)
        finally:
            drop_scratch_database(scratch)


if __name__ == "__main__":
    main()

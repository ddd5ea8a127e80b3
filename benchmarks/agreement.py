"""Agreement at scale: our Krippendorff's alpha beside the krippendorff package.

    .venv/bin/python benchmarks/agreement.py [--units 1000000] [--repeats 3] [--seed 0]

Both implementations get the same seeded nominal ratings (units x 3 coders, 10% of
ratings missing) in the same process; each is timed as the best of --repeats runs, and
both alpha values are printed so a reader can see they agree. Timings on a shared
machine wander, so the load average is printed too. No Django is needed.
"""

import argparse
import os
import sys
import time
from importlib import metadata
from pathlib import Path

import krippendorff
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding.agreement import krippendorff_alpha  # noqa: E402

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


def describe_machine():
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"krippendorff {metadata.version('krippendorff')}, "
          f"{os.cpu_count()} cpus, load average {load}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    describe_machine()
    compare_alpha(nominal_ratings(args.units, args.seed), args.repeats)
    # Each later figure (the full-study report timing) is added here as its own
    # function, measured beside its own in-run reference.


if __name__ == "__main__":
    main()

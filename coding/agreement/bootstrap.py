"""A bootstrap interval for Krippendorff's alpha that stays fast on a study's whole sample.

Pure numpy, no Django, like coding.agreement.alpha, whose encoding, pairing and distance
helpers it reuses so alpha is defined in one place.

Why not ``agreement.bootstrap_ci``: it recomputes alpha on every resample and draws
all resampled row numbers at once, ``n_boot x units`` integers (800 MB for 100,000
units). Alpha depends on the data only through the coincidence matrix, and a unit
adds to that matrix according to the multiset of values it holds, whichever coder
gave which. So units are grouped by that multiset (a "pattern"; a nominal question
with two coders has at most a few dozen), resampling units with replacement is the
same as drawing how many units of each pattern (a multinomial draw), and each
resample's coincidence matrix is one sparse product. Same distribution as resampling
rows, a small fraction of the work.
"""

import numpy as np
from scipy import sparse

from coding.agreement import alpha as agreement

# Resamples handled in one sparse product: bounds memory at about 16 MB of matrices.
CELLS_PER_BATCH = 2_000_000


def alpha_interval(ratings, level="nominal", confidence=0.95, n_boot=1000, seed=0,
                   distance=None):
    """Percentile bootstrap interval (low, high) of Krippendorff's alpha over units.

    ``ratings`` and ``level`` as for ``agreement.krippendorff_alpha``. Resamples on
    which alpha is undefined are left out; (nan, nan) when all of them are. ``distance``:
    a matrix of squared distances between category codes 0..q-1 (the ratings are then
    those codes, level nominal), for a distance no level defines.
    """
    patterns = _patterns(ratings, level)
    if patterns is not None and distance is not None:
        used = np.asarray(patterns.coded.labels, dtype=np.int64)
        patterns.distance = np.asarray(distance, dtype=float)[np.ix_(used, used)]
    if patterns is None:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(patterns.n_units, patterns.counts / patterns.n_units, size=n_boot)
    alphas = patterns.alphas(draws)
    alphas = alphas[~np.isnan(alphas)]
    if alphas.size == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2
    low, high = np.quantile(alphas, [tail, 1 - tail])
    return float(low), float(high)


def subset_intervals(codes, labels, level, subsets, confidence=0.95, n_boot=1000, seed=0,
                     distance=None):
    """[(alpha, low, high)] of the units each boolean mask of ``subsets`` picks from
    ``codes`` (encoded as ``agreement._alpha_of_codes`` takes them: codes index ``labels``,
    -1 where missing), NaN where undefined. The drift's windows: the units' patterns and
    their contributions to the coincidence matrix are found once for every subset; a
    subset is then its count of units per pattern (its alpha) and ``n_boot`` multinomial
    draws from those counts (its interval), seeded alike for each subset. The same alpha
    and the same distribution of resamples as alpha_interval on the subset alone.

    ``subsets`` may instead be one integer array, each unit's subset number (-1 for
    none), for subsets that do not overlap (the drift's windows): the result is then for
    subsets 0 to the largest number, and every subset's counts come from one pass over
    the units instead of one pass per subset."""
    codes = np.asarray(codes, dtype=np.int64)
    numbered = isinstance(subsets, np.ndarray) and subsets.dtype.kind in "iu"
    if numbered:
        subsets = subsets.astype(np.int64)
        how_many = int(subsets.max()) + 1 if subsets.size else 0
    else:
        how_many = len(subsets)
    pairable = (codes >= 0).sum(axis=1) >= 2
    nothing = (float("nan"),) * 3
    if not pairable.any():
        return [nothing for _ in range(how_many)]
    if distance is None:
        coded = agreement._coded_for_level(agreement._Coded(codes[pairable], list(labels)),
                                           level, list(labels))
    else:
        coded = agreement._Coded(codes[pairable], list(range(len(distance))))
    patterns = _Patterns(coded, "nominal" if distance is not None else level)
    if distance is not None:
        patterns.distance = np.asarray(distance, dtype=float)
    tail = (1 - confidence) / 2
    found = []
    # Each unit's pattern, one past the last for a unit that is not pairable: a subset's
    # counts are then one selection and one count, whatever the size of the rest.
    pattern_of = np.full(len(codes), len(patterns.counts), dtype=np.int64)
    pattern_of[pairable] = patterns.inverse
    width = len(patterns.counts) + 1
    if numbered:
        chosen = subsets >= 0
        every = np.bincount(subsets[chosen] * width + pattern_of[chosen],
                            minlength=how_many * width).reshape(how_many, width)
        subset_counts = (row[:-1] for row in every)
    else:
        subset_counts = (np.bincount(pattern_of[np.asarray(mask)], minlength=width)[:-1]
                         for mask in subsets)
    for counts in subset_counts:
        # Only the patterns the subset holds: a resample draws from nothing else.
        rows = np.flatnonzero(counts)
        counts = counts[rows]
        n = int(counts.sum())
        if n == 0:
            found.append(nothing)
            continue
        alpha = float(patterns.alphas(counts[None, :], rows)[0])
        draws = np.random.default_rng(seed).multinomial(n, counts / n, size=n_boot)
        alphas = patterns.alphas(draws, rows)
        alphas = alphas[~np.isnan(alphas)]
        low, high = (np.quantile(alphas, [tail, 1 - tail]) if alphas.size
                     else (float("nan"), float("nan")))
        found.append((alpha, float(low), float(high)))
    return found


class _Patterns:
    """Each distinct multiset of values among the units, its count, and its contribution
    to the coincidence matrix (a row of ``contributions``, categories x categories)."""

    def __init__(self, coded, level):
        self.level = level
        self.coded = coded
        self.distance = None
        size = coded.n_categories
        rows, self.counts, self.inverse = _distinct_rows(np.sort(coded.codes, axis=1), size)
        self.n_units = int(self.counts.sum())
        weight = 1.0 / np.maximum((rows >= 0).sum(axis=1) - 1, 1)
        pattern, cell, value = [], [], []
        for first, second, unit in agreement._unit_pairs(rows):
            for a, b in ((first, second), (second, first)):
                pattern.append(unit)
                cell.append(a * size + b)
                value.append(weight[unit])
        self.contributions = sparse.csr_matrix(
            (np.concatenate(value), (np.concatenate(pattern), np.concatenate(cell))),
            shape=(len(rows), size * size))

    def alphas(self, draws, rows=None):
        """Alpha for each row of ``draws`` (units of each pattern in one resample; of the
        patterns ``rows`` only, when given)."""
        if self.level != "ordinal":
            return self._linear_alphas(draws, rows)
        size = self.coded.n_categories
        contributions = self.contributions if rows is None else self.contributions[rows]
        batch = max(1, CELLS_PER_BATCH // (size * size))
        return np.concatenate([self._alphas(draws[start:start + batch], contributions)
                               for start in range(0, len(draws), batch)])

    def _linear_alphas(self, draws, rows=None):
        """Where the distances do not depend on the resample (every level but ordinal): a
        resample's observed disagreement is its pattern counts times each pattern's own
        (one product), and its category totals its counts times each pattern's totals,
        so no categories x categories matrix is built per resample (a 300-value number
        question has 90,000 cells)."""
        if not hasattr(self, "_per_pattern"):
            size = self.coded.n_categories
            distance = (self.distance if self.distance is not None
                        else agreement._distances(self.coded, self.level, None))
            coo = self.contributions.tocoo()
            totals = sparse.csr_matrix((coo.data, (coo.row, coo.col % size)),
                                       shape=(self.contributions.shape[0], size))
            self._per_pattern = (self.contributions @ np.ravel(distance), totals.tocsr(),
                                 distance)
        observed_per_pattern, pattern_totals, distance = self._per_pattern
        if rows is not None:
            observed_per_pattern, pattern_totals = observed_per_pattern[rows], pattern_totals[rows]
        draws = np.asarray(draws, dtype=float)
        observed = draws @ observed_per_pattern
        # A pattern holds at most as many categories as coders: a sparse product.
        totals = np.asarray((pattern_totals.T @ draws.T).T)
        n_pairable = totals.sum(axis=1)
        expected = ((totals @ distance) * totals).sum(axis=1)  # a matrix product, in BLAS
        with np.errstate(divide="ignore", invalid="ignore"):
            alphas = 1 - (n_pairable - 1) * observed / expected
        alphas[(expected == 0) | (n_pairable == 0)] = np.nan
        return alphas

    def _alphas(self, draws, contributions):
        size = self.coded.n_categories
        matrices = np.asarray((sparse.csr_matrix(draws) @ contributions).todense())
        matrices = matrices.reshape(len(draws), size, size)
        totals = matrices.sum(axis=1)
        n_pairable = totals.sum(axis=1)
        if self.level == "ordinal":  # ordinal distances depend on each resample's totals
            distances = np.stack([agreement._ordinal_distances(t) for t in totals])
        else:
            distance = (self.distance if self.distance is not None
                        else agreement._distances(self.coded, self.level, None))
            distances = np.broadcast_to(distance, matrices.shape)
        observed = np.einsum("bij,bij->b", matrices, distances)
        expected = np.einsum("bi,bij,bj->b", totals, distances, totals)
        # alpha = 1 - (n - 1) * sum(o * d) / sum(n_c * n_k * d), as in agreement.
        with np.errstate(divide="ignore", invalid="ignore"):
            alphas = 1 - (n_pairable - 1) * observed / expected
        alphas[(expected == 0) | (n_pairable == 0)] = np.nan
        return alphas


def _patterns(ratings, level):
    coded = agreement._coded_for_level(agreement._encode(ratings), level, None)
    pairable = (coded.codes >= 0).sum(axis=1) >= 2
    if not pairable.any():
        return None
    # Units with fewer than two values add nothing to alpha; resample the ones that count.
    return _Patterns(agreement._Coded(coded.codes[pairable], coded.labels), level)


def _distinct_rows(rows, size):
    """Distinct rows and their counts. Sorting a unit's values made units with the same
    multiset identical rows; each row is read as one number where that fits in 62 bits
    (np.unique on rows compares them column by column, several times slower)."""
    base = size + 1
    if rows.shape[1] * np.log2(base) >= 62:
        distinct, inverse, counts = np.unique(rows, axis=0, return_inverse=True,
                                              return_counts=True)
        return distinct, counts, inverse.reshape(-1)
    keys = (rows + 1) @ (base ** np.arange(rows.shape[1], dtype=np.int64))
    _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True,
                                          return_counts=True)
    return rows[first], counts, inverse.reshape(-1)

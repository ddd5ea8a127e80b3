"""Chance-corrected agreement coefficients beyond alpha, with bootstrap intervals. Pure numpy.

Every coefficient here is a function of how many units show each distinct row of
ratings (a "pattern": which coder gave which category). So the ratings are read once
into their patterns, a coefficient takes a vector of pattern counts, and a bootstrap
resample of units is a multinomial draw of those counts: each figure's interval costs
a few matrix products, whatever the number of units.

Definitions follow Gwet, K. L. (2014), Handbook of Inter-Rater Reliability, 4th ed.
(missing ratings as there: observed agreement over units with two or more ratings,
category shares over units with at least one), with agreement weights ``w`` (1 on the
diagonal, 0 <= w <= 1 elsewhere; the identity is the unweighted coefficient):

- observed  p_a = mean over units of sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)),
  r*_ik = sum_l w_kl r_il
- Fleiss    p_e = sum_kl w_kl pi_k pi_l                       (Fleiss 1971)
- Gwet AC2  p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k)     (AC1 when w = I)
- Brennan-Prediger  p_e = T_w / q^2                          (Brennan & Prediger 1981)
- Conger    p_e = mean over pairs of coders g != h of sum_kl w_kl p_gk p_hl (Conger 1980;
  p_gk the share of coder g's ratings in k); Cohen's kappa for two coders.

Two coders, over the units both coded (Byrt, Bishop & Carlin 1993): PABAK
(q p_a - 1) / (q - 1) (2 p_a - 1 for two categories), and, for two categories with
table [[a, b], [c, d]] of n units, the bias index (b - c) / n and the prevalence index
(a - d) / n. Stuart-Maxwell's test of marginal homogeneity (Stuart 1955, Maxwell 1970)
comes from statsmodels.
"""

import warnings

import numpy as np

WEIGHTINGS = ("identity", "linear", "quadratic")


def agreement_weights(size, weights=None):
    """The q x q agreement weights: None/'identity', 'linear', 'quadratic' (by category
    position, 1 - |k - l| / (q - 1) and 1 - (k - l)^2 / (q - 1)^2, as irrCAC), or a
    matrix, checked: square of the categories' size, 1 on the diagonal, within [0, 1]."""
    if weights is None or (isinstance(weights, str) and weights == "identity"):
        return np.eye(size)
    if isinstance(weights, str):
        if weights not in WEIGHTINGS:
            raise ValueError(f"unknown weights {weights!r}; use None, 'linear', 'quadratic' "
                             "or a square matrix of agreement weights")
        position = np.arange(size)
        gap = np.abs(position[:, None] - position[None, :]) / max(size - 1, 1)
        return 1 - (gap if weights == "linear" else gap ** 2)
    matrix = np.asarray(weights, dtype=float)
    if matrix.shape != (size, size):
        raise ValueError(f"the weight matrix must be {size} x {size} (one row and column per "
                         f"category); got {matrix.shape}")
    if not np.allclose(np.diag(matrix), 1):
        raise ValueError("the weight matrix must have 1 on its diagonal (full agreement)")
    if (matrix < 0).any() or (matrix > 1).any() or np.isnan(matrix).any():
        raise ValueError("agreement weights must lie between 0 and 1")
    return matrix


class Patterns:
    """Units grouped by their row of codes. ``codes[unit, coder]`` in 0..q-1, -1 missing."""

    def __init__(self, codes, size):
        codes = np.asarray(codes, dtype=np.int64)
        rated = (codes >= 0).any(axis=1)
        if codes.size and rated.any():
            self.rows, self.counts = _distinct_rows(codes[rated], size)
        else:
            self.rows = np.zeros((0, codes.shape[1] if codes.ndim == 2 else 0), np.int64)
            self.counts = np.zeros(0, np.int64)
        self.size = size
        present = self.rows >= 0
        n_patterns, n_coders = self.rows.shape
        self.per_unit = present.sum(axis=1)
        self.by_coder = np.zeros((n_patterns, n_coders, size))
        pattern, coder = np.nonzero(present)
        self.by_coder[pattern, coder, self.rows[pattern, coder]] = 1
        self.per_category = self.by_coder.sum(axis=1)  # r_ik
        self.present = present.astype(float)

    @property
    def n_units(self):
        return int(self.counts.sum())

    def resamples(self, n_boot, seed):
        """Pattern counts of ``n_boot`` resamples of the units (with replacement)."""
        rng = np.random.default_rng(seed)
        if self.n_units == 0:
            return np.zeros((n_boot, 0))
        return rng.multinomial(self.n_units, self.counts / self.n_units, size=n_boot)


def _distinct_rows(rows, size):
    """np.unique(rows, axis=0, return_counts=True), the same rows in the same order: each
    row read as one number, its first column the most significant digit (base size + 1,
    -1 the digit 0), so the numbers sort as the rows do. np.unique on rows compares them
    column by column: at 100,000 units about 40 times slower. Rows too wide for 62 bits
    are left to it."""
    base = size + 1
    if not rows.shape[1] or rows.shape[1] * np.log2(base) >= 62 or (rows >= size).any():
        return np.unique(rows, axis=0, return_counts=True)
    powers = base ** np.arange(rows.shape[1] - 1, -1, -1, dtype=np.int64)
    _, first, counts = np.unique((rows + 1) @ powers, return_index=True, return_counts=True)
    return rows[first], counts


def _ratio(top, bottom):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)


def observed(p, counts, w):
    """p_a for each row of ``counts`` (resamples x patterns)."""
    r = p.per_unit.astype(float)
    starred = p.per_category @ w.T
    pairable = r >= 2
    per_unit = np.zeros(len(r))
    per_unit[pairable] = ((p.per_category * (starred - 1)).sum(axis=1)[pairable]
                          / (r[pairable] * (r[pairable] - 1)))
    return _ratio(counts @ per_unit, counts @ pairable.astype(float))


def shares(p, counts):
    """pi_k for each resample: category shares averaged over units with a rating."""
    r = np.maximum(p.per_unit, 1).astype(float)
    return _ratio(counts @ (p.per_category / r[:, None]), (counts @ np.ones(len(r)))[:, None])


def _coefficient(pa, pe):
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (pa - pe) / (1 - pe)
    return np.where(np.isclose(pe, 1), np.nan, value)


def fleiss(p, counts, w):
    pi = shares(p, counts)
    return _coefficient(observed(p, counts, w), np.einsum("bk,kl,bl->b", pi, w, pi))


def gwet(p, counts, w):
    q = p.size
    if q < 2:
        return np.full(len(counts), np.nan)
    pi = shares(p, counts)
    pe = w.sum() / (q * (q - 1)) * (pi * (1 - pi)).sum(axis=1)
    return _coefficient(observed(p, counts, w), pe)


def brennan_prediger(p, counts, w):
    q = p.size
    if q < 2:
        return np.full(len(counts), np.nan)
    return _coefficient(observed(p, counts, w), np.full(len(counts), w.sum() / q ** 2))


def conger(p, counts, w):
    """Conger's kappa over the coders who rated anything (Cohen's for two)."""
    n_coders = p.rows.shape[1]
    rated = counts @ p.present  # resamples x coders: units each coder rated
    by_coder = np.einsum("bp,pgk->bgk", counts, p.by_coder)
    share = _ratio(by_coder, rated[:, :, None])
    share = np.nan_to_num(share)
    active = (rated > 0).sum(axis=1).astype(float)
    total = share.sum(axis=1)
    across = np.einsum("bk,kl,bl->b", total, w, total) - np.einsum("bgk,kl,bgl->b", share, w, share)
    pe = _ratio(across, active * (active - 1))
    value = _coefficient(observed(p, counts, w), pe)
    return np.where(active >= 2, value, np.nan) if n_coders else value


# --- two coders, the units both coded ---------------------------------------------

def table(p, counts):
    """q x q tables (first coder in rows) of the units both coders rated, per resample."""
    both = (p.rows >= 0).all(axis=1)
    cells = np.zeros((len(p.rows), p.size * p.size))
    cells[np.flatnonzero(both), p.rows[both, 0] * p.size + p.rows[both, 1]] = 1
    return (counts @ cells).reshape(len(counts), p.size, p.size)


def pabak(p, counts):
    tables = table(p, counts)
    n = tables.sum(axis=(1, 2))
    po = _ratio(np.trace(tables, axis1=1, axis2=2), n)
    q = p.size
    return (q * po - 1) / (q - 1) if q >= 2 else np.full(len(counts), np.nan)


def bias_index(p, counts):
    tables = table(p, counts)
    return _ratio(tables[:, 0, 1] - tables[:, 1, 0], tables.sum(axis=(1, 2)))


def prevalence_index(p, counts):
    tables = table(p, counts)
    return _ratio(tables[:, 0, 0] - tables[:, 1, 1], tables.sum(axis=(1, 2)))


def load_statsmodels():
    """Import the part of statsmodels the report uses (about a second of CPU). Imported
    where it is used, so that web requests and commands that never test a table do not
    pay for it; the Celery worker calls this when it starts (workbench.celery), so that a
    worker's first agreement job does not pay for it either."""
    from statsmodels.stats.contingency_tables import SquareTable

    return SquareTable


def stuart_maxwell(square):
    """(statistic, degrees of freedom, p) of Stuart-Maxwell's test on a q x q table; None
    when fewer than two categories were used by either coder."""
    SquareTable = load_statsmodels()

    square = np.asarray(square, dtype=float)
    if (square.sum(axis=0) + square.sum(axis=1) > 0).sum() < 2:
        return None
    # A category no unit disagreed on adds nothing to the differences of margins and
    # only zeros to their covariance, which it would make singular: it is left out (the
    # generalised-inverse statistic, with one degree of freedom fewer).
    off = square.sum(axis=1) + square.sum(axis=0) - 2 * np.diag(square)
    if not off.any():  # every unit agreed: the margins are equal, nothing to test
        return {"statistic": 0.0, "df": 0, "p": 1.0}
    square = square[off > 0][:, off > 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a singular matrix is handled below
        result = SquareTable(square, shift_zeros=False).homogeneity(method="stuart_maxwell")
    if np.isfinite(result.statistic):
        return {"statistic": float(result.statistic), "df": int(result.df),
                "p": float(result.pvalue)}
    return _stuart_maxwell_generalised(square)


def _stuart_maxwell_generalised(square):
    """Stuart-Maxwell with the generalised inverse of the margins' covariance, for tables
    whose disagreements fall into separate groups of categories (categories 1 and 2
    confused with each other, 3 and 4 with each other, never across): the matrix is then
    singular once per group beyond the first, and dropping one category (statsmodels)
    cannot invert it. The statistic is the sum of each group's own test, with one degree
    of freedom fewer than the group's categories for each group."""
    from scipy.stats import chi2

    rows, columns = square.sum(axis=1), square.sum(axis=0)
    difference = rows - columns
    covariance = -(square + square.T)
    np.fill_diagonal(covariance, rows + columns - 2 * np.diag(square))
    df = int(np.linalg.matrix_rank(covariance))
    statistic = float(difference @ np.linalg.pinv(covariance) @ difference)
    return {"statistic": statistic, "df": df, "p": float(chi2.sf(statistic, df))}


# --- what the report asks for ------------------------------------------------------

def with_interval(function, p, n_boot, seed, confidence, *args):
    """{value, low, high}: the coefficient on the data and its percentile bootstrap
    interval over resampled units (undefined resamples left out); None where undefined."""
    value = float(function(p, p.counts[None, :].astype(float), *args)[0])
    if value != value:
        return {"value": None, "low": None, "high": None}
    draws = function(p, _float_resamples(p, n_boot, seed), *args)
    draws = draws[~np.isnan(draws)]
    if not draws.size:
        return {"value": value, "low": None, "high": None}
    tail = (1 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1 - tail])
    return {"value": value, "low": float(low), "high": float(high)}


def _float_resamples(p, n_boot, seed):
    """p.resamples(n_boot, seed) as floats, drawn once per Patterns: every coefficient of
    a question is measured on the same seeded resamples, which drawing them again for each
    (a tenth of the report's time at 100,000 units) only repeated. Read-only, as shared."""
    kept = p.__dict__.setdefault("_resamples", {})
    if (n_boot, seed) not in kept:
        draws = p.resamples(n_boot, seed).astype(float)
        draws.flags.writeable = False
        kept[(n_boot, seed)] = draws
    return kept[(n_boot, seed)]


def point(function, codes, size, *args):
    """A coefficient on plain codes (the public functions in coding.agreement.alpha)."""
    p = Patterns(codes, size)
    return float(function(p, p.counts[None, :].astype(float), *args)[0])

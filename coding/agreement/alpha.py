"""Inter-rater agreement: pure functions on numpy, no Django, usable from a notebook.

Input
    ``ratings`` is a 2-D array-like of shape (units, coders): one row per item, one
    column per coder. ``None`` or NaN marks a unit a coder did not code. Values are
    category labels (strings or numbers) or, for multiple-choice questions, sets of
    labels (``set``, ``frozenset``, ``list`` or ``tuple``; order and repeats inside a
    set do not matter). A numpy array of text cannot hold a missing value (numpy turns
    NaN into the string ``"nan"``), so pass text with gaps as a list or an object array.

    ``categories`` (where accepted) lists the allowed labels. Every rating must be one
    of them. For ordinal data and weighted kappa it gives their order; for Gwet's AC1
    and Brennan-Prediger it gives the number of categories offered, which those
    coefficients depend on (otherwise the categories actually used are counted).

Output
    Each metric returns a float. Where a metric is undefined for the data (no unit has
    two ratings, every rating is the same value, ...) it returns NaN and emits an
    ``UndefinedAgreementWarning`` (a ``RuntimeWarning``) whose message gives the reason;
    turn it into an error with ``warnings.simplefilter("error", UndefinedAgreementWarning)``.
    Invalid input raises ``ValueError`` naming the problem.

Missing data
    ``krippendorff_alpha`` uses every unit with two or more ratings, as Krippendorff
    defines it. ``percent_agreement``, ``fleiss_kappa``, ``gwet_ac1`` and
    ``brennan_prediger`` follow Gwet (Handbook of Inter-Rater Reliability, 4th ed.):
    observed agreement over units with two or more ratings, category shares over units
    with at least one. Without missing data ``fleiss_kappa`` is Fleiss (1971).
    ``cohen_kappa`` and ``scott_pi`` take two coders and the units both coded.

Speed
    Values are encoded to integer codes once: a numeric numpy array by counting when
    its values are whole numbers over a modest range (category codes), else with
    ``np.unique``; text, mixed or set-valued ratings with one dict lookup per value and
    one look at each distinct value (one Python pass when sets come as lists). Agreement
    is then counted over the pairs of ratings within each unit with ``np.bincount``; the
    only loop there runs over the offset between two ratings of one unit (at most
    coders - 1 times), never over units. Set distances (MASI, Jaccard) are computed
    between distinct sets only.
"""

import functools
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = [
    "UndefinedAgreementWarning",
    "percent_agreement",
    "cohen_kappa",
    "scott_pi",
    "fleiss_kappa",
    "gwet_ac1",
    "brennan_prediger",
    "gwet_ac2",
    "conger_kappa",
    "pabak",
    "bias_index",
    "prevalence_index",
    "stuart_maxwell",
    "krippendorff_alpha",
    "bootstrap_ci",
    "masi_distance",
    "jaccard_distance",
]

LEVELS = ("nominal", "ordinal", "interval", "ratio", "masi", "jaccard")
SET_LEVELS = ("masi", "jaccard")
SET_TYPES = (set, frozenset, list, tuple)


class UndefinedAgreementWarning(RuntimeWarning):
    """A metric returned NaN because it is undefined for these ratings."""


def _undefined(reason):
    warnings.warn(f"agreement is undefined: {reason}", UndefinedAgreementWarning, stacklevel=3)
    return float("nan")


# ---------------------------------------------------------------------------
# Reading ratings into integer codes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Coded:
    """Ratings as integer codes: ``codes[unit, coder]`` indexes ``labels``, -1 is missing."""

    codes: np.ndarray
    labels: list

    @property
    def n_categories(self):
        return len(self.labels)


def _as_table(ratings):
    """Return ``ratings`` as a 2-D numpy array (numeric, text or object) or raise ValueError."""
    if isinstance(ratings, np.ndarray):
        table = ratings
    elif hasattr(ratings, "to_numpy"):  # a pandas DataFrame keeps its numeric dtype
        table = ratings.to_numpy()
    else:
        table = _object_table(ratings)
    if table.ndim != 2:
        raise ValueError(f"ratings must be 2-D (units, coders); got shape {table.shape}")
    return table


def _object_table(ratings):
    # np.array sees a list-valued set as one more dimension, so it only serves when
    # every value is a scalar or a set; otherwise fill the table value by value.
    try:
        table = np.array(ratings, dtype=object)
    except ValueError:
        table = None
    if table is not None and table.ndim == 2:
        return table
    rows = [_row(row) for row in ratings]
    widths = {len(row) for row in rows}
    if len(widths) > 1:
        raise ValueError(f"ratings rows have different lengths: {sorted(widths)}")
    table = np.empty((len(rows), widths.pop() if rows else 0), dtype=object)
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            table[i, j] = value
    return table


def _row(row):
    if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
        raise ValueError(f"ratings must be 2-D (units, coders); got a row {row!r}")
    return list(row)


def _is_missing(value):
    if value is None or type(value).__name__ in ("NAType", "NaTType"):  # pandas' markers
        return True
    return isinstance(value, (float, np.floating)) and value != value


def _encode(ratings, categories=None):
    """Encode ratings to integer codes; with ``categories`` the codes index them."""
    table = _as_table(ratings)
    numeric_categories = categories is None or all(_is_number(c) for c in categories)
    if table.dtype.kind in "fiub" and numeric_categories:
        return _encode_numbers(table.astype(float, copy=False), categories)
    if table.dtype.kind in "US":
        if (table == "nan").any():
            raise ValueError("ratings hold the text 'nan' (numpy's rendering of a missing value "
                             "in a text array); pass a list or an object array with None")
        table = table.astype(object)
    return _encode_objects(table.astype(object, copy=False), categories)


def _encode_numbers(table, categories):
    coded = _count_whole_table(table) if categories is None else None
    if coded is not None:
        return coded
    present = ~np.isnan(table)
    values = table[present]
    labels = np.unique(values) if categories is None else _distinct(np.asarray(categories, float))
    # Categories come in the caller's order, so look values up through a sorted view.
    order = np.argsort(labels, kind="stable")
    position = np.searchsorted(labels[order], values).clip(max=max(len(labels) - 1, 0))
    known = labels[order][position] == values if len(labels) else np.zeros(len(values), bool)
    if not known.all():
        raise ValueError(f"rating {values[~known][0]!r} is not one of the categories")
    codes = np.full(table.shape, -1, dtype=np.int64)
    codes[present] = order[position]
    return _Coded(codes, labels.tolist())


def _count_whole_table(table):
    """_encode_numbers' result, found by counting over the whole table at once (no copy of
    the present values, no lookup when every whole number of the range is used) for whole
    numbers over a range not much wider than the table: category codes, the usual input.
    None for anything else, which the general path encodes."""
    if not table.size:
        return None
    with np.errstate(invalid="ignore"):
        low, high = np.fmin.reduce(table, axis=None), np.fmax.reduce(table, axis=None)
    if not (-2.0**52 < low <= high < 2.0**52) or high - low > max(4 * table.size, 1024):
        return None  # NaN (nothing rated) fails the first test
    missing = np.isnan(table)
    shifted = table - low
    with np.errstate(invalid="ignore"):
        codes = shifted.astype(np.int64)
    if np.count_nonzero(codes != shifted) != np.count_nonzero(missing):  # NaN: never equal
        return None
    codes[missing] = -1
    used = np.bincount((codes + 1).ravel())[1:] > 0
    labels = (np.flatnonzero(used) + low).tolist()
    if not used.all():
        codes = np.where(codes >= 0, (np.cumsum(used) - 1)[codes], -1)
    return _Coded(codes, labels)


def _encode_objects(table, categories):
    coded = _encode_hashable(table)
    if coded is None:
        coded = _encode_each(table)
    _check_one_kind(coded.labels)
    return coded if categories is None else _recode_to_categories(coded, categories)


def _encode_hashable(table):
    """The fast path: one dict lookup per rating, then each distinct value read once (a
    missing marker, a set to turn into a frozenset, or a label). None when a rating is
    unhashable (a list or a set), which _encode_each reads one by one."""
    flat = table.ravel().tolist()
    try:
        seen = {value: code for code, value in enumerate(dict.fromkeys(flat))}
    except TypeError:
        return None
    index = {}
    remap = np.empty(len(seen), dtype=np.int64)
    for value, code in seen.items():
        if _is_missing(value):
            remap[code] = -1
            continue
        if isinstance(value, SET_TYPES):
            value = frozenset(value)
        try:
            remap[code] = index.setdefault(value, len(index))
        except TypeError:  # a tuple holding something unhashable
            return None
    codes = remap[np.fromiter(map(seen.__getitem__, flat), np.int64, len(flat))]
    return _Coded(codes.reshape(table.shape), list(index))


def _encode_each(table):
    index = {}
    flat = []
    for value in table.flat:
        if _is_missing(value):
            flat.append(-1)
            continue
        if isinstance(value, SET_TYPES):
            value = frozenset(value)
        try:
            flat.append(index.setdefault(value, len(index)))
        except TypeError:
            raise ValueError(f"rating {value!r} is neither a label nor a set of labels") from None
    return _Coded(np.array(flat, dtype=np.int64).reshape(table.shape), list(index))


def _check_one_kind(labels):
    kinds = {isinstance(label, frozenset) for label in labels}
    if len(kinds) > 1:
        raise ValueError("ratings mix sets of labels with single labels")


def _recode_to_categories(coded, categories):
    categories = _distinct(list(categories))
    if coded.labels and isinstance(coded.labels[0], frozenset):
        # Sets keep their own codes; their members must be categories.
        allowed = set(categories)
        for label in coded.labels:
            if not label <= allowed:
                raise ValueError(f"rating {set(label)!r} has labels not in the categories: "
                                 f"{sorted(map(repr, label - allowed))}")
        return coded
    position = {category: i for i, category in enumerate(categories)}
    for label in coded.labels:
        if label not in position:
            raise ValueError(f"rating {label!r} is not one of the categories")
    remap = np.array([position[label] for label in coded.labels] + [-1], dtype=np.int64)
    return _Coded(remap[coded.codes], list(categories))


def _distinct(categories):
    seen = set()
    for category in categories:
        if category in seen:
            raise ValueError(f"categories list {category!r} twice")
        seen.add(category)
    return categories


def _is_number(value):
    return isinstance(value, numbers.Real) and not _is_missing(value)


def _is_set_valued(coded):
    return bool(coded.labels) and isinstance(coded.labels[0], frozenset)


def _reject_sets(coded, what):
    if _is_set_valued(coded):
        raise ValueError(f"{what} takes single labels, not sets; use krippendorff_alpha "
                         "with level='masi' or 'jaccard' for multiple-choice ratings")


def _ordered(coded, categories, what):
    """Codes ranked in label order: the order of ``categories`` if given, else numbers sorted.

    Text labels have no order we could trust ("high" < "low" alphabetically), so
    without categories they are refused.
    """
    if categories is not None:
        return coded
    if not all(_is_number(label) for label in coded.labels):
        raise ValueError(f"{what} needs categories to give the order of text labels")
    order = np.argsort(np.asarray(coded.labels, dtype=float), kind="stable")
    rank = np.empty(len(order) + 1, dtype=np.int64)
    rank[order] = np.arange(len(order))
    rank[-1] = -1
    return _Coded(rank[coded.codes], [coded.labels[i] for i in order])


def _two_coders(codes, what):
    if codes.shape[1] != 2:
        raise ValueError(f"{what} takes exactly two coders; got {codes.shape[1]}")


# ---------------------------------------------------------------------------
# Counting pairs of ratings within units
# ---------------------------------------------------------------------------


def _ratings_per_unit(codes):
    return (codes >= 0).sum(axis=1)


def _unit_pairs(codes):
    """Every unordered pair of ratings of one unit, as arrays (first, second, unit).

    Ratings are laid out unit by unit; pairing each rating with the one ``gap`` places
    later in the same unit, for each gap, yields every pair exactly once.
    """
    n_coders = codes.shape[1]
    flat = codes.ravel()
    where = np.flatnonzero(flat >= 0)
    unit = where // max(n_coders, 1)
    value = flat[where]
    for gap in range(1, n_coders):
        same = unit[gap:] == unit[:-gap]
        if not same.any():
            break
        yield value[:-gap][same], value[gap:][same], unit[gap:][same]


def _coincidences(codes, n_categories):
    """Krippendorff's coincidence matrix: ordered pairs of values within units, each pair
    weighted 1/(m - 1) for a unit with m ratings.

    Three ways, one matrix (up to the order of floating-point sums; tests/coding/agreement/
    test_fast_paths.py checks them against each other): few coders and categories (the
    usual question), the units' distinct patterns of ratings are counted in one pass and
    each pattern's pairs weighed by how many units have it; few categories, each unit's
    count of each value; else pair by pair."""
    units, coders = codes.shape
    base = n_categories + 1
    if units and coders and coders * np.log2(base) <= np.log2(max(units, PATTERNS_AT_LEAST)):
        return _coincidences_by_patterns(codes, n_categories)
    if units and base <= COUNTS_PER_RATING * coders:
        return _coincidences_by_counts(codes, n_categories)
    return _coincidences_by_pairs(codes, n_categories)


# The patterns path counts (categories + 1) ** coders possible patterns: it is taken while
# they are no more than the units, or this many.
PATTERNS_AT_LEAST = 4096
# The counts path's table holds units x (categories + 1) numbers; it is taken while that is
# at most this many times the ratings' table (units x coders).
COUNTS_PER_RATING = 4


def _coincidences_by_patterns(codes, n_categories):
    """Each unit's ratings read as one number (base categories + 1, missing the digit 0),
    counted with one bincount; then the distinct patterns' coincidences, each weighed by
    how many units share it. Linear in the units with a handful of passes."""
    units, coders = codes.shape
    base = n_categories + 1
    ids = np.zeros(units, dtype=np.int64)
    for column in range(coders):
        ids *= base
        ids += codes[:, column]
        ids += 1
    frequency = np.bincount(ids, minlength=base ** coders)
    present = np.flatnonzero(frequency)
    rows = present[:, None] // base ** np.arange(coders - 1, -1, -1, dtype=np.int64) % base - 1
    return _coincidences_by_counts(rows, n_categories, frequency[present])


def _coincidences_by_counts(codes, n_categories, units_alike=None):
    """o = sum over units of (n_u n_u' - diag(n_u)) / (m_u - 1), n_u the unit's count of
    each value: one bincount over the ratings (missing ones in a column of their own) and
    one matrix product, however many coders; no pair is ever listed. `units_alike`: how
    many units each row stands for (1 each by default)."""
    units, coders = codes.shape
    width = n_categories + 1
    # Column 0 of each unit's counts is its missing ratings (code -1), then the values.
    index = codes + (np.arange(units, dtype=np.int64) * width + 1)[:, None]
    counts = np.bincount(index.ravel(), minlength=units * width).reshape(units, width)
    per_unit = coders - counts[:, 0]
    counts = counts[:, 1:].astype(float)
    weight = np.where(per_unit >= 2, 1.0 / np.maximum(per_unit - 1, 1), 0.0)
    if units_alike is not None:
        weight = weight * units_alike
    weighted = counts * weight[:, None]
    return weighted.T @ counts - np.diag(weighted.sum(axis=0))


def _coincidences_by_pairs(codes, n_categories):
    per_unit = _ratings_per_unit(codes)
    weight = 1.0 / np.maximum(per_unit - 1, 1)
    counts = np.zeros(n_categories * n_categories)
    for first, second, unit in _unit_pairs(codes):
        counts += np.bincount(first * n_categories + second, weights=weight[unit],
                              minlength=n_categories * n_categories)
    matrix = counts.reshape(n_categories, n_categories)
    return matrix + matrix.T


def _observed_agreement(codes):
    """Mean over units with two or more ratings of the share of their pairs that agree."""
    per_unit = _ratings_per_unit(codes)
    agreeing = np.zeros(len(codes))
    for first, second, unit in _unit_pairs(codes):
        agreeing += np.bincount(unit, weights=first == second, minlength=len(codes))
    pairable = per_unit >= 2
    if not pairable.any():
        return None
    pairs = per_unit[pairable] * (per_unit[pairable] - 1) / 2
    return float(np.mean(agreeing[pairable] / pairs))


def _category_shares(codes, n_categories):
    """Each category's share of the ratings, averaged over units with at least one rating."""
    per_unit = _ratings_per_unit(codes)
    rated = codes >= 0
    unit = np.nonzero(rated)[0]
    shares = np.bincount(codes[rated], weights=1.0 / per_unit[unit], minlength=n_categories)
    return shares / max(np.count_nonzero(per_unit), 1)


def _confusion_table(codes, n_categories):
    both = (codes >= 0).all(axis=1)
    first, second = codes[both, 0], codes[both, 1]
    counts = np.bincount(first * n_categories + second, minlength=n_categories * n_categories)
    return counts.reshape(n_categories, n_categories).astype(float)


# ---------------------------------------------------------------------------
# Coefficients
# ---------------------------------------------------------------------------


def percent_agreement(ratings):
    """Share of agreeing pairs of ratings per unit, averaged over units with two or more ratings.

    Sets agree only when identical.
    """
    coded = _encode(ratings)
    observed = _observed_agreement(coded.codes)
    if observed is None:
        return _undefined("no unit has two or more ratings")
    return observed


def _nominal(ratings, categories, what):
    coded = _encode(ratings, categories)
    _reject_sets(coded, what)
    return coded


def fleiss_kappa(ratings):
    """Fleiss' kappa (1971) for any number of coders; chance from the pooled category shares."""
    coded = _nominal(ratings, None, "fleiss_kappa")
    observed = _observed_agreement(coded.codes)
    if observed is None:
        return _undefined("no unit has two or more ratings")
    shares = _category_shares(coded.codes, coded.n_categories)
    expected = float(np.sum(shares ** 2))
    if expected >= 1 - 1e-12:
        return _undefined("all ratings fall in one category")
    return (observed - expected) / (1 - expected)


def gwet_ac1(ratings, categories=None):
    """Gwet's AC1 (2008); chance agreement sum(pi_k (1 - pi_k)) / (q - 1) over q categories."""
    coded = _nominal(ratings, categories, "gwet_ac1")
    observed = _observed_agreement(coded.codes)
    if observed is None:
        return _undefined("no unit has two or more ratings")
    if coded.n_categories < 2:
        return _undefined("AC1 needs at least two categories; pass categories if more "
                          "were offered")
    shares = _category_shares(coded.codes, coded.n_categories)
    # At most 1/q, so the denominator below is never zero.
    expected = float(np.sum(shares * (1 - shares)) / (coded.n_categories - 1))
    return (observed - expected) / (1 - expected)


def brennan_prediger(ratings, categories=None):
    """Brennan and Prediger's (1981) kappa: chance agreement 1/q over q categories."""
    coded = _nominal(ratings, categories, "brennan_prediger")
    observed = _observed_agreement(coded.codes)
    if observed is None:
        return _undefined("no unit has two or more ratings")
    if coded.n_categories < 2:
        return _undefined("Brennan-Prediger needs at least two categories; pass categories "
                          "if more were offered")
    expected = 1 / coded.n_categories
    return (observed - expected) / (1 - expected)


def scott_pi(ratings):
    """Scott's pi (1955) for two coders over the units both coded."""
    coded = _nominal(ratings, None, "scott_pi")
    _two_coders(coded.codes, "scott_pi")
    both = coded.codes[(coded.codes >= 0).all(axis=1)]
    if len(both) == 0:
        return _undefined("no unit was coded by both coders")
    return fleiss_kappa(both)


def cohen_kappa(ratings, weights=None, categories=None):
    """Cohen's kappa (1960) for two coders over the units both coded.

    ``weights`` "linear" or "quadratic" gives weighted kappa (Cohen 1968) with
    disagreement |i - j| or (i - j)**2 between category positions i and j: positions
    in ``categories`` or, for numbers, in their sorted order. A square matrix gives
    your own agreement weights (Cohen 1968: 1 on the diagonal, 0 to 1 elsewhere; row
    and column i are the i-th category in that same order); disagreement is 1 - weight.
    """
    custom = weights is not None and not isinstance(weights, str)
    if not custom and weights not in (None, "linear", "quadratic"):
        raise ValueError(f"unknown weights {weights!r}; use None, 'linear', 'quadratic' "
                         "or a square matrix of agreement weights")
    coded = _nominal(ratings, categories, "cohen_kappa")
    _two_coders(coded.codes, "cohen_kappa")
    if weights is not None:
        coded = _ordered(coded, categories, "weighted kappa")
    table = _confusion_table(coded.codes, coded.n_categories)
    if table.sum() == 0:
        return _undefined("no unit was coded by both coders")
    position = np.arange(coded.n_categories)
    gap = np.abs(position[:, None] - position[None, :])
    if custom:
        from coding.agreement.coefficients import agreement_weights
        disagreement = 1 - agreement_weights(coded.n_categories, weights)
    else:
        disagreement = {None: gap > 0, "linear": gap, "quadratic": gap ** 2}[weights]
    observed = table / table.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    expected_disagreement = float(np.sum(disagreement * expected))
    if expected_disagreement == 0:
        return _undefined("both coders used one and the same category for every unit")
    return 1 - float(np.sum(disagreement * observed)) / expected_disagreement


def _weighted(ratings, weights, categories, what):
    """(codes, size, agreement weight matrix) for the coefficients of
    coding.agreement.coefficients; linear, quadratic or a matrix need the order."""
    from coding.agreement.coefficients import agreement_weights

    coded = _nominal(ratings, categories, what)
    if weights is not None and not (isinstance(weights, str) and weights == "identity"):
        coded = _ordered(coded, categories, f"{what} with weights")
    return coded.codes, coded.n_categories, agreement_weights(coded.n_categories, weights)


def _coefficient(name, function, codes, size, *args):
    from coding.agreement import coefficients as rc

    if not ((codes >= 0).sum(axis=1) >= 2).any():
        return _undefined("no unit has two or more ratings")
    value = rc.point(getattr(rc, function), codes, size, *args)
    if value != value:
        return _undefined(f"{name} is undefined for these ratings (one category only, or "
                          "chance agreement is total)")
    return value


def gwet_ac2(ratings, weights=None, categories=None):
    """Gwet's AC2 (Gwet 2014, Handbook, ch. 4): AC1 with agreement weights, any number of
    coders. ``weights`` None (AC1), "linear", "quadratic" or a q x q agreement matrix in
    the order of ``categories`` (numbers: sorted)."""
    codes, size, w = _weighted(ratings, weights, categories, "gwet_ac2")
    if size < 2:
        return _undefined("AC2 needs at least two categories; pass categories if more "
                          "were offered")
    return _coefficient("AC2", "gwet", codes, size, w)


def conger_kappa(ratings, weights=None, categories=None):
    """Conger's (1980) kappa for any number of coders: chance agreement from each coder's
    own category shares, averaged over pairs of coders (Cohen's kappa for two coders on
    complete data). Weights as for gwet_ac2."""
    codes, size, w = _weighted(ratings, weights, categories, "conger_kappa")
    return _coefficient("Conger's kappa", "conger", codes, size, w)


def _two_coder_index(ratings, categories, what, function, two_categories=False):
    from coding.agreement import coefficients as rc

    coded = _nominal(ratings, categories, what)
    _two_coders(coded.codes, what)
    if not (coded.codes >= 0).all(axis=1).any():
        return _undefined("no unit was coded by both coders")
    if two_categories and coded.n_categories != 2:
        return _undefined(f"{what} is defined for two categories; got {coded.n_categories}")
    return rc.point(getattr(rc, function), coded.codes, coded.n_categories)


def pabak(ratings, categories=None):
    """Prevalence- and bias-adjusted kappa (Byrt, Bishop & Carlin 1993) for two coders:
    2 p_o - 1 for two categories, (q p_o - 1) / (q - 1) for q."""
    return _two_coder_index(ratings, categories, "pabak", "pabak")


def bias_index(ratings, categories=None):
    """Byrt et al. (1993) bias index (b - c) / n of a 2 x 2 table [[a, b], [c, d]], the first
    coder in rows and the categories in the order of ``categories`` (numbers: sorted;
    text: as first met): how far the coders' shares of the first category differ."""
    if categories is None:
        coded = _nominal(ratings, None, "bias_index")
        if all(_is_number(label) for label in coded.labels):
            categories = sorted(coded.labels)
    return _two_coder_index(ratings, categories, "bias_index", "bias_index", True)


def prevalence_index(ratings, categories=None):
    """Byrt et al. (1993) prevalence index (a - d) / n of the 2 x 2 table, ordered as for
    bias_index."""
    if categories is None:
        coded = _nominal(ratings, None, "prevalence_index")
        if all(_is_number(label) for label in coded.labels):
            categories = sorted(coded.labels)
    return _two_coder_index(ratings, categories, "prevalence_index", "prevalence_index", True)


def stuart_maxwell(ratings, categories=None):
    """Stuart-Maxwell test of marginal homogeneity for two coders over the units both coded:
    {statistic, df, p} (statsmodels' SquareTable.homogeneity), or None when fewer than two
    categories were used. A small p says one coder leans to some categories more than the
    other does (McNemar's test for two categories)."""
    from coding.agreement.coefficients import stuart_maxwell as test

    coded = _nominal(ratings, categories, "stuart_maxwell")
    _two_coders(coded.codes, "stuart_maxwell")
    return test(_confusion_table(coded.codes, coded.n_categories))


# ---------------------------------------------------------------------------
# Krippendorff's alpha
# ---------------------------------------------------------------------------


def krippendorff_alpha(ratings, level="nominal", categories=None):
    """Krippendorff's alpha over all units with two or more ratings.

    ``level`` chooses the distance between two values: "nominal", "ordinal" (ranks,
    from ``categories`` or sorted numbers), "interval", "ratio" (non-negative numbers),
    or, for set-valued ratings, "masi" (Passonneau 2006) or "jaccard".
    alpha = 1 - (n - 1) * sum(o * d) / sum(n_c * n_k * d) on the coincidence matrix o.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")
    return _alpha(_coded_for_level(_encode(ratings, categories), level, categories), level)


def _alpha_of_codes(codes, labels, level="nominal"):
    """krippendorff_alpha of ratings already encoded: ``codes[unit, coder]`` indexes
    ``labels`` (-1 where missing), which are numbers for interval and ratio, sets for
    masi and jaccard, and in rank order for ordinal. Labels no code uses change nothing."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {', '.join(LEVELS)}")
    coded = _Coded(np.asarray(codes, dtype=np.int64), list(labels))
    return _alpha(_coded_for_level(coded, level, coded.labels), level)


def _alpha_with_distances(codes, distance):
    """Alpha of codes into ``len(distance)`` labels with a given matrix of squared
    distances between them (symmetric, 0 on the diagonal)."""
    distance = np.asarray(distance, dtype=float)
    coded = _Coded(np.asarray(codes, dtype=np.int64), list(range(len(distance))))
    return _alpha(coded, "nominal", distance)


def _alpha(coded, level, distance=None):
    if distance is None:
        def distance(totals):
            return _distances(coded, level, totals)
    return alpha_of_coincidences(_coincidences(coded.codes, coded.n_categories), distance)


def alpha_of_coincidences(matrix, distance):
    """Alpha from a coincidence matrix (``_coincidences``) and the squared distances
    between its categories: a matrix, or a function of the categories' totals giving one
    (the ordinal distance depends on them). The coincidences are sums over units, so a
    matrix kept and updated unit by unit gives the alpha of every unit without reading
    them again (coding.agreement.estimates)."""
    totals = matrix.sum(axis=0)
    n_pairable = totals.sum()
    if n_pairable == 0:
        return _undefined("no unit has two or more ratings")
    if callable(distance):
        distance = distance(totals)
    expected = float(np.sum(np.outer(totals, totals) * distance))
    if expected == 0:
        return _undefined("every pairable rating has the same value, so there is no "
                          "variation to agree on")
    return float(1 - (n_pairable - 1) * np.sum(matrix * distance) / expected)


def _coded_for_level(coded, level, categories):
    if level in SET_LEVELS:
        if coded.labels and not _is_set_valued(coded):
            raise ValueError(f"level {level!r} takes set-valued ratings; got the single label "
                             f"{coded.labels[0]!r}")
        return coded
    _reject_sets(coded, f"level {level!r}")
    if level == "ordinal":
        return _ordered(coded, categories, "the ordinal level")
    if level in ("interval", "ratio"):
        _check_numbers(coded, level)
    return coded


def _check_numbers(coded, level):
    for label in coded.labels:
        if not _is_number(label):
            raise ValueError(f"level {level!r} takes numbers; got {label!r}")
        if level == "ratio" and label < 0:
            raise ValueError(f"level 'ratio' takes non-negative numbers; got {label!r}")


def _distances(coded, level, totals):
    """Squared difference between every two categories, as Krippendorff's delta metrics."""
    size = coded.n_categories
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "ordinal":
        return _ordinal_distances(totals)
    if level in SET_LEVELS:
        return _set_distances(coded.labels, level)
    values = np.asarray(coded.labels, dtype=float)
    difference = values[:, None] - values[None, :]
    if level == "interval":
        return difference ** 2
    total = values[:, None] + values[None, :]
    ratio = np.divide(difference, total, out=np.zeros_like(difference), where=total != 0)
    return ratio ** 2


def _ordinal_distances(totals):
    # (sum of n_g for g from c to k, minus half of n_c and n_k) squared, c <= k.
    cumulative = np.cumsum(totals)
    index = np.arange(len(totals))
    low = np.minimum(index[:, None], index[None, :])
    high = np.maximum(index[:, None], index[None, :])
    between = cumulative[high] - cumulative[low] + totals[low]
    return (between - (totals[low] + totals[high]) / 2) ** 2


# Set distances are asked for again and again for one question's sets (its alpha, each
# coder pair, each bootstrap batch): the last few tables are kept, up to this many sets
# each (8 MB a table), read-only.
CACHED_SETS = 1024


def _set_distances(sets, level):
    if len(sets) > CACHED_SETS:
        return _set_distance_table(sets, level)
    return _cached_set_distances(tuple(sets), level)


@functools.lru_cache(maxsize=4)
def _cached_set_distances(sets, level):
    table = _set_distance_table(sets, level)
    table.setflags(write=False)
    return table


def _set_distance_table(sets, level):
    """MASI or Jaccard distance between every two distinct sets, from a membership matrix.

    Same results as ``masi_distance`` / ``jaccard_distance`` pair by pair, without a
    Python call per pair (a multiple-choice question can yield hundreds of distinct sets).
    """
    column = {member: i for i, member in enumerate(dict.fromkeys(m for s in sets for m in s))}
    membership = np.zeros((len(sets), len(column)))
    for row, labels in enumerate(sets):
        membership[row, [column[member] for member in labels]] = 1
    common = membership @ membership.T
    size = membership.sum(axis=1)
    union = size[:, None] + size[None, :] - common
    # Two empty sets are identical: similarity 1.
    jaccard = np.divide(common, union, out=np.ones_like(common), where=union > 0)
    if level == "jaccard":
        return 1 - jaccard
    identical = (common == size[:, None]) & (common == size[None, :])
    nested = common == np.minimum(size[:, None], size[None, :])
    monotonicity = np.select([identical, nested, common > 0], [1, 2 / 3, 1 / 3], 0)
    return 1 - jaccard * monotonicity


def jaccard_distance(first, second):
    """1 - |A and B| / |A or B|; two empty sets are identical (distance 0)."""
    first, second = frozenset(first), frozenset(second)
    union = len(first | second)
    return 0.0 if union == 0 else 1 - len(first & second) / union


def masi_distance(first, second):
    """MASI distance (Passonneau 2006): 1 - J * M, J the Jaccard similarity.

    M (monotonicity) is 1 for identical sets, 2/3 when one is a subset of the other,
    1/3 when they overlap otherwise, 0 when disjoint. (NLTK rounds these to 0.67 and
    0.33; the exact fractions are used here.)
    """
    first, second = frozenset(first), frozenset(second)
    if first == second:
        return 0.0
    if first <= second or second <= first:
        monotonicity = 2 / 3
    elif first & second:
        monotonicity = 1 / 3
    else:
        monotonicity = 0.0
    return 1 - (1 - jaccard_distance(first, second)) * monotonicity


# ---------------------------------------------------------------------------
# Confidence intervals
# ---------------------------------------------------------------------------


def bootstrap_ci(metric, ratings, level=0.95, n_boot=1000, seed=0, **kwargs):
    """Percentile bootstrap interval (low, high) of ``metric(ratings, **kwargs)``.

    Units (rows) are resampled with replacement, ``n_boot`` times, from a seeded
    generator, so the same call gives the same interval. Resamples on which the metric
    is undefined are left out, with a warning saying how many.

    ``level`` here is the confidence level, so alpha's level of measurement cannot be
    passed through ``kwargs``; bind it instead:
    ``bootstrap_ci(functools.partial(krippendorff_alpha, level="interval"), ratings)``.
    """
    if isinstance(level, str):
        raise ValueError(f"level is the confidence level (e.g. 0.95), not {level!r}; for "
                         "alpha's level of measurement pass functools.partial("
                         f"krippendorff_alpha, level={level!r}) as the metric")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1; got {level!r}")
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive whole number; got {n_boot!r}")
    table = _as_table(ratings)
    # One call on all the data first, so invalid input fails the same way every time
    # instead of only in the resamples that happen to draw the offending unit.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedAgreementWarning)
        metric(table, **kwargs)
        estimates = _resampled(metric, table, int(n_boot), seed, kwargs)
    defined = estimates[~np.isnan(estimates)]
    if defined.size == 0:
        nan = _undefined(f"the metric is undefined on all {len(estimates)} resamples")
        return nan, nan
    if defined.size < estimates.size:
        warnings.warn(f"{estimates.size - defined.size} of {estimates.size} resamples were "
                      "undefined and left out of the interval", UndefinedAgreementWarning,
                      stacklevel=2)
    tail = (1 - level) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return float(low), float(high)


def _resampled(metric, table, n_boot, seed, kwargs):
    rng = np.random.default_rng(seed)
    n_units = len(table)
    if n_units == 0:
        return np.full(n_boot, np.nan)
    rows = rng.integers(0, n_units, size=(n_boot, n_units))
    return np.array([metric(table[sample], **kwargs) for sample in rows], dtype=float)

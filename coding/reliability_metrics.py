"""One question's agreement from its ratings: pure numpy over coding.agreement, no Django.

coding.reliability turns a study's independent codings into one ``Variable`` per
question; ``measure`` returns everything the report shows about it, as plain JSON
values (floats, None where a metric is undefined, with the reason beside it).
"""

import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from . import agreement
from .bootstrap import alpha_interval
from .sample_size import verdict

# Past this many distinct values a confusion table is too big to read.
MAX_TABLE = 30
CONFIDENCE = 0.95


@dataclass
class Variable:
    """One question's values within a round.

    ``codes[unit, coder]`` indexes ``labels`` (option values, numbers, or frozensets of
    options); -1 where the coder gave no value: the question did not apply to them,
    they left it unanswered, or they did not code the unit. ``decided[unit]`` is the
    current decision's code, -1 where there is none. For interval and ratio levels
    ``numbers[label]`` is the number a label stands for, NaN for an option such as
    "not reported", which then counts for percent agreement but not for alpha.
    """

    level: str
    labels: list
    codes: np.ndarray
    coders: list
    decided: np.ndarray | None = None
    numbers: np.ndarray | None = None
    options: list = field(default_factory=list)

    @property
    def is_sets(self):
        return self.level in agreement.SET_LEVELS

    def pairable(self):
        """Only units with two or more values, and only coders who gave one of them."""
        rows = (self.codes >= 0).sum(axis=1) >= 2
        columns = (self.codes[rows] >= 0).any(axis=0)
        return replace(self, codes=self.codes[rows][:, columns],
                       coders=[c for c, keep in zip(self.coders, columns) if keep],
                       decided=None if self.decided is None else self.decided[rows])

    def coded(self, codes=None):
        """``codes`` and the labels they index as alpha reads them at this level: numbers
        for interval and ratio (where an option such as "not reported" is no value), sets
        for MASI, else positions in the labels' order."""
        codes = self.codes if codes is None else codes
        if self.numbers is None:
            return codes, self.labels if self.is_sets else range(len(self.labels))
        keep = ~np.isnan(self.numbers)
        position = np.append(np.where(keep, np.cumsum(keep) - 1, -1), -1)
        return position[codes], self.numbers[keep].tolist()

    def for_alpha(self, codes=None):
        """``codes`` as the metrics take them at this level (NaN or None where missing)."""
        codes = self.codes if codes is None else codes
        present = codes >= 0
        if self.is_sets:
            table = np.full(codes.shape, None, dtype=object)
            table[present] = _object_array(self.labels)[codes[present]]
            return table
        if self.numbers is not None:
            return np.where(present, self.numbers[np.maximum(codes, 0)], np.nan)
        return np.where(present, codes, np.nan).astype(float)


def measure(variable, n_boot=1000, seed=0):
    """The question's agreement over its reliability units (units with two or more values)."""
    v = variable.pairable()
    result = {"units": len(v.codes), "coders": len(v.coders),
              "values": int((v.codes >= 0).sum()), "undefined": {}}
    result["percent_agreement"] = _metric(result, "percent_agreement",
                                          agreement.percent_agreement, _as_float(v.codes))
    result["kappa"] = _kappa(v, result)
    result["alpha"] = _alpha(v, result, n_boot, seed)
    result["categories"] = _options(v) if v.is_sets else _categories(v)
    result["confusion"] = None if v.is_sets else _table(v.labels, v.codes, _pairs)
    result["coder_pairs"] = _coder_pairs(v)
    result["against_decisions"] = _against_decisions(v)
    return result


# --- the headline figures --------------------------------------------------------------

def _metric(result, name, function, *args, **kwargs):
    """The metric's value, or None with the reason recorded under result['undefined']."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", agreement.UndefinedAgreementWarning)
        value = function(*args, **kwargs)
    if value != value:
        reasons = [str(w.message) for w in caught
                   if issubclass(w.category, agreement.UndefinedAgreementWarning)]
        result["undefined"][name] = reasons[0] if reasons else "undefined"
        return None
    return float(value)


def _kappa(v, result):
    """Cohen's kappa when exactly two coders coded the units; Fleiss' kappa for more."""
    if v.is_sets:
        return {"name": None, "value": None,
                "note": "not defined for sets of options; alpha uses the MASI distance"}
    if len(v.coders) < 2:
        return {"name": None, "value": None, "note": "needs two coders"}
    if len(v.coders) == 2:
        value = _metric(result, "kappa", agreement.cohen_kappa, _as_float(v.codes))
        return {"name": "Cohen's kappa", "value": value, "note": ""}
    value = _metric(result, "kappa", agreement.fleiss_kappa, _as_float(v.codes))
    partial = not (v.codes >= 0).all()
    return {"name": "Fleiss' kappa", "value": value,
            "note": f"{len(v.coders)} coders, not all on every unit" if partial else ""}


def _alpha(v, result, n_boot, seed):
    value = _metric(result, "alpha", agreement._alpha_of_codes, *v.coded(), v.level)
    low = high = None
    if value is not None:
        low, high = (None if x != x else x for x in
                     alpha_interval(v.for_alpha(), v.level, CONFIDENCE, n_boot, seed))
    return {"value": value, "low": low, "high": high, "level": v.level,
            "verdict": verdict(value), "confidence": CONFIDENCE, "resamples": n_boot}


# --- per category, per coder ---------------------------------------------------------

def _pairs(codes, size):
    """Pooled coder-against-coder table: each pair of values of one unit from two coders,
    counted once in each direction, so the table is symmetric and agreements sit on the
    diagonal (twice each)."""
    # Values first in each row (missing sorts last), so pairs are taken column by column.
    ranked = np.sort(np.where(codes >= 0, codes, size), axis=1)
    table = np.zeros(size * size, dtype=np.int64)
    width = ranked.shape[1]
    for i in range(width):
        for j in range(i + 1, width):
            both = ranked[:, j] < size
            a, b = ranked[both, i], ranked[both, j]
            table += np.bincount(a * size + b, minlength=size * size)
            table += np.bincount(b * size + a, minlength=size * size)
    return table.reshape(size, size)


def _categories(v):
    """Per category: how often used, specific agreement, and alpha for 'this or not'."""
    size = len(v.labels)
    if size > MAX_TABLE:
        return []
    pairs = _pairs(v.codes, size)
    used = np.bincount(v.codes[v.codes >= 0], minlength=size)
    alphas = _binary_alphas(v.codes, size)
    return [_category(v.labels[k], used[k], used.sum(), pairs[k, k], pairs[k].sum(), alphas[k])
            for k in range(size)]


def _options(v):
    """Multiple choice: per option, agreement on whether it was chosen."""
    rows = []
    present = v.codes >= 0
    for option in v.options:
        # One more entry, False, for code -1 (no value), which indexes the last.
        chosen = np.array([option in label for label in v.labels] + [False])
        binary = np.where(present, chosen[v.codes], -1).astype(np.int64)
        pairs = _pairs(binary, 2)
        rows.append(_category(option, int((binary == 1).sum()), int(present.sum()),
                              pairs[1, 1], pairs[1].sum(), _binary_alphas(binary, 2)[1]))
    return rows


def _binary_alphas(codes, size):
    """Per category k, nominal alpha of "k or not k" (NaN where undefined): from the
    coincidence matrix o of all categories, since the binary matrix has o_kk, o_k,not-k =
    n_k - o_kk and n_not-k = n - n_k, so alpha = 1 - (n - 1) o_k,not-k / (n_k n_not-k).
    The same value as agreement.krippendorff_alpha on the binary ratings, without a pass
    over the ratings per category."""
    matrix = agreement._coincidences(codes, size)
    totals = matrix.sum(axis=0)
    n = totals.sum()
    expected = totals * (n - totals)
    with np.errstate(divide="ignore", invalid="ignore"):
        alphas = 1 - (n - 1) * (totals - np.diag(matrix)) / expected
    alphas[expected == 0] = np.nan
    return alphas


def _category(label, n, total, agreeing_ends, all_ends, alpha):
    return {"value": _json_label(label), "label": display(label), "n": int(n),
            "share": float(n / total) if total else None,
            # Fleiss (1975) specific agreement: 2a / (2a + b + c) for this category.
            "specific_agreement": float(agreeing_ends / all_ends) if all_ends else None,
            "alpha": float(alpha) if n and alpha == alpha else None}


def _coder_pairs(v):
    rows = []
    for i in range(len(v.coders)):
        for j in range(i + 1, len(v.coders)):
            both = (v.codes[:, i] >= 0) & (v.codes[:, j] >= 0)
            if both.any():
                rows.append({"a": v.coders[i], "b": v.coders[j],
                             **_two_columns(v, v.codes[both][:, [i, j]])})
    return rows


def _against_decisions(v):
    if v.decided is None:
        return []
    rows = []
    for i, coder in enumerate(v.coders):
        both = (v.codes[:, i] >= 0) & (v.decided >= 0)
        if both.any():
            codes = np.column_stack([v.codes[both, i], v.decided[both]])
            row = {"coder": coder, **_two_columns(v, codes)}
            row["confusion"] = None if v.is_sets else _table(v.labels, codes, _cross)
            rows.append(row)
    return rows


def _two_columns(v, codes):
    result = {"undefined": {}}
    alpha = _metric(result, "alpha", agreement._alpha_of_codes, *v.coded(codes), v.level)
    return {"units": len(codes), "percent_agreement": float(np.mean(codes[:, 0] == codes[:, 1])),
            "alpha": alpha}


def _cross(codes, size):
    """Rows: the coder's value; columns: the decision."""
    counts = np.bincount(codes[:, 0] * size + codes[:, 1], minlength=size * size)
    return counts.reshape(size, size)


def _table(labels, codes, count):
    """A confusion table, `count(codes, size)`, over the labels that occur in `codes`; None
    when none do or too many to read. Counted over those labels alone: a question with
    thousands of distinct values allocates nothing to find it has no table."""
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(labels)))
    if not 0 < len(used) <= MAX_TABLE:
        return None
    position = np.full(len(labels) + 1, -1, dtype=np.int64)  # the last one for code -1
    position[used] = np.arange(len(used))
    return {"labels": [display(labels[k]) for k in used],
            "counts": count(position[codes], len(used)).tolist()}


# --- labels ------------------------------------------------------------------------

def display(label):
    if isinstance(label, frozenset):
        return " + ".join(sorted(map(str, label))) or "(none)"
    if isinstance(label, float) and label.is_integer():
        return str(int(label))
    return str(label)


def _json_label(label):
    return sorted(label) if isinstance(label, frozenset) else label


def _as_float(codes):
    return np.where(codes >= 0, codes, np.nan).astype(float)


def _object_array(values):
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        array[i] = value
    return array

"""One question's agreement from its ratings: pure numpy over coding.agreement.alpha, no Django.

coding.agreement.reliability turns a study's independent codings into one ``Variable`` per
question; ``measure`` returns everything the report shows about it, as plain JSON
values (floats, None where a metric is undefined, with the reason beside it).
"""

import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from django.utils.translation import gettext, gettext_noop

from coding.agreement import alpha as agreement
from coding.agreement import coefficients as rc
from coding.agreement.bootstrap import alpha_interval, subset_intervals
from coding.agreement.sample_size import TENTATIVE, verdict

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
    # Per unit, who adjudicated the current decision (a coder's name), "" where the
    # decision was not adjudicated (unanimous, single, consensus) or there is none.
    adjudicated_by: np.ndarray | None = None
    # Per unit and coder, the id of the coding that gave the value (-1 where none), and
    # the drift's windows: [{first_id, last_id, from, to}] in submission order.
    coding_ids: np.ndarray | None = None
    windows: list = field(default_factory=list)
    # Per unit and coder, when that coding was submitted (seconds since the epoch, NaN
    # where none), and the calendar windows: {unit, windows: [{from, to, start, end}]}.
    submitted: np.ndarray | None = None
    calendar: dict | None = None

    @property
    def is_sets(self):
        return self.level in agreement.SET_LEVELS

    def pairable(self):
        """Only units with two or more values, and only coders who gave one of them."""
        rows = (self.codes >= 0).sum(axis=1) >= 2
        columns = (self.codes[rows] >= 0).any(axis=0)
        return replace(self, codes=self.codes[rows][:, columns],
                       coders=[c for c, keep in zip(self.coders, columns) if keep],
                       decided=None if self.decided is None else self.decided[rows],
                       adjudicated_by=(None if self.adjudicated_by is None
                                       else self.adjudicated_by[rows]),
                       coding_ids=(None if self.coding_ids is None
                                   else self.coding_ids[rows][:, columns]),
                       submitted=(None if self.submitted is None
                                  else self.submitted[rows][:, columns]))

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
    result["alpha_numbers"] = _alpha_numbers(v, result, n_boot, seed)
    result["included"] = _included(v)
    coefficients, two = _coefficients(v, result, n_boot, seed)
    result["coefficients"], result["two_coders"] = coefficients, two
    if coefficients and result["kappa"]["name"]:
        main = next(c for c in coefficients if c["name"] == result["kappa"]["name"])
        result["kappa"] |= {"low": main["low"], "high": main["high"]}
    result["categories"] = _options(v) if v.is_sets else _categories(v)
    result["confusion"] = None if v.is_sets else _table(v.labels, v.codes, _pairs)
    result["coder_pairs"] = _coder_pairs(v)
    result["against_decisions"] = _against_decisions(v)
    overall = result["alpha"]["value"] if result["alpha"] else None
    result["drift"] = _drift(v, seed, overall)
    result["drift_calendar"] = _drift_calendar(v, seed, overall)
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
    """Alpha on every answer. A number question with special answers ("not reported") is
    measured with the mixed distance (see mixed_distances), so a special answer against
    a number is a full disagreement instead of a value left out."""
    if v.numbers is not None and np.isnan(v.numbers).any():
        distance = mixed_distances(v.numbers, v.level)
        codes = v.codes
        value = _metric(result, "alpha", agreement._alpha_with_distances, codes, distance)
        ratings = np.where(codes >= 0, codes, np.nan).astype(float)
        interval = (alpha_interval(ratings, "nominal", CONFIDENCE, n_boot, seed,
                                   distance=distance) if value is not None else None)
        return _alpha_result(value, interval, "mixed", n_boot)
    value = _metric(result, "alpha", agreement._alpha_of_codes, *v.coded(), v.level)
    interval = (alpha_interval(v.for_alpha(), v.level, CONFIDENCE, n_boot, seed)
                if value is not None else None)
    return _alpha_result(value, interval, v.level, n_boot)


def alpha_distance(v):
    """The squared distances alpha on every answer (_alpha) measures `v` with, between its
    labels in their order: a matrix, or a function of the labels' totals giving one (the
    ordinal distance). What an alpha from kept coincidences needs (estimates.py)."""
    if v.numbers is not None and np.isnan(v.numbers).any():
        return mixed_distances(v.numbers, v.level)
    none = np.empty((0, 0), dtype=np.int64)
    coded = agreement._Coded(none, list(v.coded(none)[1]))
    return lambda totals: agreement._distances(coded, v.level, totals)


def _alpha_numbers(v, result, n_boot, seed):
    """Alpha over the numeric answers only (special answers left out), at the question's
    level: shown beside the alpha on every answer, labelled; None without special answers."""
    if v.numbers is None or not np.isnan(v.numbers).any():
        return None
    scratch = {"undefined": {}}
    value = _metric(scratch, "alpha", agreement._alpha_of_codes, *v.coded(), v.level)
    interval = (alpha_interval(v.for_alpha(), v.level, CONFIDENCE, n_boot, seed)
                if value is not None else None)
    numeric = ~np.isnan(v.numbers)
    kept = np.append(numeric, False)[v.codes]
    return _alpha_result(value, interval, v.level, n_boot) | {
        "units": int(((kept).sum(axis=1) >= 2).sum()),
        "left_out": int(((v.codes >= 0) & ~kept).sum()),
        "undefined": scratch["undefined"].get("alpha")}


def _alpha_result(value, interval, level, n_boot):
    low = high = None
    if interval is not None:
        low, high = (None if x != x else x for x in interval)
    return {"value": value, "low": low, "high": high, "level": level,
            "verdict": verdict(low), "point_verdict": verdict(value),
            "confidence": CONFIDENCE, "resamples": n_boot}


def mixed_distances(numbers, level):
    """Squared distances over labels that are numbers (``numbers[k]``) or special answers
    (NaN): between two numbers the level's distance scaled to at most 1 (interval: the
    squared difference over the squared range; ratio: ((x - y) / (x + y))^2, at most 1);
    between a special answer and any other answer 1, the largest; 0 for the same answer."""
    numbers = np.asarray(numbers, dtype=float)
    special = np.isnan(numbers)
    value = np.where(special, 0.0, numbers)
    difference = value[:, None] - value[None, :]
    if level == "ratio":
        total = value[:, None] + value[None, :]
        scaled = np.divide(difference, total, out=np.zeros_like(difference), where=total != 0) ** 2
    else:
        spread = np.ptp(value[~special]) if (~special).any() else 0.0
        scaled = (difference / spread) ** 2 if spread else np.zeros_like(difference)
    either = special[:, None] | special[None, :]
    distance = np.where(either, 1.0, scaled)
    np.fill_diagonal(distance, 0.0)
    return distance


def _included(v):
    """What the alpha counts, in words (the page shows it beside the figure)."""
    if v.numbers is not None and np.isnan(v.numbers).any():
        specials = ", ".join(display(label) for label, x in zip(v.labels, v.numbers) if x != x)
        return (f"All answers, special answers ({specials}) included: two numbers differ by "
                "their distance scaled to the widest gap, a special answer against any other "
                "answer is a full disagreement. Numbers only: the same at the "
                f"{v.level} level with the special answers left out.")
    if v.is_sets:
        return "All answers: sets of options, partial overlap credited (MASI)."
    return f"All answers, at the {v.level} level."


# --- the other coefficients, each with its interval ---------------------------------

def _coefficients(v, result, n_boot, seed):
    """[{key, name, value, low, high, weights}] and, for two coders, {pabak, bias_index,
    prevalence_index, stuart_maxwell}: chance-corrected coefficients for single-label
    questions with at most MAX_TABLE distinct answers (counted categories)."""
    if v.is_sets or len(v.coders) < 2:
        return [], None
    size = len(v.labels)
    if size > MAX_TABLE:
        result["undefined"]["coefficients"] = (
            f"{size} distinct answers: kappa-type coefficients treat each as a category, "
            "so they are computed for at most 30")
        return [], None
    p = rc.Patterns(v.codes, size)
    identity = np.eye(size)
    two = len(v.coders) == 2
    rows = []

    def add(key, name, function, w, weights="identity"):
        row = rc.with_interval(function, p, n_boot, seed, CONFIDENCE, w)
        rows.append({"key": key, "name": name, "weights": weights, **row})

    if two:
        add("cohen", "Cohen's kappa", rc.conger, identity)
        add("scott", "Scott's pi", rc.fleiss, identity)
    else:
        add("fleiss", "Fleiss' kappa", rc.fleiss, identity)
        add("conger", "Conger's kappa", rc.conger, identity)
    add("ac1", "Gwet's AC1", rc.gwet, identity)
    add("brennan_prediger", "Brennan-Prediger", rc.brennan_prediger, identity)
    if v.level in ("ordinal", "interval", "ratio") and size > 2:
        quadratic = rc.agreement_weights(size, "quadratic")
        add("ac2", "Gwet's AC2", rc.gwet, quadratic, "quadratic")
        add("weighted_kappa", "Cohen's weighted kappa" if two else "Conger's weighted kappa",
            rc.conger, quadratic, "quadratic")
    return rows, (_two_coder_figures(p, n_boot, seed) if two else None)


def _two_coder_figures(p, n_boot, seed):
    both = (p.rows >= 0).all(axis=1)
    figures = {"units": int(p.counts[both].sum()),
               "pabak": rc.with_interval(lambda p, c, *_: rc.pabak(p, c), p, n_boot, seed,
                                         CONFIDENCE)}
    if p.size == 2:
        for key in ("bias_index", "prevalence_index"):
            function = getattr(rc, key)
            figures[key] = rc.with_interval(lambda p, c, *_, f=function: f(p, c), p, n_boot,
                                            seed, CONFIDENCE)
    table = rc.table(p, p.counts[None, :].astype(float))[0]
    figures["stuart_maxwell"] = rc.stuart_maxwell(table)
    return figures


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


AGAINST_DECISIONS_RULE = gettext_noop(  # in English in the API; the page translates it
    "Only items whose current decision was made by an adjudicator other than this coder "
    "count: unanimous, single-coder and consensus decisions are the coders' own answers, "
    "and an item the coder adjudicated is decided by their own view, so comparing them "
    "would be circular.")


def _against_decisions(v):
    """Each coder against the decisions of others: only units adjudicated by someone
    other than the coder (AGAINST_DECISIONS_RULE); a coder with none is left out."""
    if v.decided is None or v.adjudicated_by is None:
        return []
    rows = []
    for i, coder in enumerate(v.coders):
        by_other = (v.adjudicated_by != "") & (v.adjudicated_by != coder)
        both = (v.codes[:, i] >= 0) & (v.decided >= 0) & by_other
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


# --- drift: each coder against the others, window by window --------------------------

DRIFT_RESAMPLES = 200  # each window: enough for a 95% bound to flag on, and cheap
FLAG_UNITS = 10  # fewer units than this: too few to flag anyone on
# The rules are stored in English with the report (the API's words); the page says them
# in the reader's language with rule_words.
_FLAG = gettext_noop(
    "A coder is flagged in a window of %(units)s or more units where that alpha's 95%% "
    "interval (%(resamples)s resamples of the window's units; none for multiple choice) lies "
    "wholly below the question's alpha over all coders and its lower bound below .667: a "
    "window no worse than the rest, or too small to tell, is never flagged.")
_AGAINST = gettext_noop(
    "alpha of the coder's value against the others' value, on the units the coder coded in "
    "that window where the other coders who coded the unit gave one value between them "
    "(units where they differ among themselves are left out; with two coders on a unit each "
    "is set against the other, so both move together).")
_BATCHES = gettext_noop(
    "Each coder against the others, batch by batch (batches of the round's codings of equal "
    "count, at least 40, in the order submitted):")
_CALENDAR = gettext_noop(
    "Each coder against the others, %(unit)s by %(unit)s (calendar %(units)s, UTC; the "
    "window is the smallest of day, week and month that divides the round's span of "
    "submissions into at most 26):")
CALENDAR_NAMES = {"day": (gettext_noop("day"), gettext_noop("days")),
                  "week": (gettext_noop("week"), gettext_noop("ISO weeks, Monday to Sunday")),
                  "month": (gettext_noop("month"), gettext_noop("months"))}


def drift_rule(unit=None, words=str):
    """The drift rule of batches (`unit` None) or of calendar windows of `unit`, its
    sentences passed through `words` (gettext for the reader's language)."""
    if unit is None:
        head = words(_BATCHES)
    else:
        head = words(_CALENDAR) % {"unit": words(CALENDAR_NAMES[unit][0]),
                                   "units": words(CALENDAR_NAMES[unit][1])}
    flag = words(_FLAG) % {"resamples": DRIFT_RESAMPLES, "units": FLAG_UNITS}
    return " ".join([head, words(_AGAINST), flag])


def rule_words(drift):
    """A stored drift's rule in the active language (the report keeps it in English)."""
    if not drift:
        return ""
    unit = drift.get("unit")
    return drift_rule(unit if unit in CALENDAR_NAMES else None, gettext)


DRIFT_RULE = drift_rule()


def _drift(v, seed, overall=None):
    """Batches of codings: {windows, coders: [{coder, flagged, points: [{window, units,
    percent_agreement, alpha, low, high, flag}]}], rule}; None without windows."""
    if v.coding_ids is None or not v.windows or len(v.coders) < 2:
        return None
    bounds = [(w["first_id"], w["last_id"] + 1) for w in v.windows]
    return {"windows": v.windows,
            "coders": _drift_coders(v, v.coding_ids, bounds, seed, overall),
            "rule": DRIFT_RULE}


def _drift_calendar(v, seed, overall=None):
    """Calendar windows (day, week or month): as _drift, with the window's unit."""
    if v.submitted is None or not v.calendar or len(v.coders) < 2:
        return None
    windows = v.calendar["windows"]
    bounds = [(w["start"], w["end"]) for w in windows]
    unit = v.calendar["unit"]
    return {"unit": unit, "windows": windows,
            "coders": _drift_coders(v, v.submitted, bounds, seed, overall),
            "rule": drift_rule(unit)}


def _drift_coders(v, when, bounds, seed, overall=None):
    """Per coder, one point per window [start, end) of `when` (a coding's id or time):
    the coder's values against the others' agreed value (_against_others), every
    window's interval from one set of unit patterns (bootstrap.subset_intervals). A point
    is flagged only where its interval lies below `overall` (the question's alpha over all
    coders) and its lower bound below .667 (_FLAG)."""
    coders = []
    for i, coder in enumerate(v.coders):
        pair = _against_others(v.codes, i)
        # Each unit's window, -1 where it has none or is not compared: the windows'
        # counts then come from one pass over the units, not one pass per window.
        window = _window_of(when[:, i], bounds)
        window[~(pair >= 0).all(axis=1)] = -1
        counted = window >= 0
        units = np.bincount(window[counted], minlength=len(bounds))
        alike = np.bincount(window[counted & (pair[:, 0] == pair[:, 1])], minlength=len(bounds))
        found = _window_alphas(v, pair, window, len(bounds), seed)
        points = []
        for w in np.flatnonzero(units).tolist():
            alpha, low, high = found[w]
            count = int(units[w])
            points.append({"window": w, "units": count,
                           "percent_agreement": float(alike[w] / units[w]),
                           "alpha": alpha, "low": low, "high": high,
                           "flag": _flagged(low, high, overall, count)})
        coders.append({"coder": coder, "points": points,
                       "flagged": any(p["flag"] for p in points)})
    return coders


def _flagged(low, high, overall, units):
    return (low is not None and high is not None and overall is not None
            and units >= FLAG_UNITS and low < TENTATIVE and high < overall)


def _window_of(when, bounds):
    """The number of the window [start, end) of `bounds` holding each value of `when`, -1
    for none. Windows come in order and do not overlap; were they ever to, each value is
    given the last window holding it (as a loop over windows would)."""
    window = np.full(len(when), -1, dtype=np.int64)
    if not bounds:
        return window
    starts = np.array([start for start, _ in bounds])
    ends = np.array([end for _, end in bounds])
    if (np.diff(starts) > 0).all() and (ends[:-1] <= starts[1:]).all() and (starts < ends).all():
        found = np.searchsorted(starts, when, side="right") - 1
        inside = found >= 0
        at = np.where(inside, found, 0)
        inside &= (when >= starts[at]) & (when < ends[at])
        window[inside] = found[inside]
        return window
    for w, (start, end) in enumerate(bounds):
        window[(when >= start) & (when < end)] = w
    return window


def _against_others(codes, i):
    """[coder i's value, the others' value] per unit: the others' value where every other
    coder who gave one gave the same (-1 where they differ or none gave one). So with
    three coders, the one who moves is set against the two who did not, and those two are
    not blamed for it; with two coders each is set against the other."""
    others = np.delete(codes, i, axis=1)
    given = others >= 0
    first = np.where(given, others, np.iinfo(np.int64).max).min(axis=1)
    last = np.where(given, others, -1).max(axis=1)
    agreed = np.where(given.any(axis=1) & (first == last), last, -1)
    return np.column_stack([codes[:, i], agreed]).astype(np.int64)


def _window_alphas(v, pair, window, windows, seed):
    """(alpha, low, high) of each window's units of `pair` (`window`: each unit's window
    number, -1 for none), for windows 0 to `windows` - 1, None where undefined; sets of
    options get alpha alone (MASI over hundreds of distinct sets is too dear to resample
    per window)."""
    if not windows:
        return []
    if v.is_sets:
        return [(_alpha_of(v, pair[window == w]), None, None) if (window == w).any()
                else (None, None, None) for w in range(windows)]
    if _is_mixed(v):
        found = subset_intervals(pair, range(len(v.labels)), "nominal", window, CONFIDENCE,
                                 DRIFT_RESAMPLES, seed,
                                 distance=mixed_distances(v.numbers, v.level))
    else:
        found = subset_intervals(*v.coded(pair), v.level, window, CONFIDENCE,
                                 DRIFT_RESAMPLES, seed)
    found += [(float("nan"),) * 3] * (windows - len(found))  # windows past the last unit's
    return [tuple(None if x != x else float(x) for x in figure) for figure in found]


def _is_mixed(v):
    return v.numbers is not None and np.isnan(v.numbers).any()


def _alpha_of(v, codes):
    scratch = {"undefined": {}}
    if _is_mixed(v):
        return _metric(scratch, "alpha", agreement._alpha_with_distances, codes,
                       mixed_distances(v.numbers, v.level))
    return _metric(scratch, "alpha", agreement._alpha_of_codes, *v.coded(codes), v.level)


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

"""A named comparison's numbers: one rater against another, or against the final decisions.

The table is directional: rows are the first rater's values, columns the second's, with
margins, so a rater's lean towards one category shows (the agreement page's coincidence
matrix is symmetric and cannot show it). Beside it: percent agreement, Cohen's kappa with
a percentile bootstrap interval (resampled exactly as coding.agreement.alpha.bootstrap_ci does,
so the two give the same interval; computed on all resamples at once here), Krippendorff's
alpha, and per category how often the two agree when either says it.

Kappa may be weighted (Cohen 1968): linear or quadratic agreement weights by the position
of the question's options (coding.agreement.coefficients.agreement_weights), or a
custom matrix of agreement weights given by option value, {row: {column: weight}}: 1 on
the diagonal, each cell within [0, 1], not necessarily symmetric. A value seen that is
not an option (an outside source's old option) agrees only with itself. Unweighted kappa
is computed as before; the weighted one is 1 - sum(v * observed) / sum(v * expected) with
disagreement weights v = 1 - w, on the same bootstrap resamples.

What each side's values are:
- a model or outside rater: its imported codings (coding.raters.imports);
- a person rater: their imported codings and, for items without one, their last
  independent coding in the workbench (coding.labeling.codings.independent_codings' rule);
- the final decisions: each item's current decision.
Only items both sides answered are compared.
"""

import warnings

import numpy as np
from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from coding.agreement import alpha as agreement
from coding.agreement.charts import heatmap
from coding.agreement.coefficients import agreement_weights
from coding.agreement.metrics import display
from coding.codebooks.versions import YES_NO
from coding.models import Coding, Decision, Question, Rater, RaterCoding

N_BOOT = 1000
CONFIDENCE = 0.95
WEIGHTINGS = ("unweighted", "linear", "quadratic", "custom")
WEIGHTED_KINDS = (Question.Kind.SINGLE, Question.Kind.YES_NO)


def side_values(comparison, rater):
    """{item id: value} of one side of the comparison on its question."""
    key, codebook = comparison.question_key, comparison.codebook_id
    if rater is None:
        decided = (Decision.objects.current()
                   .filter(item__study=comparison.study_id, item__codebook=codebook,
                           item__deleted_at__isnull=True, question_key=key)
                   .values_list("item_id", "value"))
        return {item: value for item, value in decided if value not in (None, "", [])}
    values = {}
    if rater.kind == Rater.Kind.PERSON and rater.member_id:
        values = _independent_answers(comparison, rater.member_id)
    values.update(RaterCoding.objects.filter(
        rater=rater, question_key=key, item__codebook=codebook, item__deleted_at__isnull=True)
        .values_list("item_id", "value"))
    return values


def _independent_answers(comparison, member_id):
    codings = (Coding.objects.filter(study=comparison.study_id, assignment__coder=member_id,
                                     phase=Coding.Phase.INDEPENDENT,
                                     assignment__item__codebook=comparison.codebook_id,
                                     assignment__item__deleted_at__isnull=True)
               .order_by("assignment_id", "revision")
               .values_list("assignment__item_id", "values"))
    answers = {}
    for item, values in codings:  # the last independent revision wins
        answers[item] = values.get(comparison.question_key)
    return {item: value for item, value in answers.items() if value not in (None, "", [])}


def question_of(comparison):
    version = comparison.codebook.current_version()
    return version.questions.prefetch_related("options").filter(
        key=comparison.question_key).first() if version else None


def offered_values(question):
    """The question's option values in their order (yes, no for a yes/no question)."""
    if question is None:
        return []
    return list(YES_NO) if question.kind == Question.Kind.YES_NO else [
        o.value for o in question.options.all()]


def checked_weights(question, weighting, weights):
    """The weighting and custom matrix a comparison keeps, or a ValidationError naming the
    value or cell that is wrong. `weights` given without a weighting means "custom"."""
    weighting = weighting or ("custom" if weights else "unweighted")
    if weighting not in WEIGHTINGS:
        raise ValidationError({"weighting": gettext(
            "unknown weighting %(weighting)r; use unweighted, linear, quadratic or custom")
            % {"weighting": str(weighting)[:50]}})
    if weighting == "unweighted":
        if weights:
            raise ValidationError({"weights": gettext("a weight matrix needs the custom "
                                                      "weighting")})
        return weighting, None
    if question is None or question.kind not in WEIGHTED_KINDS:
        raise ValidationError({"weighting": gettext("weights apply to a single-choice or "
                                                    "yes/no question only")})
    if weighting != "custom":
        if weights:
            raise ValidationError({"weights": gettext(
                "a weight matrix needs the custom weighting, not %(weighting)s")
                % {"weighting": weighting}})
        return weighting, None
    values = [str(v) for v in offered_values(question)]
    if not isinstance(weights, dict) or not weights:
        raise ValidationError({"weights": gettext(
            "give the matrix as {row value: {column value: weight}} over the options "
            "%(options)s") % {"options": ", ".join(values)}})
    matrix = {}
    for row in weights:
        if row not in values:
            raise ValidationError({"weights": gettext(
                "row %(row)r is not an option of %(question)s (%(options)s)")
                % {"row": str(row)[:100], "question": question.key,
                   "options": ", ".join(values)}})
    for row in values:
        cells = weights.get(row)
        if not isinstance(cells, dict):
            raise ValidationError({"weights": gettext(
                "row %(row)r is missing: give one weight per column (%(options)s)")
                % {"row": row, "options": ", ".join(values)}})
        for column in cells:
            if column not in values:
                raise ValidationError({"weights": gettext(
                    "row %(row)r: column %(column)r is not an option of %(question)s")
                    % {"row": row, "column": str(column)[:100], "question": question.key}})
        matrix[row] = {}
        for column in values:
            where = gettext("cell (%(row)s, %(column)s)") % {"row": row, "column": column}
            if column not in cells:
                raise ValidationError({"weights": gettext("%(cell)s is missing")
                                       % {"cell": where}})
            weight = cells[column]
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or \
                    weight != weight:
                raise ValidationError({"weights": gettext("%(cell)s: %(weight)r is not a number")
                                       % {"cell": where, "weight": str(weight)[:50]}})
            if row == column and weight != 1:
                raise ValidationError({"weights": gettext(
                    "%(cell)s: the diagonal must be 1 (full agreement), not %(weight)s")
                    % {"cell": where, "weight": weight}})
            if not 0 <= weight <= 1:
                raise ValidationError({"weights": gettext("%(cell)s: %(weight)s is not within "
                                                          "[0, 1]")
                                       % {"cell": where, "weight": weight}})
            matrix[row][column] = float(weight)
    return weighting, matrix


def weight_matrix(comparison, question, labels):
    """The agreement weights over the table's labels; None when unweighted."""
    weighting = comparison.weighting or "unweighted"
    if weighting == "unweighted":
        return None
    offered = offered_values(question)
    position = {hashable(v): k for k, v in enumerate(offered)}
    if weighting == "custom":
        cell = comparison.weights or {}
        return np.array([[float(cell[str(r)][str(c)]) if hashable(r) in position and
                          hashable(c) in position else float(hashable(r) == hashable(c))
                          for c in labels] for r in labels])
    for label in labels:  # values that are not options come after them
        position.setdefault(hashable(label), len(position))
    full = agreement_weights(len(position), weighting)
    index = [position[hashable(label)] for label in labels]
    return full[np.ix_(index, index)]


def compute(comparison, n_boot=N_BOOT, seed=0):
    """Everything the page and the API show about the comparison, as JSON values."""
    first = side_values(comparison, comparison.first)
    second = side_values(comparison, comparison.second)
    question = question_of(comparison)
    items = sorted(first.keys() & second.keys())
    labels = table_labels(question, [first[i] for i in items] + [second[i] for i in items])
    position = {hashable(label): k for k, label in enumerate(labels)}
    a = np.array([position[hashable(first[i])] for i in items], dtype=np.int64)
    b = np.array([position[hashable(second[i])] for i in items], dtype=np.int64)
    result = {"name": comparison.name, "question": comparison.question_key,
              "first": comparison.first.name, "second": comparison.second_name,
              "units": len(items), "first_only": len(first.keys() - second.keys()),
              "second_only": len(second.keys() - first.keys()), "undefined": {}}
    weights = weight_matrix(comparison, question, labels)
    result.update(measure(a, b, [display(hashable(label)) for label in labels], n_boot, seed,
                          result, weights=weights))
    result["weighting"] = comparison.weighting or "unweighted"
    result["weights"] = None if weights is None else weights.tolist()
    return result


def measure(a, b, labels, n_boot=N_BOOT, seed=0, result=None, weights=None):
    """The numbers of a comparison from two columns of codes indexing `labels`; kappa
    weighted by the agreement weights `weights` (labels × labels) when given."""
    result = result if result is not None else {"undefined": {}}
    size = len(labels)
    table = np.bincount(a * size + b, minlength=size * size).reshape(size, size)
    n = int(table.sum())
    kappa = _kappa(table[None], weights)[0] if n else np.nan
    low, high = _kappa_interval(a, b, size, n_boot, seed, weights) if n else (np.nan, np.nan)
    if kappa != kappa:
        result["undefined"]["kappa"] = ("no unit was answered by both" if not n else
                                        "both used one and the same category for every unit")
    alpha = _alpha(a, b, result) if n else None
    return {
        "labels": labels,
        "table": table.tolist(),
        "row_totals": table.sum(axis=1).tolist(),
        "column_totals": table.sum(axis=0).tolist(),
        "percent_agreement": float(np.trace(table) / n) if n else None,
        "kappa": {"value": _float(kappa), "low": _float(low), "high": _float(high),
                  "confidence": CONFIDENCE, "resamples": n_boot, "seed": seed},
        "alpha": alpha,
        "categories": _categories(table, labels),
    }


def _kappa(tables, weights=None):
    """Cohen's kappa of each (first × second) table in a stack, weighted by the agreement
    weights when given; NaN where undefined."""
    n = tables.sum(axis=(1, 2)).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if weights is None:
            observed = np.trace(tables, axis1=1, axis2=2) / n
            expected = np.einsum("bi,bi->b", tables.sum(axis=2), tables.sum(axis=1)) / n ** 2
        else:
            observed = np.einsum("bij,ij->b", tables, weights) / n
            expected = np.einsum("bi,ij,bj->b", tables.sum(axis=2), weights,
                                 tables.sum(axis=1)) / n ** 2
        kappa = (observed - expected) / (1 - expected)
    kappa[(n == 0) | (np.abs(1 - expected) < 1e-12)] = np.nan
    return kappa


def _kappa_interval(a, b, size, n_boot, seed, weights=None):
    """Percentile bootstrap of kappa over units: the resamples coding.agreement.alpha.bootstrap_ci
    draws with this seed, counted as n_boot tables in one bincount."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(a), size=(n_boot, len(a)))
    cells = a[rows] * size + b[rows] + (np.arange(n_boot) * size * size)[:, None]
    tables = np.bincount(cells.ravel(), minlength=n_boot * size * size).reshape(
        n_boot, size, size)
    estimates = _kappa(tables, weights)
    defined = estimates[~np.isnan(estimates)]
    if not defined.size:
        return np.nan, np.nan
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return low, high


def _alpha(a, b, result):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", agreement.UndefinedAgreementWarning)
        value = agreement.krippendorff_alpha(np.column_stack([a, b]).astype(float))
    if value != value:
        result["undefined"]["alpha"] = str(caught[0].message) if caught else "undefined"
        return None
    return float(value)


def _categories(table, labels):
    """Per category: how often each side says it, and how often the other agrees then."""
    rows, columns, both = table.sum(axis=1), table.sum(axis=0), np.diag(table)
    return [{"label": label, "first": int(rows[k]), "second": int(columns[k]),
             "agreed": int(both[k]),
             # Fleiss (1975) specific agreement: 2a / (2a + b + c).
             "specific_agreement": _share(2 * both[k], rows[k] + columns[k]),
             "second_agrees_when_first_says": _share(both[k], rows[k]),
             "first_agrees_when_second_says": _share(both[k], columns[k])}
            for k, label in enumerate(labels)]


def table_labels(question, values):
    """The table's categories: the question's options in their order, then any other
    value seen (sorted), so an outside source's old option still shows."""
    offered = []
    if question is not None:
        offered = list(YES_NO) if question.kind == Question.Kind.YES_NO else [
            o.value for o in question.options.all()]
    seen = {hashable(v): v for v in values}
    extra = sorted((v for h, v in seen.items() if h not in {hashable(o) for o in offered}),
                   key=lambda v: str(v))
    used = [o for o in offered if hashable(o) in seen]
    return used + extra


def hashable(value):
    return frozenset(value) if isinstance(value, list) else value


def _share(part, whole):
    return float(part / whole) if whole else None


def _float(value):
    return None if value is None or value != value else float(value)


def chart(result):
    return heatmap({"labels": result["labels"], "counts": result["table"]},
                   f"{result['first']} × {result['second']} on {result['question']}",
                   row_name=result["first"], column_name=result["second"])


def as_text(result):
    """The comparison as plain text: the command's output and the worked example's."""
    width = max([len(result["first"]), 8, *map(len, result["labels"])]) + 2
    head = f"{result['first']} \\ {result['second']}"
    lines = [f"{result['name']}: {result['question']}, {result['units']} items answered by both",
             head.ljust(width) + "".join(label.rjust(width) for label in result["labels"])
             + "total".rjust(width)]
    for label, row, total in zip(result["labels"], result["table"], result["row_totals"]):
        lines.append(label.ljust(width) + "".join(str(c).rjust(width) for c in row)
                     + str(total).rjust(width))
    lines.append("total".ljust(width) + "".join(str(c).rjust(width)
                                                for c in result["column_totals"])
                 + str(result["units"]).rjust(width))
    kappa, alpha = result["kappa"], result["alpha"]
    weighting = result.get("weighting", "unweighted")
    lines.append(f"percent agreement {_fixed(result['percent_agreement'])}; Cohen's kappa "
                 f"{_fixed(kappa['value'])} [{_fixed(kappa['low'])}, {_fixed(kappa['high'])}] "
                 f"({weighting}; 95% bootstrap, {kappa['resamples']} resamples); "
                 "Krippendorff's alpha "
                 f"{_fixed(alpha)}")
    if result.get("weights") is not None:
        lines.append("agreement weights (rows: first, columns: second):")
        lines.append(" " * width + "".join(label.rjust(width) for label in result["labels"]))
        for label, row in zip(result["labels"], result["weights"]):
            lines.append(label.ljust(width) + "".join(f"{w:.3f}".rjust(width) for w in row))
    for c in result["categories"]:
        lines.append(f"  {c['label']}: specific agreement {_fixed(c['specific_agreement'])}; "
                     f"{result['second']} agrees on {c['agreed']} of {c['first']} "
                     f"{result['first']} says")
    return "\n".join(lines)


def _fixed(value):
    return "undefined" if value is None else f"{value:.3f}"

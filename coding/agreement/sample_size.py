"""How many units a reliability sample needs, and how to read an alpha. Pure, no Django.

Sample size: Krippendorff, K. (2004). Content Analysis: An Introduction to Its
Methodology (2nd ed.), ch. 11, "Sampling considerations" and its table of required
sample sizes (3rd ed. 2013, ch. 12; 4th ed. 2019), which applies Bloch & Kraemer
(1989, eq. 3.7):

    N = z_p^2 * ( (1 + a)(3 - a) / (4 (1 - a) P_c (1 - P_c)) - a )

with a the smallest acceptable alpha, P_c the share of the least frequent category,
and z_p the one-tailed standard normal quantile for the significance level p. N is
the number of values each coder contributes, so the sample needs N units coded by
every coder; Krippendorff's table (two coders) counts the values of both, 2N, and
with m coders the table's figure becomes m * N. Example checked in the tests: four
equally common categories (P_c = .25), a = .800, p = .05 give 2N = 139 values for
two coders; a = .667 gives 81.

Thresholds, from the same chapter ("Standards for data reliability", §11.4): rely on
variables with alpha >= .800; consider those between .667 and .800 only for tentative
conclusions; below .667, do not rely on them. The report applies them to the lower
bound of alpha's 95% bootstrap interval, not to the point estimate: a variable is called
reliable only when the data rule out, at that confidence, an alpha below .800
(Krippendorff 2004, §11.4, on the probability q that alpha falls below the smallest
acceptable value).
"""

import math
from statistics import NormalDist

from django.utils.translation import gettext

RELIABLE = 0.800
TENTATIVE = 0.667
VERDICTS = {
    "reliable": "reliable (lower bound of α ≥ 0.800)",
    "tentative": "tentative only (lower bound 0.667 to 0.800)",
    "unreliable": "not reliable (lower bound below 0.667)",
}
VERDICT_RULE = ("The verdict reads the lower bound of alpha's 95% bootstrap interval: "
                "reliable when it is at least .800, tentative when at least .667, not "
                "reliable below (Krippendorff 2004, §11.4).")
# Below this many expected values, a category's agreement rests on a handful of cases.
FEW_VALUES = 5


def verdict(alpha):
    """'reliable', 'tentative' or 'unreliable' for a value of alpha (the report passes the
    interval's lower bound); None when it is undefined."""
    if alpha is None or alpha != alpha:
        return None
    if alpha >= RELIABLE:
        return "reliable"
    return "tentative" if alpha >= TENTATIVE else "unreliable"


def values_per_coder(alpha_min=RELIABLE, smallest_share=0.5, significance=0.05):
    """Krippendorff's N (unrounded): values each coder must contribute."""
    _check(alpha_min, smallest_share, significance)
    z = NormalDist().inv_cdf(1 - significance)
    share = smallest_share * (1 - smallest_share)
    return z * z * ((1 + alpha_min) * (3 - alpha_min) / (4 * (1 - alpha_min) * share) - alpha_min)


def units_needed(alpha_min=RELIABLE, smallest_share=0.5, significance=0.05):
    """Units, each coded by every coder, to test alpha >= alpha_min at this level."""
    return math.ceil(values_per_coder(alpha_min, smallest_share, significance))


def values_needed(alpha_min=RELIABLE, smallest_share=0.5, significance=0.05, coders=2):
    """Krippendorff's tabled figure: values from all ``coders`` together."""
    return math.ceil(coders * values_per_coder(alpha_min, smallest_share, significance))


def _check(alpha_min, smallest_share, significance):
    if not 0 <= alpha_min < 1:
        raise ValueError(f"the smallest acceptable alpha must be in [0, 1); got {alpha_min}")
    if not 0 < smallest_share <= 0.5:
        raise ValueError("the smallest category share must be above 0 and at most 0.5 "
                         f"(it is the least frequent of two or more); got {smallest_share}")
    if not 0 < significance < 0.5:
        raise ValueError(f"the significance level must be in (0, 0.5); got {significance}")


# --- planning the reliability sample ---------------------------------------------------

def plan(main_round, *, offered, sample_size, coders, alpha_min=RELIABLE, significance=0.05,
         smallest_share=None):
    """Units needed for the target alpha, and warnings where the sample falls short.

    ``main_round`` is the main round of the reliability report; ``offered`` maps each
    single-choice question to the number of categories its codebook offers. Without
    ``smallest_share`` the rarest category observed so far sets it (the smallest share
    of any planned question's rarest used value); before any coding the offered
    categories are taken as equally common, so the question offering the most of them
    sets it (1 / their number).
    """
    questions = [_question_plan(book, q, alpha_min, significance, sample_size)
                 for book in main_round["codebooks"] for q in book["questions"]
                 if q["kind"] in PLANNED_KINDS and q.get("categories")]
    source = "given"
    observed = [q for q in questions if q["rarest_share"]]
    if smallest_share is None and observed:
        # The observed rarest category of any planned question: the one that needs most.
        rarest = min(observed, key=lambda q: q["rarest_share"])
        smallest_share = min(rarest["rarest_share"], 0.5)
        source = (f"observed: “{rarest['rarest']}” of {rarest['key']}, "
                  f"{rarest['rarest_share']:.1%} of its values so far")
    elif smallest_share is None:
        key, most = max(offered.items(), key=lambda pair: pair[1], default=("", 2))
        smallest_share = 1 / max(most, 2)
        source = (f"nothing coded yet: equal shares of the {most} categories of {key}" if key
                  else "nothing coded yet: two equally common categories")
    needed = units_needed(alpha_min, min(smallest_share, 0.5), significance)
    result = {"alpha_min": alpha_min, "significance": significance,
              "smallest_share": smallest_share, "share_source": source, "coders": coders,
              "units_needed": needed, "values_needed": needed * coders,
              "sample_size": sample_size, "questions": questions}
    result["warnings"] = _warnings(result)
    return result


# The formula speaks of categories; number questions are left out of the plan.
PLANNED_KINDS = ("single", "yes_no", "multiple")


def _question_plan(book, question, alpha_min, significance, sample_size):
    """The question's rarest category in the sample so far, and the units it would need.

    For multiple choice each option is a yes/no variable (chosen or not), so its
    rarer side is min(p, 1 - p).
    """
    sets = question["kind"] == "multiple"
    values = question["values"]
    counts = {c["label"]: (min(c["n"], values - c["n"]) if sets else c["n"])
              for c in question["categories"]}
    used = {label: n for label, n in counts.items() if n > 0}
    rarest = min(used, key=used.get, default=None)
    share = used[rarest] / values if rarest else None
    needed = units_needed(alpha_min, min(share, 0.5), significance) if rarest else None
    return {"codebook": book["name"], "key": question["key"], "units": question["units"],
            "offered": 2 if sets else len(question["categories"]),
            "rarest": rarest, "rarest_n": used.get(rarest, 0), "rarest_share": share,
            "units_needed": needed, "short": bool(needed and needed > sample_size),
            "unused": [c["label"] for c in question["categories"] if c["n"] == 0 and values]}


def _warnings(result):
    """Sample-level warnings first, then each question's, which also stay on the question."""
    warnings = []
    size, needed = result["sample_size"], result["units_needed"]
    if result["coders"] < 2:
        warnings.append(gettext(
            "Each item is coded by %(coders)s coder (the study's overlap): agreement needs at "
            "least two coders on the same items. Set the overlap to 2 or more and draw a "
            "reliability sample; until then no agreement can be computed.")
            % {"coders": result["coders"]})
    if size < needed:
        warnings.append(gettext(
            "The reliability sample holds %(size)s items, fewer than the %(needed)s units "
            "needed to test α ≥ %(alpha)s at p = %(p)s when the rarest category is "
            "%(share)s of values.") % {
                "size": size, "needed": needed, "alpha": f"{result['alpha_min']:.3f}",
                "p": f"{result['significance']:g}", "share": f"{result['smallest_share']:.1%}"})
    result["sample_warnings"] = list(warnings)
    for q in result["questions"]:
        q["warnings"] = _question_warnings(q, result["alpha_min"], size)
        warnings += [f"{q['key']}: {warning}" for warning in q["warnings"]]
    return warnings


def _question_warnings(q, alpha_min, size):
    warnings = []
    if q["short"]:
        warnings.append(gettext(
            "“%(rarest)s” is only %(share)s of values; testing α ≥ %(alpha)s with a category "
            "that rare needs %(needed)s units and the sample holds %(size)s, so the figure "
            "says little about it.") % {
                "rarest": q["rarest"], "share": f"{q['rarest_share']:.1%}",
                "alpha": f"{alpha_min:.3f}", "needed": q["units_needed"], "size": size})
    elif q["rarest"] and q["rarest_n"] < FEW_VALUES:
        warnings.append(gettext("“%(rarest)s” has fewer than %(few)s values so far; its "
                                "agreement rests on a handful of cases.")
                        % {"rarest": q["rarest"], "few": FEW_VALUES})
    if q["unused"]:
        warnings.append(gettext("Never used so far: %(unused)s; nothing is known yet about "
                                "how reliably they are coded.")
                        % {"unused": ", ".join(q["unused"])})
    return warnings

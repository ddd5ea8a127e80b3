"""The export's analysis tables (issue 17): the reliability report and the inclusion
analysis, as rows, with their data dictionary. Their numbers are the agreement and
inclusion pages' own: the newest agreement snapshot, and coding.inclusion.analysis.analyse over
every paper with decisions (narrow it on the page or with `inclusion_report
--population`).

Neither may reach a coder (rule 1: no figure derived from the others' codings; inclusion
is blinded): for roles that may not see them the tables are written empty.
"""

from coding.access.blinding import hides_inclusion
from coding.agreement import snapshots
from coding.agreement.report import SEES_AGREEMENT
from coding.export.fields import Field, s
from coding.export.rows import Columns
from coding.inclusion import analysis as inclusion

RELIABILITY_FIELDS = [
    s("round", "main or calibration.", categories=("main", "calibration")),
    s("codebook", "The codebook's name."),
    s("question", "The question's key."),
    s("figure", "percent_agreement; alpha (every answer, special answers included); "
      "alpha_numbers_only (number questions with special answers: numeric answers alone); "
      "a chance-corrected coefficient (cohen, scott, fleiss, conger, ac1, ac2, "
      "brennan_prediger, weighted_kappa); two coders: pabak, bias_index, prevalence_index, "
      "stuart_maxwell (value: the chi-square statistic, p in its own column); drift_alpha "
      "(one coder against the others' agreed value in one window; see coder and window)."),
    s("name", "The figure's name as the page shows it."),
    s("weights", "Agreement weights of a coefficient: identity or quadratic (by category "
      "position); empty for the rest."),
    s("level", "Alpha's level of measurement: nominal, ordinal, interval, ratio, masi, or "
      "mixed (numbers and special answers)."),
    Field("value", "number", "The figure on all units (empty where undefined: see "
          "undefined)."),
    Field("low", "number", "Lower bound of its 95% percentile bootstrap interval over units."),
    Field("high", "number", "Upper bound of that interval."),
    Field("units", "integer", "Units coded by two or more coders (two-coder figures: by both)."),
    Field("coders", "integer", "Coders who coded those units."),
    s("verdict", "Alpha only: reliable, tentative or unreliable, read on the interval's "
      "lower bound against .800 and .667 (Krippendorff 2004, §11.4)."),
    Field("df", "integer", "Stuart-Maxwell only: degrees of freedom."),
    Field("p", "number", "Stuart-Maxwell only: p of the test of marginal homogeneity."),
    s("coder", "Drift only: the coder set against the others."),
    s("window", "Drift only: batch (batches of the round's codings in the order submitted) "
      "or the calendar window's unit (day, week or month, UTC)."),
    Field("window_number", "integer", "Drift only: the window's place, from 1."),
    s("window_from", "Drift only: the window's first day (ISO 8601 date; batches: the date "
      "of their first coding)."),
    s("window_to", "Drift only: the window's last day (batches: the date of their last "
      "coding)."),
    Field("flag", "boolean", "Drift only: the lower bound is below .667 on 10 or more "
          "units (the agreement page's flag)."),
    s("computed_at", "When the snapshot these figures come from was taken (UTC, ISO 8601)."),
    s("undefined", "Why the figure has no value for these data (one category, one coder, no "
      "unit coded twice …), as the agreement page says it; empty when it has one."),
]

INCLUSION_FIELDS = [
    s("field", "A yes/no or single-choice question's key, or question__option for one option "
      "of a multiple choice (chosen or not)."),
    s("question", "The question's key."),
    s("kind", "yes_no, single, or option.", categories=("yes_no", "single", "option")),
    s("answer", "One answer; rows in codebook order, the first answer first."),
    Field("included", "integer", "Papers with this answer included by the source (see "
          "source): for the tracker, whose method landed in a tracked framework "
          "(frameworks_landed not empty); for a list, that the list names."),
    Field("not_included", "integer", "Papers with this answer the source does not include."),
    Field("left_out", "integer", "Papers without a decided answer to the field (undecided, "
          "missing or not applicable): not in its table."),
    s("test", "fisher (2 x 2: Fisher's exact test, two-sided) or freeman_halton (larger: "
      "the Freeman-Halton extension, two-sided; see p_method); empty when there is nothing "
      "to compare."),
    Field("p", "number", "The field's p-value (two-sided), the same on each of its rows."),
    s("p_method", "How p was computed: exact (Fisher's test; Freeman-Halton with every table "
      "of the observed margins enumerated, done when there are at most 1,000,000 of them), "
      "or 'monte carlo: 20000 tables, seed 0' (Freeman-Halton beyond that)."),
    Field("p_holm", "number", "p adjusted by Holm's (1979) step-down method across every "
                              "test of the table."),
    Field("p_bh", "number", "p adjusted by Benjamini-Hochberg's (1995) false discovery rate "
                            "across every test of the table."),
    Field("odds_ratio", "number", "Odds of inclusion with this answer over the odds without "
          "it (sample odds ratio ad/bc; 2 x 2: on the first answer's row only)."),
    Field("odds_ratio_low", "number", "Lower bound of Woolf's 95% interval of that odds ratio."),
    Field("odds_ratio_high", "number", "Upper bound of that interval."),
    s("source", "Where inclusion came from: tracker (the method tracker's landings) or "
      "list:NAME (an inclusion list the team imported, with its file's SHA-256 on the "
      "inclusion page and in the API)."),
]


def _batch(rows, fields):
    rows = list(rows)
    return [Columns({f.name: [row.get(f.name) for row in rows] for f in fields}, len(rows))]


def reliability_batches(study, roles):
    if not set(roles) & SEES_AGREEMENT:
        return []
    return _batch(reliability_rows(snapshots.stored_report(study)), RELIABILITY_FIELDS)


def reliability_rows(report):
    """The report's figures as rows, each undefined one with its reason."""
    for row in _figure_rows(report):
        undefined = row.pop("_why")
        if row.get("value") is None and row["figure"] != "stuart_maxwell":
            row["undefined"] = (undefined.get(row["figure"]) or undefined.get("coefficients")
                                or "not defined for these data")
        yield row


def _figure_rows(report):
    if not report:
        return
    for round, part in report["rounds"].items():
        for book in part.get("codebooks", []):
            for q in book["questions"]:
                if not q.get("metric"):
                    continue
                base = {"round": round, "codebook": book["name"], "question": q["key"],
                        "units": q["units"], "coders": q["coders"],
                        "computed_at": report["computed_at"], "_why": q.get("undefined") or {}}
                yield {**base, "figure": "percent_agreement", "name": "% agreement",
                       "value": q["percent_agreement"]}
                alpha = q["alpha"]
                yield {**base, "figure": "alpha", "name": "Krippendorff's alpha",
                       "level": alpha["level"], "verdict": alpha["verdict"],
                       **_bounds(alpha)}
                if q.get("alpha_numbers"):
                    numbers = q["alpha_numbers"]
                    yield {**base, "figure": "alpha_numbers_only", "units": numbers["units"],
                           "name": "Krippendorff's alpha, numbers only",
                           "level": numbers["level"], **_bounds(numbers)}
                for c in q.get("coefficients") or []:
                    yield {**base, "figure": c["key"], "name": c["name"],
                           "weights": c["weights"], **_bounds(c)}
                two = q.get("two_coders") or {}
                for key, name in (("pabak", "PABAK"), ("bias_index", "Bias index"),
                                  ("prevalence_index", "Prevalence index")):
                    if two.get(key):
                        yield {**base, "figure": key, "name": name, "units": two["units"],
                               "coders": 2, **_bounds(two[key])}
                test = two.get("stuart_maxwell")
                if test:
                    yield {**base, "figure": "stuart_maxwell", "name": "Stuart-Maxwell",
                           "units": two["units"], "coders": 2, "value": test["statistic"],
                           "df": test["df"], "p": test["p"]}
                yield from _drift_rows(base, q)


def _drift_rows(base, q):
    for key in ("drift", "drift_calendar"):
        drift = q.get(key)
        if not drift:
            continue
        window = drift.get("unit", "batch")
        for c in drift["coders"]:
            for p in c["points"]:
                w = drift["windows"][p["window"]]
                yield {**base, "figure": "drift_alpha", "name": "Drift: alpha against the others",
                       "level": q["alpha"]["level"], "units": p["units"], "coders": None,
                       "coder": c["coder"], "window": window, "window_number": p["window"] + 1,
                       "window_from": (w.get("from") or "")[:10] or None,
                       "window_to": (w.get("to") or "")[:10] or None, "flag": p["flag"],
                       "value": p["alpha"], "low": p["low"], "high": p["high"]}


def _bounds(figure):
    return {key: figure.get(key) for key in ("value", "low", "high")}


def inclusion_batches(study, withheld, roles):
    """The inclusion table, empty for roles that may not read the inclusion report (coders;
    adjudicators and viewers while the study blinds included_in from them)."""
    if (not set(roles) & SEES_AGREEMENT or hides_inclusion(study, roles)
            or "paper" in withheld.get("frameworks_landed", ())):
        return []
    return _batch(inclusion.table_rows(inclusion.analyse(study)), INCLUSION_FIELDS)

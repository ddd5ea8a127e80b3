"""The reliability report as people read it: thresholds, the sample-size plan, the
procedure, and a block ready to paste into a paper.

`document` is the one function the agreement page, the API and
`manage.py agreement_report` call, so all three show the same numbers.
"""

import hashlib

from django import forms
from django.core.cache import cache
from django.db.models import Count, Max
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from . import charts, sample_size, snapshots
from .models import AgreementSnapshot, Item, Question, Role, StoredDisagreement
from .models.reliability import SampleDraw
from .reliability import N_BOOT, ROUNDS
from .reliability_metrics import AGAINST_DECISIONS_RULE, rule_words

THRESHOLDS = {
    "reliable": sample_size.RELIABLE, "tentative": sample_size.TENTATIVE,
    "applied_to": "the lower bound of the 95% bootstrap interval",
    "rule": sample_size.VERDICT_RULE,
    "source": "Krippendorff, K. (2004). Content Analysis: An Introduction to Its "
              "Methodology (2nd ed.), ch. 11, standards for data reliability.",
}
SAMPLE_SIZE_SOURCE = (
    "Krippendorff, K. (2004). Content Analysis (2nd ed.), ch. 11, sampling considerations "
    "for reliability data (3rd ed. 2013, ch. 12), after Bloch & Kraemer (1989, eq. 3.7): "
    "N = z² · ((1 + α)(3 − α) / (4 (1 − α) P (1 − P)) − α), P the rarest category's share.")
# Who may see agreement: never a coder (rule 1: nothing derived from others' codings).
SEES_AGREEMENT = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}
RECOMPUTES = {Role.OWNER, Role.ADJUDICATOR}
PLAN_DEFAULTS = {"alpha_min": sample_size.RELIABLE, "significance": 0.05, "smallest_share": None}


class PlanForm(forms.Form):
    """The sample-size planner's inputs (the page's form and the API's query string)."""

    alpha_min = forms.FloatField(label=gettext_lazy("Target alpha"), initial=sample_size.RELIABLE,
                                 min_value=0, max_value=0.99, required=False)
    significance = forms.FloatField(label=gettext_lazy("Significance level"), initial=0.05,
                                    min_value=0.001, max_value=0.2, required=False)
    smallest_share = forms.FloatField(
        label=gettext_lazy("Smallest expected category share"), min_value=0.001, max_value=0.5,
        required=False, help_text=gettext_lazy(
            "Empty: the rarest category's share observed so far (equal shares before any "
            "coding)."))

    def inputs(self):
        """The cleaned inputs, or the defaults when the form is unbound or invalid."""
        if not self.is_bound or not self.is_valid():
            return dict(PLAN_DEFAULTS)
        data = {k: v for k, v in self.cleaned_data.items() if v is not None}
        return {**PLAN_DEFAULTS, **data}


def document(study, report, plan_inputs=None):
    """Everything the page, the API and the command show, as plain JSON values."""
    inputs = {**PLAN_DEFAULTS, **(plan_inputs or {})}
    sample = describe_sample(study)
    main = report["rounds"]["main"]
    planning = sample_size.plan(main, offered=offered_categories(study), sample_size=sample["size"],
                                coders=study.overlap, **inputs)
    planning["source"] = SAMPLE_SIZE_SOURCE
    open_now = disagreement_counts(study)
    result = {"study": study.slug, "computed_at": report["computed_at"],
              "n_codings": report["n_codings"], "thresholds": THRESHOLDS, "sample": sample,
              "disagreements": open_now, "procedure": procedure(study, open_now),
              "against_decisions_rule": _(AGAINST_DECISIONS_RULE),
              "rounds": report["rounds"], "planning": planning}
    result["text"] = paper_text(result)
    return result


def describe_sample(study):
    """The reliability sample as drawn, from the newest kept draw (SampleDraw): how, when
    (before or after coding), from which pool, and the plan recorded with it; every
    earlier draw beside it, newest first."""
    draws = [_draw(study, row) for row in
             SampleDraw.objects.filter(study=study).order_by("-drawn_at", "-id")]
    if draws:
        return {**draws[0], "draws": draws}
    pool = Item.objects.alive().filter(study=study, round=Item.Round.MAIN).count()
    return {"drawn": False, "size": pool, "pool": pool, "plan": None, "draws": [],
            "text": f"every main-round item ({pool}), each assigned to {study.overlap} coders; "
                    "no sample was drawn"}


def _draw(study, row):
    drawn = row.record
    return {"drawn": True, "id": row.pk, "drawn_at": row.drawn_at.isoformat(),
            "drawn_by": row.drawn_by, "size": row.size, "pool": row.pool,
            "how": {key: drawn.get(key) for key in ("share", "count", "stratify_by", "seed",
                                                   "coded_before", "kept_for_overlap")},
            "text": _drawn_text(study, drawn), "plan": drawn.get("plan")}


def _drawn_text(study, drawn):
    pool, size = drawn["pool"], drawn["size"]
    how = ("a simple random sample" if not drawn.get("stratify_by") else
           f"a random sample stratified by {drawn['stratify_by']}")
    if size >= pool:
        what = f"all {pool} main-round items (the draw took every item)"
    else:
        asked = (f"a share of {drawn['share']:g}" if drawn.get("share") is not None
                 else f"{drawn.get('count')} items asked for")
        what = f"{how} of {size} of the {pool} main-round items ({asked}, seed {drawn['seed']})"
    coded = drawn.get("coded_before")
    if coded is None:
        when = f"drawn {drawn['drawn_at'][:10]}"
    elif coded == 0:
        when = f"drawn {drawn['drawn_at'][:10]}, before any item was coded"
    else:
        when = (f"drawn {drawn['drawn_at'][:10]}, after coding had begun ({coded} of the "
                f"{pool} items already coded"
                + (f"; {drawn['kept_for_overlap']} items already coded by more than one coder "
                   "were kept in the sample whatever the draw" if drawn.get("kept_for_overlap")
                   else "") + ")")
    text = f"{what}, {when}, each item in it assigned to {drawn.get('overlap', study.overlap)} coders"
    plan = drawn.get("plan")
    if plan:
        text += (f"; the plan recorded with the draw asked for {plan['units_needed']} units to "
                 f"test α ≥ {plan['alpha_min']:.3f} at p = {plan['significance']:g} with the "
                 f"rarest category at {plan['smallest_share']:.1%} ({plan['share_source']})")
    return text


def recorded_plan(study, inputs=None):
    """The sample-size plan as it stands (newest snapshot), kept with a draw."""
    report = snapshots.stored_report(study) or empty_report(study)
    pool = Item.objects.alive().filter(study=study, round=Item.Round.MAIN).count()
    planning = sample_size.plan(report["rounds"]["main"], offered=offered_categories(study),
                                sample_size=pool, coders=study.overlap,
                                **{**PLAN_DEFAULTS, **(inputs or {})})
    kept = {key: planning[key] for key in ("alpha_min", "significance", "smallest_share",
                                           "share_source", "units_needed", "values_needed")}
    # The planner's inputs as given (a share left empty: the observed one was used), and
    # each question's observed rarest share then, from the snapshot named.
    kept["inputs"] = {**PLAN_DEFAULTS, **(inputs or {})}
    kept["observed"] = [{key: q[key] for key in ("codebook", "key", "units", "rarest",
                                                 "rarest_share", "units_needed")}
                        for q in planning["questions"]]
    kept["from_snapshot"] = {"computed_at": report["computed_at"],
                             "n_codings": report["n_codings"]}
    return kept


def offered_categories(study):
    """{question key: categories offered} for single-choice and yes/no questions."""
    offered = {}
    for codebook in study.codebooks.all():
        version = codebook.current_version()
        for question in version.questions.prefetch_related("options") if version else []:
            if question.kind == Question.Kind.YES_NO:
                offered[question.key] = 2
            elif question.kind == Question.Kind.SINGLE:
                offered[question.key] = len(question.options.all())
    return offered


def disagreement_counts(study):
    """{found, decided, undecided}: the main round's disagreements (item x question whose
    independent codings differ) now, from the stored review list: one query."""
    from django.db.models import Count, Q

    counts = (StoredDisagreement.objects
              .filter(study=study, item__deleted_at__isnull=True, item__round=Item.Round.MAIN)
              .aggregate(found=Count("pk"), decided=Count("pk", filter=Q(decided=True))))
    return {"found": counts["found"], "decided": counts["decided"],
            "undecided": counts["found"] - counts["decided"]}


def procedure(study, counts=None):
    """How disagreements are settled, in words, from the study's settings, and where the
    study stands now (how many are decided and how many wait)."""
    counts = counts or {"found": 0, "decided": 0, "undecided": 0}
    steps = ["Values on which the coders' independent codings agreed were recorded as "
             "decided (unanimous)."]
    if study.discussion_step:
        steps.append("Where they differed, the item's coders were shown the disagreement and "
                      "could revise their values; revisions are kept apart and never used "
                      "for reliability, and values they then agreed on were recorded as "
                      "consensus.")
    who = ("an adjudicator" if study.allow_self_adjudication
           else "an adjudicator who had not coded the item")
    if not counts["found"]:
        steps.append(f"Disagreements are decided by {who}; none has been found so far.")
    elif counts["undecided"]:
        steps.append(
            f"Disagreements are decided by {who}, who records why. Of the {counts['found']} "
            f"disagreements found so far (item × variable), {counts['decided']} "
            f"{'has' if counts['decided'] == 1 else 'have'} been decided and "
            f"{counts['undecided']} {'is' if counts['undecided'] == 1 else 'are'} still "
            "undecided.")
    else:
        steps.append(f"All {counts['found']} disagreements found (item × variable) were "
                     f"decided by {who}; every decision is kept with who made it, when and why.")
    return " ".join(steps)


# --- the block to paste into a paper --------------------------------------------------

def paper_text(doc):
    main, calibration = doc["rounds"]["main"], doc["rounds"]["calibration"]
    lines = [_reliability_paragraph(doc, main), "", _calibration_paragraph(calibration), "",
             "Disagreements. " + doc["procedure"] + _decision_counts(main), "",
             "Table. Intercoder reliability, main round "
             f"({_number(len(main['coders']))} coders).", ""]
    lines += _table(main)
    others = _other_coefficients(main)
    if others:
        lines += ["", "Other coefficients, main round (95% bootstrap intervals, "
                  f"{N_BOOT:,} resamples of units):", ""] + others
    return "\n".join(lines).rstrip() + "\n"


def _reliability_paragraph(doc, main):
    sample = doc["sample"]
    coders = len(main["coders"])
    return (
        f"Reliability. {_number(coders).capitalize()} coder{'s' if coders != 1 else ''} coded "
        f"the reliability sample independently: {sample['text']}. So far "
        f"{main['items_with_two_or_more']} items were coded by two or more coders. Agreement "
        "was computed on each coder's last coding made before any discussion of the item; "
        "revisions after discussion and adjudicated values were not used. For each variable "
        "we report Krippendorff's alpha at its level of measurement (nominal, ordinal, "
        "interval or ratio; multiple-choice variables with the MASI distance) with a 95% "
        f"bootstrap confidence interval ({N_BOOT:,} resamples of units), percent agreement, "
        "and kappa (Cohen's for two coders, Fleiss' for more) with its own bootstrap "
        "interval. Alpha counts every answer: for number variables, special answers such as "
        "\"not reported\" count as answers (a special answer against any other answer is a "
        "full disagreement; two numbers differ by their distance scaled to the widest gap), "
        "and alpha over the numeric answers alone is reported beside it. "
        "A conditional variable whose condition was not met for a coder was treated as "
        "not applicable and left out of that variable's units; unanswered applicable "
        "variables were treated as missing; both are counted in the table. Following "
        "Krippendorff (2004, §11.4), a variable is called reliable when the lower bound of "
        "its alpha interval is at least .800, and usable for tentative conclusions only "
        "when it is at least .667.")


def _calibration_paragraph(calibration):
    if not calibration["n_codings"]:
        return "Calibration. No calibration round was run."
    alphas = [q["alpha"]["value"] for book in calibration["codebooks"]
              for q in book["questions"] if q.get("alpha") and q["alpha"]["value"] is not None]
    spread = (f"; alpha ranged from {_alpha(min(alphas))} to {_alpha(max(alphas))} across "
              f"{len(alphas)} variables" if alphas else "")
    return (f"Calibration. Before the main round, {_number(len(calibration['coders']))} coders "
            f"coded {calibration['items']} calibration items{spread}. These codings are "
            "reported apart and are not part of the figures below.")


def _decision_counts(main):
    counts = main.get("decisions") or {}
    if not counts:
        return ""
    parts = ", ".join(f"{n} {method}" for method, n in sorted(counts.items()))
    return (f" At the last computation {sum(counts.values())} values (item × variable) had "
            f"a decision: {parts}.")


COLUMNS = ("Variable", "Level", "Units", "Coders", "α [95% CI]", "α numbers only", "Kappa [95% CI]",
           "% agreement", "N/A", "Missing")


def _with_interval(figure):
    if not figure or figure.get("value") is None:
        return "–"
    if figure.get("low") is None:
        return _alpha(figure["value"])
    return f"{_alpha(figure['value'])} [{_alpha(figure['low'])}, {_alpha(figure['high'])}]"


def _rows(main):
    several = len(main["codebooks"]) > 1
    for book in main["codebooks"]:
        for q in book["questions"]:
            if q.get("metric"):
                yield (f"{book['name']}: {q['key']}" if several else q["key"]), q


def _table(main):
    rows = []
    for name, q in _rows(main):
        alpha = q["alpha"]
        interval = "undefined" if alpha["value"] is None else _with_interval(alpha)
        agreement = ("–" if q["percent_agreement"] is None
                     else f"{100 * q['percent_agreement']:.1f}%")
        kappa = q.get("kappa") or {}
        kappa_text = (_with_interval(kappa) + f" ({kappa['name'].split(chr(39))[0]})"
                      if kappa.get("value") is not None else "–")
        rows.append((name, q["alpha"].get("level", q["metric"]), str(q["units"]),
                     str(q["coders"]), interval, _with_interval(q.get("alpha_numbers")),
                     kappa_text, agreement, str(q["not_applicable"]), str(q["missing"])))
    widths = [max(len(row[i]) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
            for row in [COLUMNS, *rows]]


def _other_coefficients(main):
    """One line a variable: every coefficient the page shows beyond alpha and kappa."""
    lines = []
    for name, q in _rows(main):
        kappa = (q.get("kappa") or {}).get("name")
        parts = [f"{c['name']}{' (' + c['weights'] + ' weights)' if c['weights'] != 'identity' else ''}"
                 f" {_with_interval(c)}" for c in q.get("coefficients") or []
                 if c["name"] != kappa]
        two = q.get("two_coders") or {}
        for key, label in (("pabak", "PABAK"), ("bias_index", "bias index"),
                           ("prevalence_index", "prevalence index")):
            if two.get(key):
                parts.append(f"{label} {_with_interval(two[key])}")
        test = two.get("stuart_maxwell")
        if test:
            parts.append(f"Stuart–Maxwell χ²({test['df']}) = {test['statistic']:.2f}, "
                         f"p = {test['p']:.3f}")
        if parts:
            lines.append(f"{name}: " + "; ".join(parts) + ".")
    return lines


def _alpha(value):
    return "–" if value is None else f"{value:.3f}"


def _number(n):
    words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    return words[n] if 0 <= n < len(words) else str(n)


# --- what the page and the API read -------------------------------------------------

def current_document(study, plan_inputs=None):
    """The document of the newest snapshots (the API's and the page's numbers)."""
    return _current(study, plan_inputs)[0]


def _current(study, plan_inputs=None):
    """(the document of the newest snapshots, their marks: see snapshot_marks)."""
    snapshots.run_waiting(study)
    marks = snapshot_marks(study)
    return document(study, _stored_report(study, marks), plan_inputs), marks


def empty_report(study):
    return {"study": study.slug, "computed_at": None, "n_codings": 0, "last_coding_id": 0,
            "rounds": {round: snapshots.empty_round(round) for round in ROUNDS}}


def dashboard(study, plan_inputs=None):
    """The agreement page: the document, its rounds as HTML (charts and tables), and how
    fresh it is.

    The rounds' HTML depends on the stored snapshots alone (and the reader's language),
    so it is rendered once per snapshot and kept in the cache under a key naming them
    (rounds_key): drawing and rendering every chart took most of the page's time (about
    0.6 s at any study size). What changes between snapshots (the planner, the
    disagreements now, the sample, the freshness) is computed on every request."""
    doc, marks = _current(study, plan_inputs)
    key = rounds_key(study, marks)
    html = cache.get(key)
    if html is None:
        html = render_to_string("coding/_agreement_rounds.html",
                                {"rounds": rounds_charts(study, doc), "doc": doc})
        cache.set(key, html, CACHE_SECONDS)
    return {"doc": doc, "rounds_html": mark_safe(html), "job": snapshots.waiting_job(study),
            "new_codings": snapshots.new_codings(study),
            "snapshot_every": snapshots.snapshot_every()}


def rounds_charts(study, doc):
    """Each round of the document with its codebooks' charts (the rounds' HTML context)."""
    rounds = []
    for round in ROUNDS:
        part = doc["rounds"][round]
        # Lines over time are drawn for the main round; calibration is one short round.
        history = snapshots.history(study, round) if round == "main" else None
        rounds.append({**part, "books": [_book_charts(book, history)
                                         for book in part["codebooks"]]})
    return rounds


# Cached parts of the page live this long; their keys name the snapshots they show, so
# a new snapshot is a new key, and this only bounds how long an unused one stays.
CACHE_SECONDS = 24 * 3600
# Part of every cache key: raise it when the rounds' template or the charts change, so a
# cache shared across deployments never serves HTML drawn by older code.
CACHE_VERSION = 1


def snapshot_marks(study):
    """What names the snapshots the page shows, in one query that reads no report: per
    round, how many snapshots there are, the newest one's id and the latest creation time
    (snapshots are only added, so a new one changes the marks)."""
    rows = (AgreementSnapshot.objects.filter(study=study).order_by().values("round")
            .annotate(count=Count("id"), newest=Max("id"), at=Max("created_at"))
            .order_by("round").values_list("round", "count", "newest", "at"))
    return tuple((round, count, newest, at.isoformat()) for round, count, newest, at in rows)


def _key(kind, study, marks, *more):
    # The study's id and slug and the snapshots' times beside their ids: test databases
    # reuse ids after a rollback, never a creation time.
    named = repr((CACHE_VERSION, kind, study.pk, study.slug, marks, *more))
    return f"agreement-{kind}:{hashlib.sha256(named.encode()).hexdigest()}"


def rounds_key(study, marks):
    """The cache key of the rounds' HTML: the snapshots and the language it is drawn in."""
    return _key("rounds", study, marks, get_language())


def _stored_report(study, marks):
    """snapshots.stored_report, kept in the cache under the snapshots' marks (the reports
    are the largest rows the page reads)."""
    if not marks:
        return empty_report(study)
    key = _key("report", study, marks)
    report = cache.get(key)
    if report is None:
        report = snapshots.stored_report(study) or empty_report(study)
        cache.set(key, report, CACHE_SECONDS)
    return report


def _book_charts(book, history):
    questions = [{**q, "charts": _question_charts(q), "drift_chart": drift_chart(q, "drift"),
                  "calendar_chart": drift_chart(q, "drift_calendar")}
                 for q in book["questions"]]
    return {**book, "questions": questions, "bars": charts.alpha_bars(book["questions"]),
            "lines": charts.lines(history, book) if history else None,
            "drift": [_drift_section(questions, "drift", "drift_chart"),
                      _drift_section(questions, "drift_calendar", "calendar_chart")]}


def _drift_section(questions, kind, chart):
    """One drift table and its charts on the page: the questions with this kind of drift."""
    shown = [{"key": q["key"], "drift": q[kind], "chart": q[chart]}
             for q in questions if q[chart]]
    first = shown[0]["drift"] if shown else {}
    return {"kind": "batch" if kind == "drift" else "calendar", "questions": shown,
            "windows": first.get("windows", []), "rule": rule_words(first),
            "unit": CALENDAR_UNIT_NAMES.get(first.get("unit"), "")}


def drift_chart(q, kind="drift"):
    """Each coder's alpha against the others, window by window (`kind`: "drift", batches
    of codings, or "drift_calendar", days, weeks or months): charts.lines with coders
    for lines, the windows for the x axis and each flagged point marked."""
    drift = q.get(kind)
    if not drift or len(drift["windows"]) < 2:
        return None
    windows = drift["windows"]
    history = []
    for w, window in enumerate(windows):
        summary = {f"drift:{c['coder']}": {"value": p["alpha"], "flag": p["flag"]}
                   for c in drift["coders"] for p in c["points"]
                   if p["window"] == w and p["alpha"] is not None}
        history.append((w + 1, window, summary))
    fake = {"id": "drift", "questions": [{"key": c["coder"], "metric": True}
                                         for c in drift["coders"]]}
    if kind == "drift":
        axis = {"caption": _("batch of codings (each point: the units a coder coded in it)"),
                "tick": lambda n: _("batch %(n)s") % {"n": n},
                "point": lambda n, w: _("in batch %(n)s (to %(to)s)") % {
                    "n": n, "to": (w.get("to") or "")[:10]}}
        title = _("%(key)s: each coder's alpha against the others, batch by batch")
    else:
        axis = {"caption": _("%(unit)s starting (each point: the units a coder coded in it)")
                % {"unit": CALENDAR_UNIT_NAMES[drift["unit"]]},
                "tick": lambda n: windows[n - 1]["from"],
                "point": lambda n, w: _("from %(start)s to %(end)s") % {
                    "start": w["from"], "end": w["to"]}}
        title = _("%(key)s: each coder's alpha against the others, %(unit)s by %(unit)s")
    chart = charts.lines(history, fake, axis)
    if chart:
        chart["title"] = title % {"key": q["key"], "unit": CALENDAR_UNIT_NAMES.get(
            drift.get("unit"), "")}
    return chart


CALENDAR_UNIT_NAMES = {"day": gettext_lazy("day"), "week": gettext_lazy("week"),
                       "month": gettext_lazy("month")}


def _question_charts(q):
    if not q.get("metric"):
        return {}
    return {"pairs": charts.heatmap(q["confusion"], _("%(key)s: coder against coder (pooled)")
                                    % {"key": q["key"]}, _("one coder"), _("another coder")),
            "decisions": [{"coder": row["coder"], "chart": charts.heatmap(
                row["confusion"], _("%(key)s: %(coder)s against the decisions") % {
                    "key": q["key"], "coder": row["coder"]},
                row["coder"], _("decision"))} for row in q["against_decisions"]]}

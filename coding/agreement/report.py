"""The reliability report as people read it: thresholds, the sample-size plan, the
procedure, and a block ready to paste into a paper.

`document` is the one function the agreement page, the API and
`manage.py agreement_report` call, so all three show the same numbers.
"""

import hashlib
import re
import unicodedata

from django import forms
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max, Q
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext, pgettext, pgettext_lazy

from coding.agreement import charts, sample_size, snapshots
from coding.agreement.metrics import AGAINST_DECISIONS_RULE, rule_words
from coding.agreement.reliability import N_BOOT, ROUNDS
from coding.models import (
    AgreementSnapshot, CodebookVersion, Item, Question, Role,
)
from coding.models.reliability import SampleDraw
from coding.models.tallies import tallies

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


def document(study, report, plan_inputs=None, language=None, *, new_codings=0):
    """Everything the page, the API and the command show, as plain JSON values; `text`,
    the block for a paper, in `language` (paper_text; default English).

    The block is written only from a report that exists and is current: `new_codings`
    is how many independent codings arrived after a stored report was computed (0 for one
    computed now). Otherwise `text` is None and `text_withheld` says why; `freshness`
    holds when the figures were computed, how many codings came since, and the last
    computation's failure when it failed after them (snapshots.last_failure)."""
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
    result["language"] = language or TEXT_LANGUAGE
    computed = report["computed_at"] is not None
    # Alpha's point values brought up to date since the full report (estimates.py):
    # {base_at, base_n_codings, base_last_coding_id, new_codings}, or None.
    result["estimate"] = report.get("estimate")
    result["freshness"] = {
        "computed_at": report["computed_at"], "new_codings": new_codings,
        # The page counts new codings up to one past NEW_COUNTED.
        "new_codings_exact": new_codings <= NEW_COUNTED,
        "estimate": result["estimate"],
        "current": computed and not new_codings,
        "last_failure": snapshots.last_failure(study, report["computed_at"])}
    result["text"], result["text_withheld"] = None, text_withheld(report, new_codings)
    if result["text_withheld"] is None:
        result["text"] = paper_text(result, study, result["language"])
    return result


def text_withheld(report, new_codings):
    """Why there is no block for a paper, or None when it can be written."""
    if report["computed_at"] is None:
        return _("The methods text is written from a computed agreement report, and none has "
                 "been computed yet: recompute first.")
    if not report["n_codings"]:
        return _("No independent coding had been submitted when these figures were "
                 "computed: the methods text has nothing to report yet.")
    if report.get("estimate"):
        return _("The newest figures are estimates of alpha made between two full reports: "
                 "the methods text waits for the full report, with its intervals, which is "
                 "computed in the background (or recompute now).")
    if new_codings:
        return ngettext(
            "%(n)s independent coding arrived after these figures were computed: recompute, "
            "and the methods text will count it.",
            "%(n)s independent codings arrived after these figures were computed: recompute, "
            "and the methods text will count them.", new_codings) % {
                "n": new_codings_shown(new_codings)}
    return None


def describe_sample(study):
    """The reliability sample as drawn, from the newest kept draw (SampleDraw): how, when
    (before or after coding), from which pool, and the plan recorded with it; every
    earlier draw beside it, newest first. Its text is in the active language."""
    draws = [_draw(study, row) for row in
             SampleDraw.objects.filter(study=study).order_by("-drawn_at", "-id")]
    if draws:
        return {**draws[0], "draws": draws}
    pool = main_items(study)
    sample = {"drawn": False, "size": pool, "pool": pool, "plan": None, "draws": []}
    return {**sample, "text": _sample_text(study, sample)}


def _draw(study, row):
    drawn = row.record
    return {"drawn": True, "id": row.pk, "drawn_at": row.drawn_at.isoformat(),
            "drawn_by": row.drawn_by, "size": row.size, "pool": row.pool,
            "how": {key: drawn.get(key) for key in ("share", "count", "stratify_by", "seed",
                                                   "coded_before", "kept_for_overlap",
                                                   "overlap")},
            "text": _drawn_text(study, drawn), "plan": drawn.get("plan")}


def _sample_text(study, sample):
    """The sample in words (describe_sample's), in the active language."""
    if not sample["drawn"]:
        return _("every main-round item (%(pool)s), each assigned to %(overlap)s coders; "
                 "no sample was drawn") % {"pool": sample["pool"], "overlap": study.overlap}
    return _drawn_text(study, {**sample["how"], "pool": sample["pool"], "size": sample["size"],
                               "drawn_at": sample["drawn_at"], "plan": sample["plan"]})


def _drawn_text(study, drawn):
    pool, size, day = drawn["pool"], drawn["size"], drawn["drawn_at"][:10]
    if size >= pool:
        what = _("all %(pool)s main-round items (the draw took every item)") % {"pool": pool}
    else:
        asked = (_("a share of %(share)s") % {"share": f"{drawn['share']:g}"}
                 if drawn.get("share") is not None
                 else _("%(count)s items asked for") % {"count": drawn.get("count")})
        figures = {"size": size, "pool": pool, "asked": asked, "seed": drawn["seed"],
                   "stratum": drawn.get("stratify_by")}
        what = (_("a simple random sample of %(size)s of the %(pool)s main-round items "
                  "(%(asked)s, seed %(seed)s)") if not drawn.get("stratify_by") else
                _("a random sample stratified by %(stratum)s of %(size)s of the %(pool)s "
                  "main-round items (%(asked)s, seed %(seed)s)")) % figures
    coded = drawn.get("coded_before")
    if coded is None:
        when = _("drawn %(day)s") % {"day": day}
    elif coded == 0:
        when = _("drawn %(day)s, before any item was coded") % {"day": day}
    elif drawn.get("kept_for_overlap"):
        when = _("drawn %(day)s, after coding had begun (%(coded)s of the %(pool)s items "
                 "already coded; %(kept)s items already coded by more than one coder were "
                 "kept in the sample whatever the draw)") % {
                     "day": day, "coded": coded, "pool": pool, "kept": drawn["kept_for_overlap"]}
    else:
        when = _("drawn %(day)s, after coding had begun (%(coded)s of the %(pool)s items "
                 "already coded)") % {"day": day, "coded": coded, "pool": pool}
    text = _("%(what)s, %(when)s, each item in it assigned to %(overlap)s coders") % {
        "what": what, "when": when, "overlap": drawn.get("overlap") or study.overlap}
    plan = drawn.get("plan")
    if plan:
        text += _("; the plan recorded with the draw asked for %(units)s units to test "
                  "α ≥ %(alpha)s at p = %(p)s with the rarest category at %(share)s "
                  "(%(source)s)") % {
                      "units": plan["units_needed"], "alpha": f"{plan['alpha_min']:.3f}",
                      "p": f"{plan['significance']:g}", "share": f"{plan['smallest_share']:.1%}",
                      "source": share_source_words(plan["share_source"])}
    return text


def share_source_words(source):
    """sample_size.plan's `share_source` (stored in English with a draw's plan) in the
    active language; a wording it does not know stays as stored."""
    if source == "given":
        return pgettext("the smallest share, as the planner's user gave it", "given")
    if found := re.fullmatch(r"observed: “(.*)” of (\S+), (\S+) of its values so far", source):
        return _("observed: “%(value)s” of %(key)s, %(share)s of its values so far") % dict(
            zip(("value", "key", "share"), found.groups()))
    if found := re.fullmatch(r"nothing coded yet: equal shares of the (\d+) categories of "
                             r"(\S+)", source):
        return _("nothing coded yet: equal shares of the %(n)s categories of %(key)s") % dict(
            zip(("n", "key"), found.groups()))
    if source == "nothing coded yet: two equally common categories":
        return _("nothing coded yet: two equally common categories")
    return source


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
    independent codings differ) now, the stored review list's rows of alive items, from
    the study's tallies (kept as the rows are written: coding/models/tallies.py)."""
    counts = tallies(study)
    found, decided = counts.get("disagreements:main", 0), counts.get("decided:main", 0)
    return {"found": found, "decided": decided, "undecided": found - decided}


def main_items(study):
    """The study's alive main-round items, from its tallies."""
    return sum(n for name, n in tallies(study).items() if name.startswith("items:main:"))


def procedure(study, counts=None):
    """How disagreements are settled, in words, from the study's settings, and where the
    study stands now (how many are decided and how many wait), in the active language."""
    counts = counts or {"found": 0, "decided": 0, "undecided": 0}
    steps = [_("Values on which the coders' independent codings agreed were recorded as "
               "decided (unanimous).")]
    if study.discussion_step:
        steps.append(_("Where they differed, the item's coders were shown the disagreement and "
                       "could revise their values; revisions are kept apart and never used "
                       "for reliability, and values they then agreed on were recorded as "
                       "consensus."))
    who = (_("an adjudicator") if study.allow_self_adjudication
           else _("an adjudicator who had not coded the item"))
    if not counts["found"]:
        steps.append(_("Disagreements are decided by %(who)s; none has been found so far.")
                     % {"who": who})
    elif counts["undecided"]:
        decided = ngettext("%(decided)s has been decided", "%(decided)s have been decided",
                           counts["decided"]) % counts
        undecided = ngettext("%(undecided)s is still undecided",
                             "%(undecided)s are still undecided", counts["undecided"]) % counts
        steps.append(_("Disagreements are decided by %(who)s, who records why. Of the "
                       "%(found)s disagreements found so far (item × variable), %(decided)s "
                       "and %(undecided)s.") % {"who": who, "found": counts["found"],
                                                "decided": decided, "undecided": undecided})
    else:
        steps.append(_("All %(found)s disagreements found (item × variable) were decided by "
                       "%(who)s; every decision is kept with who made it, when and why.")
                     % {"found": counts["found"], "who": who})
    return _sentences(steps)


def _sentences(sentences):
    """Sentences joined as the active language writes them (a space in English, nothing
    after Chinese full stops)."""
    return ("" if _wide_language() else " ").join(sentences)


def _wide_language():
    """Whether the active language writes with full-width punctuation and no spaces
    between sentences (Chinese)."""
    return (get_language() or "").startswith("zh")


# --- the block to paste into a paper --------------------------------------------------

# The languages the block is written in (issue 20): English, as most journals take it,
# by default, and every language of the pages (Chinese for theses and Chinese journals).
TEXT_LANGUAGES = dict(settings.LANGUAGES)
TEXT_LANGUAGE = "en"


def text_language(value):
    """A requested language of the block ("en", "zh-hans"; any case, "_" for "-") as one
    of TEXT_LANGUAGES, or None when it is not one."""
    code = str(value or "").strip().lower().replace("_", "-")
    return code if code in TEXT_LANGUAGES else None


def paper_text(doc, study, language=TEXT_LANGUAGE, titles=None):
    """The block for a paper in `language`: one generator for every language, run under
    translation.override. The sample, the procedure and the questions' texts (the
    codebook's translation for the language where its version has one, else as written)
    are written in it; figures, keys, names and Greek letters stay as they are."""
    titles = question_titles(doc, study) if titles is None else titles
    with translation.override(language):
        return _paper_text(doc, study, titles.get(language, {}))


def _paper_text(doc, study, titles):
    main, calibration = doc["rounds"]["main"], doc["rounds"]["calibration"]
    coders = len(main["coders"])
    lines = [_reliability_paragraph(doc, study, main), "", _calibration_paragraph(calibration),
             "", _sentences([_("Disagreements."), procedure(study, doc["disagreements"]),
                             *_decision_counts(main)]), "",
             ngettext("Table. Intercoder reliability, main round (%(coders)s coder).",
                      "Table. Intercoder reliability, main round (%(coders)s coders).", coders)
             % {"coders": _number(coders)}, ""]
    lines += _table(main)
    variables = _variables(main, titles)
    if variables:
        lines += ["", variables]
    others = _other_coefficients(main)
    if others:
        lines += ["", _("Other coefficients, main round (95%% bootstrap intervals, "
                        "%(resamples)s resamples of units):") % {"resamples": f"{N_BOOT:,}"},
                  ""] + others
    return "\n".join(lines).rstrip() + "\n"


def question_titles(doc, study):
    """{language: {(codebook id, question key): text}}: the main round's questions in every
    language their codebook version is translated into. A published version's translations
    never change, so they are kept in the cache under the report they belong to: one query
    the first time, none after."""
    books = tuple((book["id"], book["version"]) for book in doc["rounds"]["main"]["codebooks"]
                  if book.get("version") is not None)
    if not books:
        return {}
    key = _key("titles", study, doc["computed_at"], books)
    titles = cache.get(key)
    if titles is None:
        which = Q()
        for book, number in books:
            which |= Q(codebook_id=book, number=number)
        titles = {}
        for book, translations in (CodebookVersion.objects.filter(which)
                                   .values_list("codebook_id", "translations")):
            for language, block in (translations or {}).items():
                for question, texts in block.get("questions", {}).items():
                    if texts.get("text"):
                        titles.setdefault(language, {})[(book, question)] = texts["text"]
        cache.set(key, titles, CACHE_SECONDS)
    return titles


def _reliability_paragraph(doc, study, main):
    coders = len(main["coders"])
    figures = {"coders": _number(coders, capital=True), "resamples": f"{N_BOOT:,}",
               "sample": _sample_text(study, doc["sample"]),
               "items": main["items_with_two_or_more"]}
    return _sentences([s % figures for s in (
        ngettext("Reliability. %(coders)s coder coded the reliability sample independently: "
                 "%(sample)s.", "Reliability. %(coders)s coders coded the reliability sample "
                 "independently: %(sample)s.", coders),
        _("So far %(items)s items were coded by two or more coders."),
        _("Agreement was computed on each coder's last coding made before any discussion of "
          "the item; revisions after discussion and adjudicated values were not used."),
        _("For each variable we report Krippendorff's alpha at its level of measurement "
          "(nominal, ordinal, interval or ratio; multiple-choice variables with the MASI "
          "distance) with a 95%% bootstrap confidence interval (%(resamples)s resamples of "
          "units), percent agreement, and kappa (Cohen's for two coders, Fleiss' for more) "
          "with its own bootstrap interval."),
        _("Alpha counts every answer: for number variables, special answers such as \"not "
          "reported\" count as answers (a special answer against any other answer is a full "
          "disagreement; two numbers differ by their distance scaled to the widest gap), and "
          "alpha over the numeric answers alone is reported beside it."),
        _("A conditional variable whose condition was not met for a coder was treated as not "
          "applicable and left out of that variable's units; unanswered applicable variables "
          "were treated as missing; both are counted in the table."),
        _("Following Krippendorff (2004, §11.4), a variable is called reliable when the lower "
          "bound of its alpha interval is at least .800, and usable for tentative "
          "conclusions only when it is at least .667."))])


def _calibration_paragraph(calibration):
    if not calibration["n_codings"]:
        return _("Calibration. No calibration round was run.")
    alphas = [q["alpha"]["value"] for book in calibration["codebooks"]
              for q in book["questions"] if q.get("alpha") and q["alpha"]["value"] is not None]
    spread = (ngettext("; alpha ranged from %(low)s to %(high)s across %(n)s variable",
                       "; alpha ranged from %(low)s to %(high)s across %(n)s variables",
                       len(alphas)) % {"low": _alpha(min(alphas)), "high": _alpha(max(alphas)),
                                       "n": len(alphas)} if alphas else "")
    coders = len(calibration["coders"])
    return _sentences([
        ngettext("Calibration. Before the main round, %(coders)s coder coded %(items)s "
                 "calibration items%(spread)s.", "Calibration. Before the main round, "
                 "%(coders)s coders coded %(items)s calibration items%(spread)s.", coders)
        % {"coders": _number(coders), "items": calibration["items"], "spread": spread},
        _("These codings are reported apart and are not part of the figures below.")])


def _decision_counts(main):
    """The sentence on the decisions at the last computation, as a list (empty: none)."""
    counts = main.get("decisions") or {}
    if not counts:
        return []
    parts = [pgettext("how many values were decided in one way", "%(n)s %(method)s")
             % {"n": n, "method": DECISION_METHOD_WORDS.get(method, method)}
             for method, n in sorted(counts.items())]
    return [_("At the last computation %(n)s values (item × variable) had a decision: "
              "%(parts)s.") % {"n": sum(counts.values()), "parts": _listed(parts)}]


def _listed(parts):
    """Items of a list in a sentence: "a, b" in English, "a、b" in Chinese."""
    return ("、" if _wide_language() else ", ").join(str(part) for part in parts)


DECISION_METHOD_WORDS = {"unanimous": gettext_lazy("unanimous"),
                         "single": gettext_lazy("single coder"),
                         "consensus": gettext_lazy("consensus"),
                         "adjudicated": gettext_lazy("adjudicated")}


def _columns():
    """The table's heads in the active language (those with "%" are formatted, as the
    catalog holds them with "%%", shared with the page's)."""
    return (_("Variable"), pgettext("level of measurement", "Level"), _("Units"), _("Coders"),
            _("α [95%% CI]") % {}, _("α numbers only"), _("Kappa [95%% CI]") % {},
            _("%% agreement") % {}, _("N/A"), _("Missing"))


LEVEL_WORDS = {"nominal": gettext_lazy("nominal"), "ordinal": gettext_lazy("ordinal"),
               "interval": gettext_lazy("interval"), "ratio": gettext_lazy("ratio"),
               "masi": pgettext_lazy("level of measurement", "masi"),
               "mixed": pgettext_lazy("level of measurement", "mixed")}
WEIGHT_WORDS = {"quadratic": pgettext_lazy("weights", "quadratic"),
                "linear": pgettext_lazy("weights", "linear")}


def _with_interval(figure):
    if not figure or figure.get("value") is None:
        return "–"
    if figure.get("low") is None:
        return _alpha(figure["value"])
    return f"{_alpha(figure['value'])} [{_alpha(figure['low'])}, {_alpha(figure['high'])}]"


def _rows(main, with_book=False):
    several = len(main["codebooks"]) > 1
    for book in main["codebooks"]:
        for q in book["questions"]:
            if q.get("metric"):
                name = f"{book['name']}: {q['key']}" if several else q["key"]
                yield (name, q, book) if with_book else (name, q)


def _table(main):
    rows = []
    for name, q in _rows(main):
        alpha = q["alpha"]
        interval = _("undefined") if alpha["value"] is None else _with_interval(alpha)
        agreement = ("–" if q["percent_agreement"] is None
                     else f"{100 * q['percent_agreement']:.1f}%")
        kappa = q.get("kappa") or {}
        kappa_text = (_with_interval(kappa) + f" ({kappa['name'].split(chr(39))[0]})"
                      if kappa.get("value") is not None else "–")
        level = q["alpha"].get("level", q["metric"])
        rows.append((name, str(LEVEL_WORDS.get(level, level)), str(q["units"]),
                     str(q["coders"]), interval, _with_interval(q.get("alpha_numbers")),
                     kappa_text, agreement, str(q["not_applicable"]), str(q["missing"])))
    columns = _columns()
    widths = [max(_width(row[i]) for row in [columns, *rows]) for i in range(len(columns))]
    return ["  ".join(cell + " " * (width - _width(cell)) for cell, width in zip(row, widths))
            .rstrip() for row in [columns, *rows]]


def _width(text):
    """Columns the text takes in a monospaced font: Chinese characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _variables(main, titles):
    """The table's variables with their questions' texts (`titles`: {(codebook id, key):
    text} in the text's language; a question without one reads as written)."""
    named = [pgettext("a variable and its question", "%(variable)s (“%(text)s”)") % {
        "variable": name, "text": titles.get((book["id"], q["key"])) or q["text"]}
        for name, q, book in _rows(main, with_book=True) if q.get("text")]
    if not named:
        return ""
    return _("Variables: %(variables)s.") % {
        "variables": ("；" if _wide_language() else "; ").join(named)}


def _other_coefficients(main):
    """One line a variable: every coefficient the page shows beyond alpha and kappa."""
    lines = []
    for name, q in _rows(main):
        kappa = (q.get("kappa") or {}).get("name")
        parts = [(c["name"] if c["weights"] == "identity" else
                  _("%(name)s (%(weights)s weights)") % {
                      "name": c["name"],
                      "weights": WEIGHT_WORDS.get(c["weights"], c["weights"])})
                 + f" {_with_interval(c)}" for c in q.get("coefficients") or []
                 if c["name"] != kappa]
        two = q.get("two_coders") or {}
        for key, label in (("pabak", "PABAK"), ("bias_index", _("bias index")),
                           ("prevalence_index", _("prevalence index"))):
            if two.get(key):
                parts.append(f"{label} {_with_interval(two[key])}")
        test = two.get("stuart_maxwell")
        if test:
            parts.append(f"Stuart–Maxwell χ²({test['df']}) = {test['statistic']:.2f}, "
                         f"p = {test['p']:.3f}")
        if parts:
            lines.append(_("%(variable)s: %(coefficients)s.") % {
                "variable": name,
                "coefficients": ("；" if _wide_language() else "; ").join(parts)})
    return lines


def _alpha(value):
    return "–" if value is None else f"{value:.3f}"


def _number(n, capital=False):
    """A count as English writes it in a sentence ("two coders"); other languages: digits."""
    if _wide_language():
        return str(n)
    words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    word = words[n] if 0 <= n < len(words) else str(n)
    return word[:1].upper() + word[1:] if capital else word


# --- what the page and the API read -------------------------------------------------

def current_document(study, plan_inputs=None, language=None):
    """The document of the newest snapshots (the API's and the page's numbers)."""
    return _current(study, plan_inputs, language)[0]


def _current(study, plan_inputs=None, language=None):
    """(the document of the newest snapshots, their marks: see snapshot_marks)."""
    snapshots.run_waiting(study)
    marks = snapshot_marks(study)
    # Counted up to one past NEW_COUNTED: the page says "more than" past it, and a study
    # whose first report is still to come does not count every coding on each view.
    return document(study, _stored_report(study, marks), plan_inputs, language,
                    new_codings=snapshots.new_codings(study, limit=NEW_COUNTED + 1)), marks


NEW_COUNTED = 10_000


def new_codings_shown(n):
    """How many new codings, as the page and the methods text's note say it."""
    return (_("more than %(n)s") % {"n": f"{NEW_COUNTED:,}"} if n > NEW_COUNTED
            else f"{n:,}")


def paper_texts(study, doc):
    """The block for a paper in every language, the reader's first (the page offers each
    with its own copy button): [{code, name, text, first}]."""
    if doc["text"] is None:
        return []
    reader = get_language()
    order = sorted(TEXT_LANGUAGES, key=lambda code: code != reader)
    titles = question_titles(doc, study)
    return [{"code": code, "name": TEXT_LANGUAGES[code], "first": i == 0,
             "text": doc["text"] if code == doc["language"] else
             paper_text(doc, study, code, titles)} for i, code in enumerate(order)]


def empty_report(study):
    return {"study": study.slug, "computed_at": None, "n_codings": 0, "last_coding_id": 0,
            "estimate": None, "rounds": {round: snapshots.empty_round(round) for round in ROUNDS}}


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
    return {"doc": doc, "rounds_html": mark_safe(html), "paper_texts": paper_texts(study, doc),
            "share_source": share_source_words(doc["planning"]["share_source"]),
            "job": snapshots.waiting_job(study),
            "new_codings": doc["freshness"]["new_codings"],
            "new_codings_shown": new_codings_shown(doc["freshness"]["new_codings"]),
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
        report = snapshots.stored_report(study, estimates=True) or empty_report(study)
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
    shown = [{"key": q["key"], "text": q.get("text", ""), "drift": q[kind], "chart": q[chart]}
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

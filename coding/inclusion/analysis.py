"""Included against not-included papers, on every binary and categorical coded field.

Inclusion comes from one source, named in the result: the method tracker's
(coding.catalog.landings.paper_inclusion: a paper is included when a framework's main
branch gained an option of a method the paper is the source of, the export's
``frameworks_landed``), or an inclusion list the team imported (coding.inclusion.lists:
papers it names are included). The tracker is the default when it has source papers.
With more than one source, each other source is compared with the one used, paper by
paper over the same population (both, one only, neither, Cohen's kappa). The
population is the study's papers with a current decision, optionally narrowed by
decided values (``label=rl_method``, ``scope=general``), as the study's
analysis narrows them to general RL methods.

For each yes/no or single-choice question, and each option of a multiple-choice
question (chosen or not), a table of the decided values by inclusion:

- 2 x 2 tables: Fisher's exact test, two-sided (scipy.stats.fisher_exact), and the
  sample odds ratio ad / bc with its 95% interval (scipy.stats.contingency.odds_ratio,
  kind "sample": Woolf's logit interval). Orientation: rows are the first answer (yes,
  chosen, or the codebook's first option) then the second; columns included then not
  included; so the odds ratio is the odds of inclusion among papers with the first
  answer over the odds among the others: above 1, the first answer goes with inclusion.
- Larger tables (R x 2, a single choice with more than two answers used): the
  Freeman-Halton extension of Fisher's test (freeman_halton below). Exact where the
  tables with the observed margins number at most EXACT_TABLES: every one enumerated,
  p the sum of the probabilities of those no more probable than the observed table
  (with R's fisher.test relative tolerance of 1e-7). Beyond that, Monte Carlo: p from
  RESAMPLES random tables with the same margins (scipy, seed SEED, so the same data give
  the same p). Each answer's odds ratio against all other answers, with its interval.
- Across every test of the analysis, Holm's (1979) step-down adjustment (family-wise
  error) and Benjamini-Hochberg's (1995) false discovery rate, both via statsmodels.

Values not decided (undecided, missing, not applicable) leave a paper out of that
field's table; they are counted.
"""

import numpy as np
from django.utils.translation import gettext, gettext_noop

from coding.codebooks.versions import YES_NO
from coding.models import Decision, InclusionList, Item, MethodLink, Question
from ingest.models import Document

RESAMPLES = 20_000
SEED = 0
EXACT_TABLES = 1_000_000  # up to this many tables with the observed margins: exact p
TOLERANCE = 1e-7  # a table counts as "no more probable" within this relative error
CONFIDENCE = 0.95
# The analysis's explanations are kept in English in what it returns (the API's, the
# command's and the export's words); the page puts them in the reader's language
# (coding.inclusion.words.in_reader_language), so each is marked and kept as it is here.
ORIENTATION = gettext_noop(
    "Rows: the first answer (yes, chosen, or the codebook's first option), then the rest; "
    "columns: included, then not included. The odds ratio is the odds of inclusion with the "
    "first answer over the odds without it: above 1, that answer goes with inclusion.")
TEST_RULE_WORDS = gettext_noop(
    "2 x 2 tables: Fisher's exact test, two-sided, and the sample odds ratio ad/bc with "
    "Woolf's 95%% interval. Larger tables (a question with more than two answers used): the "
    "Freeman-Halton extension of Fisher's test, two-sided, exact (every table with the "
    "observed margins enumerated) when there are at most %(exact)s such tables, "
    "else Monte Carlo over %(resamples)s random tables with the same margins (seed %(seed)s); "
    "each row says which. Each answer's odds ratio is against all other answers.")
TEST_RULE_VALUES = {"exact": f"{EXACT_TABLES:,}", "resamples": f"{RESAMPLES:,}", "seed": SEED}
TEST_RULE = TEST_RULE_WORDS % TEST_RULE_VALUES
ADJUSTMENT = gettext_noop(
    "p-values adjusted across every test shown: Holm (1979), controlling the family-wise "
    "error rate, and Benjamini-Hochberg (1995), controlling the false discovery rate.")


def tracked(study):
    """Whether the study's inclusion comes from the method tracker (any source paper)."""
    return MethodLink.objects.filter(method__study=study, kind=MethodLink.Kind.SOURCE).exists()


def parse_population(pairs):
    """["label=rl_method", ...] or "label=rl_method,scope=general" -> {key: value};
    ValueError naming the bad entry."""
    if isinstance(pairs, str):
        pairs = [p for p in pairs.split(",") if p.strip()]
    found = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(gettext("population filter %(pair)r must read question=value")
                             % {"pair": pair})
        found[key.strip()] = value.strip()
    return found


TRACKER, LIST = "tracker", "list:"
TRACKER_SOURCE = gettext_noop(
    "the method tracker: the frameworks each paper's method landed in, read from their git "
    "histories (the export's frameworks_landed), not an imported included_in field.")
LIST_SOURCE = gettext_noop(
    "the inclusion list %(name)s (file %(file)s, SHA-256 %(sha)s, imported %(date)s by "
    "%(who)s): a paper it names is included.")
NOT_AVAILABLE = gettext_noop(
    "No paper of this study is the source of a tracked method and no inclusion list was "
    "imported: inclusion comes from the method tracker (the catalog's methods and their "
    "landings) or from a list of included papers the team already has.")
NOTHING_TO_COMPARE = gettext_noop(
    "Nothing to compare: one answer only, or every paper on one side of inclusion.")


def sources(study):
    """The inclusion sources the study has: "tracker" when the catalog has source papers,
    then "list:NAME" for each imported inclusion list."""
    found = [TRACKER] if tracked(study) else []
    return found + [LIST + name for name in InclusionList.objects.filter(study=study)
                    .order_by("name").values_list("name", flat=True)]


def inclusion_by(study, source):
    """{document id: {included_in, ...}} as the source says."""
    from coding.catalog.landings import paper_inclusion
    from coding.inclusion.lists import listed_inclusion

    if source == TRACKER:
        return paper_inclusion(study)
    return listed_inclusion(InclusionList.objects.get(study=study,
                                                      name=source.removeprefix(LIST)))


def source_words(study, source, words=str):
    """Where inclusion comes from, in words (`words`: gettext for the reader's language;
    the stored analysis keeps English)."""
    if source == TRACKER:
        return words(TRACKER_SOURCE)
    found = InclusionList.objects.select_related("imported_by").get(
        study=study, name=source.removeprefix(LIST))
    return words(LIST_SOURCE) % {
        "name": repr(found.name), "file": found.file_name or words(gettext_noop("without a name")),
        "sha": found.sha256[:12], "date": f"{found.imported_at:%Y-%m-%d}",
        "who": (found.imported_by.username if found.imported_by
                else words(gettext_noop("a removed account")))}


def analyse(study, population=None, source=None):
    """The analysis as plain JSON values (the page, the API, the command and the export),
    with inclusion from `source` (see `sources`; None: the tracker if it has source papers,
    else the first list)."""
    population = dict(population or {})
    available = sources(study)
    source = source or (available[0] if available else TRACKER)
    if source not in available and (source != TRACKER or available):
        raise ValueError(gettext("no inclusion source %(source)r in this study (sources: "
                                 "%(sources)s)")
                         % {"source": source, "sources": ", ".join(available) or gettext("none")})
    result = {"study": study.slug, "population": population, "orientation": ORIENTATION,
              "test_rule": TEST_RULE, "adjustment": ADJUSTMENT, "confidence": CONFIDENCE,
              "source_key": source, "sources": available, "comparisons": [],
              "source": TRACKER_SOURCE if not available else source_words(study, source),
              "fields": []}
    if not available:
        return result | {"available": False, "reason": NOT_AVAILABLE}
    landed = inclusion_by(study, source)
    items = dict(Item.objects.alive().filter(study=study, document__kind="paper")
                 .values_list("pk", "document_id"))
    values = {}
    for item, key, value in (Decision.objects.current()
                             .filter(item_id__in=list(items)).order_by()
                             .values_list("item_id", "question_key", "value")):
        values.setdefault(item, {})[key] = value
    questions = _questions(study)
    unknown = [key for key in population if key not in {q.key for q in questions}]
    if unknown:
        raise ValueError(gettext("population filter names no paper question: %(keys)s")
                         % {"keys": ", ".join(unknown)})
    chosen = [item for item, decided in values.items()
              if all(_matches(decided.get(k), v) for k, v in population.items())]
    included = {item: bool(landed.get(items[item], {}).get("included_in")) for item in chosen}
    result |= {"available": True, "papers": len(chosen),
               "included": sum(included.values()),
               "not_included": len(chosen) - sum(included.values())}
    for question in questions:
        if question.key in population:
            continue
        for field in _fields(question):
            result["fields"].append(_field(field, chosen, values, included))
    _adjust(result["fields"])
    for other in available:
        if other != source:
            result["comparisons"].append(_compare(other, inclusion_by(study, other), chosen,
                                                  items, included))
    return result


SHOWN_DIFFERENCES = 50


def _compare(source, landed, chosen, items, included):
    """How another source's inclusion agrees with the one used, paper by paper: counts of
    a 2 x 2 table, the share that agree, Cohen's kappa, and the first papers that differ."""
    other = {item: bool(landed.get(items[item], {}).get("included_in")) for item in chosen}
    both = sum(included[i] and other[i] for i in chosen)
    used_only = sum(included[i] and not other[i] for i in chosen)
    other_only = sum(other[i] and not included[i] for i in chosen)
    neither = len(chosen) - both - used_only - other_only
    total = len(chosen)
    kappa = None
    if total:
        observed = (both + neither) / total
        expected = ((both + used_only) * (both + other_only)
                    + (neither + other_only) * (neither + used_only)) / total ** 2
        kappa = None if expected == 1 else (observed - expected) / (1 - expected)
    differing = sorted(items[i] for i in chosen if included[i] != other[i])
    keys = dict(Document.objects.filter(pk__in=differing[:SHOWN_DIFFERENCES])
                .values_list("pk", "key"))
    return {"source": source, "both": both, "used_only": used_only, "other_only": other_only,
            "neither": neither, "agreement": (both + neither) / total if total else None,
            "kappa": kappa, "differing": len(differing),
            "differing_papers": sorted(keys.values())}


def _questions(study):
    found = []
    for codebook in study.codebooks.filter(applies_to="paper").order_by("pk"):
        version = codebook.current_version()
        if version is not None:
            found += [q for q in version.questions.prefetch_related("options")
                      if q.kind in (Question.Kind.YES_NO, Question.Kind.SINGLE,
                                    Question.Kind.MULTIPLE)]
    return found


def _matches(decided, wanted):
    return decided == wanted or (isinstance(decided, list) and wanted in decided)


def _fields(question):
    """(name, question key, kind, answers in order, reader of a decided value)."""
    if question.kind == Question.Kind.YES_NO:
        return [(question.key, question.key, "yes_no", list(YES_NO), _single)]
    options = [o.value for o in question.options.all()]
    if question.kind == Question.Kind.SINGLE:
        return [(question.key, question.key, "single", options, _single)]
    return [(f"{question.key}__{option}", question.key, "option", ["chosen", "not chosen"],
             lambda value, option=option: _option(value, option)) for option in options]


def _single(value):
    return value if isinstance(value, str) else None


def _option(value, option):
    if not isinstance(value, list):
        return None
    return "chosen" if option in value else "not chosen"


def _field(field, chosen, values, included):
    from scipy import stats

    name, key, kind, answers, read = field
    counts = {answer: [0, 0] for answer in answers}
    left_out = 0
    for item in chosen:
        answer = read(values[item].get(key))
        if answer not in counts:
            left_out += 1
            continue
        counts[answer][0 if included[item] else 1] += 1
    rows = [a for a in answers if sum(counts[a])]
    table = [counts[a] for a in rows]
    inc_total, out_total = (sum(t[0] for t in table), sum(t[1] for t in table))
    row = {"name": name, "question": key, "kind": kind, "answers": rows,
           "included": [t[0] for t in table], "not_included": [t[1] for t in table],
           # Each answer's share of its column: of the included (not included) papers
           # in this field's table, how many gave this answer.
           "included_share": [t[0] / inc_total if inc_total else None for t in table],
           "not_included_share": [t[1] / out_total if out_total else None for t in table],
           "left_out": left_out, "test": None, "p": None, "p_method": None, "odds_ratio": None,
           "odds_ratios": [], "note": ""}
    if len(rows) < 2 or not all(sum(column) for column in zip(*table)):
        row["note"] = NOTHING_TO_COMPARE
        return row
    if len(rows) == 2:
        row["test"] = "fisher"
        row["p"] = float(stats.fisher_exact(table, alternative="two-sided").pvalue)
        row["p_method"] = "exact"
        row["odds_ratio"] = {"answer": rows[0], **_odds(table)}
        return row
    row["test"] = "freeman_halton"
    row["p"], row["p_method"] = freeman_halton(table)
    totals = np.sum(table, axis=0)
    for answer, counts_ in zip(rows, table):
        rest = (totals - np.array(counts_)).tolist()
        row["odds_ratios"].append({"answer": answer, **_odds([counts_, rest])})
    return row


def freeman_halton(table):
    """(p, how) of the Freeman-Halton test of an R x 2 table, two-sided: how is "exact"
    when at most EXACT_TABLES tables share its margins (all enumerated), else "monte
    carlo: RESAMPLES tables, seed SEED"."""
    from scipy import stats

    table = np.asarray(table, dtype=np.int64)
    rows, first = table.sum(axis=1), int(table[:, 0].sum())
    if _tables_with_margins(rows, first) <= EXACT_TABLES:
        return _exact_p(table, rows, first), "exact"
    method = stats.MonteCarloMethod(n_resamples=RESAMPLES, rng=np.random.default_rng(SEED))
    return (float(stats.fisher_exact(table, method=method).pvalue),
            f"monte carlo: {RESAMPLES} tables, seed {SEED}")


def _tables_with_margins(rows, first):
    """How many R x 2 tables have these row totals and this first column's total."""
    ways = np.zeros(first + 1)
    ways[0] = 1
    for total in rows:
        ways = np.convolve(ways, np.ones(total + 1))[:first + 1]
    return ways[first]


def _exact_p(table, rows, first):
    """Every first column x (0 <= x_i <= row total, summing to `first`), built row by row
    and pruned to partial columns some table completes; each table's log probability
    sum log C(r_i, x_i) - log C(N, first) (the multivariate hypergeometric)."""
    from scipy.special import gammaln

    def log_choose(n, k):
        return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)

    sums, logs = np.zeros(1, dtype=np.int64), np.zeros(1)
    left = int(rows.sum())
    for total in rows:
        left -= int(total)
        # Only the x_i some table completes: never more partial columns than tables.
        low = np.maximum(0, first - sums - left)
        high = np.minimum(total, first - sums)
        counts = high - low + 1
        starts = np.repeat(low - np.cumsum(counts) + counts, counts)
        x = np.arange(int(counts.sum())) + starts
        sums = np.repeat(sums, counts) + x
        logs = np.repeat(logs, counts) + log_choose(total, x)
    logs -= log_choose(int(rows.sum()), first)
    observed = float(np.sum(log_choose(rows, table[:, 0]))) - log_choose(int(rows.sum()), first)
    # R's fisher.test: tables with d <= d_observed * (1 + 1e-7) count.
    p = np.exp(logs[logs <= observed + np.log1p(TOLERANCE)]).sum()
    return float(min(p, 1.0))


def _odds(table):
    """Sample odds ratio ad/bc and Woolf's interval; None bounds where a cell is empty."""
    from scipy.stats.contingency import odds_ratio

    with np.errstate(divide="ignore", invalid="ignore"):  # an empty cell: no bound
        result = odds_ratio(np.asarray(table), kind="sample")
        low, high = result.confidence_interval(CONFIDENCE)
    return {"value": _finite(result.statistic), "low": _finite(low), "high": _finite(high)}


def _finite(x):
    x = float(x)
    return x if np.isfinite(x) else None


def _adjust(fields):
    from statsmodels.stats.multitest import multipletests

    tested = [f for f in fields if f["p"] is not None]
    for f in fields:
        f["p_holm"] = f["p_bh"] = None
    if not tested:
        return
    p = [f["p"] for f in tested]
    holm = multipletests(p, method="holm")[1]
    bh = multipletests(p, method="fdr_bh")[1]
    for f, h, b in zip(tested, holm, bh):
        f["p_holm"], f["p_bh"] = float(h), float(b)


# --- the export table -----------------------------------------------------------

COLUMNS = ("field", "question", "kind", "answer", "included", "not_included", "left_out",
           "test", "p", "p_method", "p_holm", "p_bh", "odds_ratio", "odds_ratio_low",
           "odds_ratio_high", "source")


def table_rows(analysis):
    """One row per field and answer: counts, the field's test and adjusted p, and the
    answer's odds ratio (2 x 2: on the first answer's row)."""
    for f in analysis.get("fields", []):
        ratios = {r["answer"]: r for r in f["odds_ratios"]}
        if f["odds_ratio"]:
            ratios[f["odds_ratio"]["answer"]] = f["odds_ratio"]
        for answer, inc, out in zip(f["answers"], f["included"], f["not_included"]):
            ratio = ratios.get(answer) or {}
            yield {"field": f["name"], "question": f["question"], "kind": f["kind"],
                   "answer": answer, "included": inc, "not_included": out,
                   "left_out": f["left_out"], "test": f["test"], "p": f["p"],
                   "p_method": f.get("p_method"),
                   "p_holm": f["p_holm"], "p_bh": f["p_bh"], "odds_ratio": ratio.get("value"),
                   "odds_ratio_low": ratio.get("low"), "odds_ratio_high": ratio.get("high"),
                   "source": analysis["source_key"]}

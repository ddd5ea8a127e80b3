"""Is a model rater usable for a question? Its agreement with the people, question by
question (design brief, rule 12), read before anyone uses its labels.

For each question of each codebook the model answered (free-text questions excepted):

- the model against each coder, against the final decisions and against the coders'
  majority (an item's value that more than half of its coders gave; items without one
  are left out), each with percent agreement, Cohen's kappa with its 95% percentile
  bootstrap interval and Krippendorff's alpha, computed by coding.raters.comparisons'
  `measure` (the named comparisons' numbers). The coders' values are their independent
  codings only (coding.labeling.codings.independent_codings, rule 3);
- the alternative annotator test (alt-test; Calderon, Reichart and Dror, ACL 2025), when
  three or more coders coded items the model coded too. Each coder j in turn is left
  out; on each item j coded with at least one other coder, the model's alignment with
  the others (the mean of its similarity to each) is set against j's: W_f = 1 when the
  model's is at least j's, W_h = 1 when j's is at least the model's. The model's
  advantage probability for j is the mean of W_f. H0_j: mean(W_h - W_f) >= epsilon is
  tested against "less" by a one-sample t-test (30 items or more) or Wilcoxon's
  signed-rank test (fewer, as the authors advise), the coders' p-values adjusted by
  Benjamini-Yekutieli; the winning rate omega is the share of coders whose H0 is
  rejected at 0.05. The model passes when omega >= 0.5. Epsilon is the benefit granted
  to the model for its cost: 0.2 for expert coders by default (0.15 for trained coders,
  0.1 for crowd workers, as the authors suggest). Similarity: equality for choices,
  Jaccard's for sets of options, minus the absolute difference for two numbers (a
  number against a special answer counts as no match, below any two numbers);
- prompt stability, when the model answered the same items more than once (a run with
  replicates at a temperature above zero): Krippendorff's alpha of the replicates as
  if each were a coder (nominal; MASI for sets of options), over the calls of the
  rater's current prompt.

The rule that decides "usable for this question", stated on the page, in the API, the
export and the methods text (`RULE`): when the alt-test can run, the model passes it;
otherwise the lower bound of kappa's interval against the final decisions (or, without
decisions, against every coder) is at least 0.667, the lowest reliability Krippendorff
accepts for tentative conclusions; and in both cases, when prompt stability was
measured, its alpha is at least 0.8. Without enough to decide, the verdict is "not yet
known", never "usable".
"""

import math
import warnings
from collections import Counter, defaultdict

import numpy as np
from django.db.models import Max
from django.utils.translation import gettext, gettext_noop

from coding.agreement import alpha as agreement
from coding.agreement.sample_size import RELIABLE, TENTATIVE
from coding.codebooks.versions import questions_with_options
from coding.labeling.codings import independent_codings
from coding.models import Codebook, Decision, ModelCall, Question, RaterCoding
from coding.raters.comparisons import hashable, measure, table_labels

EPSILON = 0.2
EPSILONS = (0.1, 0.15, 0.2)
ALPHA_LEVEL = 0.05
WINNING = 0.5
T_TEST_FROM = 30
MIN_CODERS = 3
N_BOOT = 1000
RULE = gettext_noop(
    "A model is usable for a question when, with three or more coders who coded the same "
    "items, it passes the alternative annotator test (winning rate at least 0.5, "
    "epsilon %(epsilon)s, coders' p-values adjusted by Benjamini-Yekutieli at 0.05); with "
    "fewer coders, when the lower bound of the 95%% interval of Cohen's kappa against the "
    "final decisions (without decisions: against every coder) is at least 0.667; and, "
    "when prompt stability was measured, when the replicates' Krippendorff's alpha is at "
    "least 0.8.")
VERDICTS = {"usable": gettext_noop("usable"), "not usable": gettext_noop("not usable"),
            "not yet known": gettext_noop("not yet known")}


def rule(epsilon=EPSILON):
    """The rule in the reader's language (English in the API and the methods text)."""
    return gettext(RULE) % {"epsilon": f"{epsilon:g}"}


def validate(rater, epsilon=EPSILON, name=None, n_boot=N_BOOT, seed=0):
    """{"rule", "epsilon", "questions": [...]}: every answered question's figures."""
    name = name or (lambda user_id: f"coder {user_id}")
    study = rater.study
    model = defaultdict(dict)
    for item, key, value in RaterCoding.objects.filter(
            rater=rater, item__deleted_at__isnull=True).values_list(
            "item_id", "question_key", "value").order_by():
        model[key][item] = value
    questions = []
    for codebook in Codebook.objects.filter(study=study).order_by("pk"):
        version = codebook.current_version()
        if version is None:
            continue
        asked = [q for q in questions_with_options(version)
                 if q.kind != Question.Kind.TEXT and model.get(q.key)]
        if not asked:
            continue
        coders = _coders(study, codebook, [q.key for q in asked])
        decided = _decisions(study, codebook, [q.key for q in asked])
        stability = _stability(rater, codebook, asked)
        for question in asked:
            mine = {i: v for i, v in model[question.key].items() if i in coders["items"]}
            questions.append(_question(question, codebook, mine, coders["values"][question.key],
                                       decided[question.key], stability.get(question.key),
                                       epsilon, name, n_boot, seed))
    return {"rater": rater.name, "epsilon": epsilon, "rule": rule(epsilon),
            "questions": questions}


def _coders(study, codebook, keys):
    """{"values": {key: {coder: {item: value}}}, "items": the codebook's live items}."""
    values = {key: defaultdict(dict) for key in keys}
    for coder, item, answers in independent_codings(study).filter(
            assignment__item__codebook=codebook).values_list(
            "assignment__coder_id", "assignment__item_id", "values").order_by():
        for key in keys:
            if answers.get(key) not in (None, "", []):
                values[key][coder][item] = answers[key]
    items = set(codebook.items.filter(deleted_at__isnull=True).values_list("pk", flat=True))
    return {"values": values, "items": items}


def _decisions(study, codebook, keys):
    decided = {key: {} for key in keys}
    for item, key, value in Decision.objects.current().filter(
            item__study=study, item__codebook=codebook, item__deleted_at__isnull=True,
            question_key__in=keys).values_list("item_id", "question_key", "value"):
        if value not in (None, "", []):
            decided[key][item] = value
    return decided


def majority(by_coder):
    """{item: the value more than half of its coders gave}."""
    seen = defaultdict(list)
    for answers in by_coder.values():
        for item, value in answers.items():
            seen[item].append(hashable(value))
    found = {}
    for item, values in seen.items():
        value, count = Counter(values).most_common(1)[0]
        if len(values) >= 2 and count * 2 > len(values):
            found[item] = sorted(value) if isinstance(value, frozenset) else value
    return found


def _pair(question, model, other, n_boot, seed):
    items = sorted(model.keys() & other.keys())
    labels = table_labels(question, [model[i] for i in items] + [other[i] for i in items])
    position = {hashable(label): k for k, label in enumerate(labels)}
    a = np.array([position[hashable(model[i])] for i in items], dtype=np.int64)
    b = np.array([position[hashable(other[i])] for i in items], dtype=np.int64)
    result = measure(a, b, [str(sorted(x)) if isinstance(x, list) else str(x)
                            for x in labels], n_boot, seed)
    return {"units": len(items), "percent_agreement": result["percent_agreement"],
            "kappa": result["kappa"], "alpha": result["alpha"]}


def _question(question, codebook, model, coders, decided, stability, epsilon, name, n_boot,
              seed):
    against = [{"with": name(coder), "kind": "coder",
                **_pair(question, model, answers, n_boot, seed)}
               for coder, answers in sorted(coders.items(), key=lambda pair: name(pair[0]))]
    decisions = {"with": "final decisions", "kind": "decisions",
                 **_pair(question, model, decided, n_boot, seed)}
    most = {"with": "coders' majority", "kind": "majority",
            **_pair(question, model, majority(coders), n_boot, seed)}
    alt = alt_test(question, model, coders, epsilon, name)
    verdict, because = _verdict(alt, decisions, against, stability)
    return {"codebook": codebook.name, "question": question.key, "text": question.text,
            "model_items": len(model), "against": against, "decisions": decisions,
            "majority": most, "alt_test": alt, "stability": stability,
            "usable": verdict, "because": because}


def similarity(question, x, y):
    """How alike two answers are (higher is closer): see the module docstring."""
    if question.kind == Question.Kind.MULTIPLE and isinstance(x, list) and isinstance(y, list):
        union = set(x) | set(y)
        return len(set(x) & set(y)) / len(union) if union else 1.0
    numbers = [isinstance(v, int | float) and not isinstance(v, bool) for v in (x, y)]
    if question.kind == Question.Kind.NUMBER and question.level in (
            Question.Level.INTERVAL, Question.Level.RATIO) and any(numbers):
        if all(numbers):
            return -abs(float(x) - float(y))
        return -math.inf
    return 1.0 if hashable(x) == hashable(y) else 0.0


def alt_test(question, model, coders, epsilon=EPSILON, name=None):
    """The alternative annotator test over the items the model and the coders answered."""
    from scipy import stats

    name = name or str
    taking = {c: {i: v for i, v in answers.items() if i in model}
              for c, answers in coders.items()}
    taking = {c: answers for c, answers in taking.items() if answers}
    by_item = defaultdict(dict)
    for coder, answers in taking.items():
        for item, value in answers.items():
            by_item[item][coder] = value
    shared = {c for c, answers in taking.items()
              if any(len(by_item[i]) >= 2 for i in answers)}
    result = {"epsilon": epsilon, "coders": len(shared), "ran": False, "per_coder": [],
              "winning_rate": None, "advantage_probability": None, "passed": None}
    if len(shared) < MIN_CODERS:
        result["why_not"] = gettext("needs %(least)s or more coders who coded the same "
                                    "items as the model; %(count)s here") % {
            "least": MIN_CODERS, "count": len(shared)}
        return result
    rows, p_values = [], []
    for coder in sorted(shared, key=lambda c: name(c)):
        w_model, w_human = [], []
        for item, value in taking[coder].items():
            others = [v for c, v in by_item[item].items() if c != coder]
            if not others:
                continue
            s_model = np.mean([similarity(question, model[item], v) for v in others])
            s_human = np.mean([similarity(question, value, v) for v in others])
            w_model.append(s_model >= s_human)
            w_human.append(s_human >= s_model)
        d = np.array(w_human, float) - np.array(w_model, float)
        p, test = _one_sided(d, epsilon)
        p_values.append(p)
        rows.append({"coder": name(coder), "items": len(d),
                     "advantage_probability": float(np.mean(w_model)),
                     "human_advantage_probability": float(np.mean(w_human)),
                     "p": p, "test": test})
    adjusted = stats.false_discovery_control(np.array(p_values), method="by")
    for row, q in zip(rows, adjusted):
        row["p_adjusted"] = float(q)
        row["won"] = bool(q <= ALPHA_LEVEL)
    omega = sum(row["won"] for row in rows) / len(rows)
    result.update(ran=True, per_coder=rows, winning_rate=omega,
                  advantage_probability=float(np.mean([r["advantage_probability"]
                                                       for r in rows])),
                  passed=omega >= WINNING)
    return result


def _one_sided(d, epsilon):
    """p of H0: mean(d) >= epsilon against "less", and the test used."""
    from scipy import stats

    if len(d) >= T_TEST_FROM:
        if np.ptp(d) == 0:
            return (0.0 if d[0] < epsilon else 1.0), "t-test"
        return float(stats.ttest_1samp(d, epsilon, alternative="less").pvalue), "t-test"
    shifted = d - epsilon
    if not np.any(shifted):
        return 1.0, "Wilcoxon"
    return float(stats.wilcoxon(shifted, alternative="less").pvalue), "Wilcoxon"


def _stability(rater, codebook, questions):
    """{key: {"replicates", "items", "alpha"}} over the calls of the rater's newest prompt
    for this codebook, when it answered some item more than once."""
    newest = (ModelCall.objects.filter(rater=rater, item__codebook=codebook,
                                       status=ModelCall.Status.ANSWERED)
              .order_by().aggregate(last=Max("pk"))["last"])
    if newest is None:
        return {}
    prompt = ModelCall.objects.values_list("prompt_hash", flat=True).get(pk=newest)
    answers = defaultdict(dict)
    for item, replicate, values in ModelCall.objects.filter(
            rater=rater, prompt_hash=prompt, status=ModelCall.Status.ANSWERED,
            item__deleted_at__isnull=True).values_list("item_id", "replicate", "values"):
        answers[item][replicate] = values
    replicates = 1 + max((r for got in answers.values() for r in got), default=0)
    if replicates < 2:
        return {}
    items = sorted(i for i, got in answers.items() if len(got) >= 2)
    found = {}
    for question in questions:
        table = np.full((len(items), replicates), None, dtype=object)
        for row, item in enumerate(items):
            for replicate, values in answers[item].items():
                value = values.get(question.key)
                if value is not None:
                    table[row, replicate] = hashable(value)
        level = "masi" if question.kind == Question.Kind.MULTIPLE else "nominal"
        value = _alpha(table, level)
        found[question.key] = {"replicates": replicates, "items": len(items), "alpha": value,
                               "level": level}
    return found


def _alpha(table, level):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", agreement.UndefinedAgreementWarning)
        try:
            value = agreement.krippendorff_alpha(table, level=level)
        except ValueError:
            return None
    return None if value != value else float(value)


def _verdict(alt, decisions, against, stability):
    """("usable" | "not usable" | "not yet known", the reason in words)."""
    if stability and stability["alpha"] is not None and stability["alpha"] < RELIABLE:
        return "not usable", gettext("prompt stability alpha %(alpha)s is below %(least)s") % {
            "alpha": f"{stability['alpha']:.3f}", "least": RELIABLE}
    if alt["ran"]:
        words = {"rate": f"{alt['winning_rate']:.2f}", "least": WINNING}
        if alt["passed"]:
            return "usable", gettext("passes the alt-test (winning rate %(rate)s)") % words
        return "not usable", gettext("fails the alt-test (winning rate %(rate)s < "
                                     "%(least)s)") % words
    sides = [decisions] if decisions["units"] else against
    lows = [s["kappa"]["low"] for s in sides if s["units"]]
    if not lows:
        return "not yet known", gettext("no item was answered by both the model and the "
                                        "people")
    if any(low is None for low in lows):
        return "not yet known", gettext("kappa is undefined on the items compared")
    words = {"low": f"{min(lows):.3f}", "least": TENTATIVE,
             "what": gettext("the final decisions") if decisions["units"]
             else gettext("every coder")}
    if min(lows) >= TENTATIVE:
        return "usable", gettext("kappa's lower bound against %(what)s is %(low)s, at least "
                                 "%(least)s") % words
    return "not usable", gettext("kappa's lower bound against %(what)s is %(low)s, below "
                                 "%(least)s") % words


def methods_text(rater, result, runs):
    """A paragraph for a paper's methods section: how the model was run and, per question,
    how it agreed with the people and whether it is usable by the stated rule. In English,
    as the agreement report's methods text."""
    machine_runs = [run for run in runs if run.status == "done"]
    if not result["questions"] or not machine_runs:
        return ""
    used = machine_runs[0].used
    seed = f", seed {used['seed']}" if used.get("seed") is not None else ""
    total = sum(run.answered for run in machine_runs if run.replicates == 1) or \
        machine_runs[0].answered
    lines = [
        f"A language model ({used.get('model')}, served at {used.get('endpoint_host')}) coded "
        f"{total} items as a separate rater with the study's codebook, at temperature "
        f"{used.get('temperature')}{seed} and at most {used.get('max_tokens')} tokens an "
        f"answer, its answers asked for as JSON following a schema derived from the codebook "
        f"(prompt template {used.get('prompt_template')}) and checked as a coder's submission "
        f"is; blinded fields were {'sent' if used.get('send_blinded') else 'not sent'} to it. "
        "Its answers never entered the coders' rounds or the reliability figures.",
    ]
    for q in result["questions"]:
        parts = []
        decisions = q["decisions"]
        if decisions["units"] and decisions["kappa"]["value"] is not None:
            k = decisions["kappa"]
            parts.append(f"Cohen's kappa against the final decisions {k['value']:.2f} "
                         f"[{k['low']:.2f}, {k['high']:.2f}] on {decisions['units']} items")
        alt = q["alt_test"]
        if alt["ran"]:
            parts.append(f"alternative annotator test (epsilon {alt['epsilon']:g}, "
                         f"{alt['coders']} coders): winning rate {alt['winning_rate']:.2f}, "
                         f"average advantage probability {alt['advantage_probability']:.2f}, "
                         + ("passed" if alt["passed"] else "not passed"))
        if q["stability"] and q["stability"]["alpha"] is not None:
            parts.append(f"prompt stability alpha {q['stability']['alpha']:.2f} over "
                         f"{q['stability']['replicates']} replicates")
        verdict = {"usable": "usable", "not usable": "not usable",
                   "not yet known": "not yet judged"}[q["usable"]]
        lines.append(f"For {q['question']}: " + ("; ".join(parts) or "no comparison yet")
                     + f"; {verdict} by the rule below.")
    lines.append(RULE % {"epsilon": f"{result['epsilon']:g}"})
    return " ".join(lines)


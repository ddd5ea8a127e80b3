"""A model rater validated against the people: per coder, decisions and majority, the
alternative annotator test computed as its authors define it, prompt stability, and the
rule that says "usable"."""

import numpy as np
import pytest
from scipy import stats

from coding.model_raters import runs, validation
from coding.model_raters.config import configure
from coding.models import Item, Question, Role
from tests import factories

SINGLE = Question(kind=Question.Kind.SINGLE, level=Question.Level.NOMINAL)


def coders_from(columns):
    """{coder: {item: value}} from one list of answers per coder (None: not coded)."""
    return {c: {i: v for i, v in enumerate(column) if v is not None}
            for c, column in enumerate(columns)}


def test_the_alt_test_as_its_authors_define_it_on_a_small_case():
    # Three coders, 40 items; the model always gives the value two of them agree on.
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 3, 40)
    noisy = [np.where(rng.random(40) < 0.3, rng.integers(0, 3, 40), truth) for _ in range(3)]
    coders = coders_from([list(map(int, column)) for column in noisy])
    model = {i: int(truth[i]) for i in range(40)}
    result = validation.alt_test(SINGLE, model, coders, epsilon=0.2)
    assert result["ran"] and result["coders"] == 3
    # The same numbers by hand for coder 0: alignment with coders 1 and 2.
    w_f, w_h = [], []
    for i in range(40):
        others = [coders[1][i], coders[2][i]]
        s_f = np.mean([model[i] == v for v in others])
        s_h = np.mean([coders[0][i] == v for v in others])
        w_f.append(s_f >= s_h)
        w_h.append(s_h >= s_f)
    d = np.array(w_h, float) - np.array(w_f, float)
    expected = stats.ttest_1samp(d, 0.2, alternative="less").pvalue
    first = result["per_coder"][0]
    assert first["p"] == pytest.approx(expected) and first["test"] == "t-test"
    assert first["advantage_probability"] == pytest.approx(np.mean(w_f))
    adjusted = stats.false_discovery_control([r["p"] for r in result["per_coder"]],
                                             method="by")
    assert [r["p_adjusted"] for r in result["per_coder"]] == pytest.approx(list(adjusted))
    assert result["winning_rate"] == sum(a <= 0.05 for a in adjusted) / 3
    assert result["passed"] is (result["winning_rate"] >= 0.5)
    assert result["passed"]


def test_a_model_that_guesses_fails_the_alt_test():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 4, 60)
    coders = coders_from([list(map(int, np.where(rng.random(60) < 0.1, 0, truth)))
                          for _ in range(4)])
    model = {i: int(v) for i, v in enumerate(rng.integers(0, 4, 60))}
    result = validation.alt_test(SINGLE, model, coders)
    assert result["ran"] and not result["passed"] and result["winning_rate"] < 0.5


def test_with_few_items_the_signed_rank_test_is_used_and_two_coders_are_not_enough():
    coders = coders_from([[0, 1, 1, 0, 1], [0, 1, 0, 0, 1], [0, 1, 1, 1, 1]])
    result = validation.alt_test(SINGLE, {i: v for i, v in enumerate([0, 1, 1, 0, 1])},
                                 coders)
    assert {r["test"] for r in result["per_coder"]} == {"Wilcoxon"}
    two = validation.alt_test(SINGLE, {0: 0, 1: 1}, coders_from([[0, 1], [0, 0]]))
    assert not two["ran"] and "3 or more coders" in two["why_not"]


def test_similarity_of_sets_and_numbers():
    multiple = Question(kind=Question.Kind.MULTIPLE, level=Question.Level.NOMINAL)
    assert validation.similarity(multiple, ["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)
    number = Question(kind=Question.Kind.NUMBER, level=Question.Level.RATIO)
    assert validation.similarity(number, 7, 9.5) == -2.5
    assert validation.similarity(number, 7, "not_reported") == -np.inf
    assert validation.similarity(number, "not_reported", "not_reported") == 1.0


def test_majority_needs_more_than_half():
    found = validation.majority(coders_from([["a", "a", "b"], ["a", "b", "c"],
                                             ["b", None, "d"]]))
    assert found == {0: "a"}


def code_all(team, item_values, coders):
    for item, answers in zip(team["items"], item_values):
        for coder, label in zip(coders, answers):
            factories.code(item, coder, label=label,
                           **({"scope": "general"} if label == "rl_method" else {}))


@pytest.mark.django_db(transaction=True)
def test_a_fresh_study_reads_the_model_against_each_coder_decisions_and_majority(
        team, model_rater, server):
    ann, bo = team["coders"]
    # The model says analysis for papers 3, 6, 9, 12 (n % 3 == 0); Ann agrees everywhere,
    # Bo on all but papers 1 and 2.
    model = ["analysis" if n % 3 == 0 else "rl_method" for n in range(1, 13)]
    bo_says = ["analysis", "analysis"] + model[2:]
    code_all(team, list(zip(model, bo_says)), (ann, bo))
    runs.start_run(model_rater, team["owner"])
    names = {ann.pk: "ann", bo.pk: "bo"}
    result = validation.validate(model_rater, name=names.get)
    label = next(q for q in result["questions"] if q["question"] == "label")
    against = {row["with"]: row for row in label["against"]}
    assert against["ann"]["percent_agreement"] == 1.0 and against["ann"]["units"] == 12
    assert against["bo"]["percent_agreement"] == pytest.approx(10 / 12)
    assert label["majority"]["units"] == 10  # papers 1 and 2 have no majority of two
    # Items the two coders agreed on are settled: ten decisions, the model agreeing.
    assert label["decisions"]["units"] == 10
    assert label["decisions"]["percent_agreement"] == 1.0
    assert not label["alt_test"]["ran"]
    assert label["usable"] == "usable" and "the final decisions" in label["because"]
    assert "0.667" in result["rule"] and "alternative annotator test" in result["rule"]
    # Free text is not validated; the conditional question is, on the items it asks.
    assert "note" not in {q["question"] for q in result["questions"]}


@pytest.mark.django_db(transaction=True)
def test_prompt_stability_from_replicates(team, model_rater, server):
    configure(model_rater, team["owner"], {"temperature": 0.7})
    run = runs.start_run(model_rater, team["owner"], {"sample": "yes"}, replicates=3)
    run.refresh_from_db()
    assert run.status == "done" and len(server.requests) == 36
    result = validation.validate(model_rater)
    label = next(q for q in result["questions"] if q["question"] == "label")
    # The test server answers the same for the same paper: perfectly stable.
    assert label["stability"]["replicates"] == 3 and label["stability"]["items"] == 12
    assert label["stability"]["alpha"] == 1.0


@pytest.mark.django_db(transaction=True)
def test_three_coders_run_the_alt_test_on_a_fresh_study(team, model_rater, server):
    ann, bo = team["coders"]
    cy = factories.user("cy")
    factories.member(team["study"], cy, Role.CODER)
    Item.objects.filter(study=team["study"]).update(target=3)
    model = ["analysis" if n % 3 == 0 else "rl_method" for n in range(1, 13)]
    flipped = {"analysis": "rl_method", "rl_method": "analysis"}
    values = [(m, m if n % 4 else flipped[m], m if n % 5 else flipped[m])
              for n, m in enumerate(model, start=1)]
    code_all(team, values, (ann, bo, cy))
    runs.start_run(model_rater, team["owner"])
    result = validation.validate(model_rater, epsilon=0.1)
    label = next(q for q in result["questions"] if q["question"] == "label")
    alt = label["alt_test"]
    assert alt["ran"] and alt["coders"] == 3 and alt["epsilon"] == 0.1
    assert {row["test"] for row in alt["per_coder"]} == {"Wilcoxon"}  # 12 items each
    assert label["usable"] == ("usable" if alt["passed"] else "not usable")
    assert "alt-test" in label["because"]

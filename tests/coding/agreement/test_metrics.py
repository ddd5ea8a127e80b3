"""Agreement metrics: published worked examples, established packages, and the input rules.

Worked examples are checked to the precision they were printed with. Where a value was
read from another library's literature-keyed test rather than from the publication
itself, the docstring says so.
"""

import functools
import itertools
import warnings

import krippendorff
import numpy as np
import pytest
from statsmodels.stats import inter_rater

from coding.agreement.alpha import (
    UndefinedAgreementWarning, bootstrap_ci, brennan_prediger, cohen_kappa, fleiss_kappa, gwet_ac1,
    jaccard_distance, krippendorff_alpha, masi_distance, percent_agreement, scott_pi,
)

nan = np.nan
SEEDS = [0, 1, 2, 3]

# Krippendorff's reliability data: 4 coders (columns A-D) x 12 units (rows), values 1-5.
# Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011), and Content
# Analysis (2004, p. 230). Gwet's Handbook (4th ed., p. 120) uses the same data
# ("raw4raters"), with unit 12's single rating under coder C instead of B.
KRIPPENDORFF_2011 = np.array([
    [1, 1, nan, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [nan, 5, 5, 5],
    [nan, nan, 1, 1],
    [nan, 3, nan, nan],
])

# Fleiss (1971, p. 379), Table 1: 30 patients, 6 psychiatrists each, 5 diagnoses.
FLEISS_1971 = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]

# Hayes & Krippendorff (2007, p. 84): 5 observers x 40 units, ordinal 0-3.
HAYES_KRIPPENDORFF_2007 = [
    [1, 1, 2, None, 2], [1, 1, 0, 1, None], [2, 3, 3, 3, None], [None, 0, 0, None, 0],
    [0, 0, 0, None, 0], [0, 0, 0, None, 0], [1, 0, 2, None, 1], [1, None, 2, 0, None],
    [2, 2, 2, None, 2], [2, 1, 1, 1, None], [None, 1, 0, 0, None], [0, 0, 0, 0, None],
    [1, 2, 2, 2, None], [3, 3, 2, 2, 3], [1, 1, 1, None, 1], [1, 1, 1, None, 1],
    [2, 1, 2, None, 2], [1, 2, 3, 3, None], [1, 1, 0, 1, None], [0, 0, 0, None, 0],
    [0, 0, 1, 1, None], [0, 0, None, 0, 0], [2, 3, 3, 3, None], [0, 0, 0, 0, None],
    [1, 2, None, 2, 2], [0, 1, 1, 1, None], [0, 0, 0, 1, 0], [1, 2, 1, 2, None],
    [1, 1, 2, 2, None], [1, 1, 2, None, 2], [1, 1, 0, None, 0], [2, 1, 2, 1, None],
    [2, 2, None, 2, 2], [3, 2, 2, 2, None], [2, 2, 2, None, 2], [2, 2, 3, None, 2],
    [2, 2, 2, None, 2], [2, 2, None, 1, 2], [2, 2, 2, 2, None], [1, 1, 1, None, 1],
]


def two_coder_ratings(counts):
    """Expand a contingency table {(first coder, second coder): count} into rating rows."""
    return [pair for pair, count in counts.items() for _ in range(count)]


def table_to_counts(table, labels):
    return {(labels[i], labels[j]): int(table[i][j])
            for i in range(len(labels)) for j in range(len(labels))}


def random_ratings(seed, units=150, coders=4, n_categories=5, missing=0.2):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, n_categories + 1, size=(units, 1))
    noise = rng.integers(1, n_categories + 1, size=(units, coders))
    ratings = np.where(rng.random((units, coders)) < 0.6, truth, noise).astype(float)
    ratings[rng.random((units, coders)) < missing] = nan
    return ratings


# ---------------------------------------------------------------------------
# Published worked examples
# ---------------------------------------------------------------------------


def test_alpha_matches_krippendorff_2011_nominal_example():
    """Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": nominal alpha = 0.743.

    Cross-read: quoted from the paper (p. 8) in the ``krippendorff`` package's docstring;
    the same value is asserted for the book's version of this data (Content Analysis,
    2004, p. 230) in DKPro Statistics' Krippendorff2004Test, and computed by Gwet's irrCAC.
    """
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, "nominal"), 3) == 0.743


@pytest.mark.parametrize("level, published", [
    ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797),
])
def test_alpha_matches_krippendorff_2011_values_for_other_levels(level, published):
    """Krippendorff (2011): ordinal 0.815, interval 0.849, ratio 0.797 for the same data.

    Cross-read: ordinal and ratio are quoted from the paper (p. 8) in the ``krippendorff``
    package's docstring; interval 0.849 is asserted for this data in DKPro Statistics'
    Krippendorff2004Test; irrCAC gives 0.849 and 0.797 (quadratic and ratio weights).
    """
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == published


def test_alpha_orders_text_labels_by_categories():
    """The 2011 ordinal example with text labels ordered by ``categories``: 0.815.

    The ``krippendorff`` package's docstring gives this text form of the paper's data.
    """
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    text = [[None if np.isnan(v) else names[int(v)] for v in row] for row in KRIPPENDORFF_2011]
    alpha = krippendorff_alpha(text, "ordinal", categories=list(names.values()))
    assert round(alpha, 3) == 0.815


def test_alpha_matches_hayes_krippendorff_2007_ordinal_example():
    """Hayes & Krippendorff (2007), Communication Methods and Measures 1(1), p. 84:
    40 units, 5 observers with missing data, ordinal alpha = 0.7598.

    Data and value as in DKPro Statistics' HayesKrippendorff2007Test; the same reported
    value is quoted in raoulbia/nltk-krippendorff-validation.
    """
    assert round(krippendorff_alpha(HAYES_KRIPPENDORFF_2007, "ordinal"), 4) == 0.7598


def test_fleiss_kappa_matches_fleiss_1971_diagnosis_example():
    """Fleiss (1971), Psychological Bulletin 76(5), Table 1: kappa = .430.

    Data as in R's irr ``diagnoses`` (documented as Fleiss's table) and DKPro Statistics'
    Fleiss1971Test, which asserts .430; irr::kappam.fleiss gives 0.4302445 (statsmodels'
    test suite).
    """
    assert round(fleiss_kappa(FLEISS_1971), 3) == 0.430


def test_cohen_kappa_matches_cohen_1960_example():
    """Cohen (1960), Educational and Psychological Measurement 20(1), p. 45: 200 items,
    3 categories, p_o = .70, p_c = .41, kappa = .492.

    Table and values as transcribed in DKPro Statistics' Cohen1960Test.
    """
    counts = {(1, 1): 88, (1, 2): 14, (1, 3): 18, (2, 1): 10, (2, 2): 40, (2, 3): 10,
              (3, 1): 2, (3, 2): 6, (3, 3): 12}
    ratings = two_coder_ratings(counts)
    assert round(percent_agreement(ratings), 2) == 0.70
    assert round(cohen_kappa(ratings), 3) == 0.492


@pytest.mark.parametrize("metric, published", [
    (percent_agreement, 0.818),
    (gwet_ac1, 0.775),
    (fleiss_kappa, 0.761),
    (brennan_prediger, 0.773),
    (krippendorff_alpha, 0.743),
])
def test_coefficients_match_gwet_handbook_raw4raters_example(metric, published):
    """Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., p. 120: 12 units, 4 raters,
    missing ratings. p_a 0.818, AC1 0.775, Fleiss 0.761, BP 0.773, alpha 0.743.

    Values as computed by Gwet's irrCAC and asserted in its Python port's test suite
    (afergadis/irrCAC, test/unit/irrCAC/raw).
    """
    assert round(metric(KRIPPENDORFF_2011), 3) == published


GWET_ABSTRACTORS = {"labels": ["Ectopic", "AIU", "NIU"],
                    "table": [[13, 0, 0], [0, 20, 7], [0, 4, 56]]}
GWET_DIAGNOSIS = {"labels": ["Schizophrenia", "Bipolar", "Depression", "Other"],
                  "table": [[40, 4, 4, 17], [6, 25, 2, 13], [4, 1, 21, 12], [15, 5, 9, 45]]}


@pytest.mark.parametrize("example, weights, published", [
    (GWET_ABSTRACTORS, None, 0.796),
    (GWET_ABSTRACTORS, "linear", 0.843),
    (GWET_ABSTRACTORS, "quadratic", 0.892),
    (GWET_DIAGNOSIS, None, 0.432),
])
def test_cohen_kappa_matches_gwet_handbook_tables(example, weights, published):
    """Gwet's irrCAC datasets: 100 pregnancies by 2 abstractors (cont3x3abstractors, from
    Gwet 2014, Handbook, 4th ed.) and 223 patients by 2 diagnosis methods (cont4x4diagnosis).

    Values as computed by irrCAC (afergadis/irrCAC test/unit/irrCAC/table).
    """
    labels = example["labels"]
    ratings = two_coder_ratings(table_to_counts(example["table"], labels))
    kappa = cohen_kappa(ratings, weights=weights, categories=labels)
    assert round(kappa, 3) == published


@pytest.mark.parametrize("example, published", [
    (GWET_ABSTRACTORS, 0.796), (GWET_DIAGNOSIS, 0.430),
])
def test_scott_pi_matches_gwet_handbook_tables(example, published):
    """The same irrCAC tables; Scott's pi as computed by irrCAC."""
    ratings = two_coder_ratings(table_to_counts(example["table"], example["labels"]))
    assert round(scott_pi(ratings), 3) == published


@pytest.mark.parametrize("first, second, distance", [
    ({"A", "B"}, {"A", "B"}, 0.0),               # identical: M = 1, J = 1
    ({"A", "B"}, {"A"}, 1 - 1 / 2 * 2 / 3),      # subset: M = 2/3, J = 1/2
    ({"A", "B"}, {"A", "C"}, 1 - 1 / 3 * 1 / 3),  # overlap: M = 1/3, J = 1/3
    ({"A"}, {"B"}, 1.0),                         # disjoint: M = 0
])
def test_masi_distance_follows_passonneau_2006_definition(first, second, distance):
    """Passonneau (2006), LREC: MASI = J * M. "If two sets Q and P are identical, M is 1.
    If one set is a subset of the other, M is 2/3. If the intersection and the two set
    differences are all non-null, then M is 1/3. If the sets are disjoint, M is 0."
    (Wording as quoted from the paper in a public implementation; NLTK's documented
    example, 0.665, uses M rounded to 0.67.)

    No alpha value from the paper is checked: it reports alpha on DUC pyramid annotations
    that are not reproduced in the paper.
    """
    assert masi_distance(first, second) == pytest.approx(distance)
    assert masi_distance(second, first) == pytest.approx(distance)


# ---------------------------------------------------------------------------
# Established packages on random data
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", SEEDS)
def test_alpha_matches_krippendorff_package_with_missing_values(level, seed):
    ratings = random_ratings(seed)
    expected = krippendorff.alpha(ratings.T, level_of_measurement=level)
    assert krippendorff_alpha(ratings, level) == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_kappa_matches_statsmodels(seed):
    ratings = random_ratings(seed, units=80, coders=6, missing=0.0)
    counts, _ = inter_rater.aggregate_raters(ratings.astype(int))
    assert fleiss_kappa(ratings) == pytest.approx(inter_rater.fleiss_kappa(counts), abs=1e-10)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", SEEDS)
def test_cohen_kappa_matches_statsmodels(weights, seed):
    ratings = random_ratings(seed, units=120, coders=2, missing=0.0).astype(int)
    categories = [1, 2, 3, 4, 5]
    table = np.zeros((5, 5))
    np.add.at(table, (ratings[:, 0] - 1, ratings[:, 1] - 1), 1)
    expected = inter_rater.cohens_kappa(table, wt=weights, return_results=False)
    kappa = cohen_kappa(ratings, weights=weights, categories=categories)
    assert kappa == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_scott_pi_is_fleiss_kappa_of_the_units_both_coders_rated(seed):
    ratings = random_ratings(seed, coders=2, missing=0.15)
    complete = ratings[~np.isnan(ratings).any(axis=1)]
    counts, _ = inter_rater.aggregate_raters(complete.astype(int))
    assert scott_pi(ratings) == pytest.approx(inter_rater.fleiss_kappa(counts), abs=1e-10)


def brute_force_alpha(rows, distance):
    """Krippendorff's alpha straight from its definition, pair by pair (slow, small data)."""
    units = [[v for v in row if v is not None] for row in rows]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    observed = sum(distance(a, b) / (len(u) - 1)
                   for u in units for a, b in itertools.permutations(u, 2)) / len(values)
    expected = sum(distance(a, b) for a, b in itertools.permutations(values, 2))
    expected /= len(values) * (len(values) - 1)
    return 1 - observed / expected


def random_set_ratings(seed, units=40, coders=3):
    rng = np.random.default_rng(seed)
    options = ["a", "b", "c", "d"]
    rows = []
    for _ in range(units):
        base = set(rng.choice(options, size=rng.integers(1, 3), replace=False))
        row = []
        for _ in range(coders):
            if rng.random() < 0.15:
                row.append(None)
            elif rng.random() < 0.5:
                row.append(frozenset(base))
            else:
                row.append(frozenset(rng.choice(options, size=rng.integers(0, 4), replace=False)))
        rows.append(row)
    return rows


@pytest.mark.parametrize("level, distance", [
    ("masi", masi_distance), ("jaccard", jaccard_distance),
])
@pytest.mark.parametrize("seed", SEEDS)
def test_alpha_on_sets_matches_its_pairwise_definition(level, distance, seed):
    rows = random_set_ratings(seed)
    expected = brute_force_alpha(rows, distance)
    assert krippendorff_alpha(rows, level) == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("level", ["masi", "jaccard"])
def test_alpha_on_one_label_sets_equals_nominal_alpha(level):
    ratings = random_ratings(5, missing=0.2)
    as_sets = [[None if np.isnan(v) else {int(v)} for v in row] for row in ratings]
    assert krippendorff_alpha(as_sets, level) == pytest.approx(krippendorff_alpha(ratings))


# ---------------------------------------------------------------------------
# Input: shapes, labels, sets, categories
# ---------------------------------------------------------------------------


def test_text_labels_with_none_give_the_same_result_as_numbers():
    text = [[None if np.isnan(v) else f"label {int(v)}" for v in row] for row in KRIPPENDORFF_2011]
    assert krippendorff_alpha(text) == pytest.approx(krippendorff_alpha(KRIPPENDORFF_2011))
    assert gwet_ac1(text) == pytest.approx(gwet_ac1(KRIPPENDORFF_2011))


def test_sets_may_be_given_as_sets_lists_or_tuples():
    as_frozensets = [[frozenset("ab"), frozenset("a")], [frozenset("c"), frozenset("bc")],
                     [frozenset("a"), frozenset("a")]]
    as_mixed = [[["b", "a"], ("a",)], [{"c"}, ["c", "b", "b"]], [("a",), {"a"}]]
    assert krippendorff_alpha(as_mixed, "masi") == krippendorff_alpha(as_frozensets, "masi")


def test_percent_agreement_counts_identical_sets_as_agreeing():
    assert percent_agreement([[{"a", "b"}, ["b", "a"]], [{"a"}, {"a", "b"}]]) == 0.5


def test_percent_agreement_averages_agreeing_pairs_per_unit():
    # Unit 1: 3 ratings, 1 of 3 pairs agree; unit 2: 2 ratings agree; unit 3: one rating only.
    ratings = [["x", "x", "y"], ["z", None, "z"], [None, "x", None]]
    assert percent_agreement(ratings) == pytest.approx((1 / 3 + 1) / 2)


@pytest.mark.parametrize("ratings", [
    [1, 2, 3],
    np.zeros((2, 2, 2)),
    [[1, 2], [3]],
    ["ab", "cd"],
])
def test_ratings_that_are_not_a_units_by_coders_table_raise(ratings):
    with pytest.raises(ValueError, match="2-D|different lengths"):
        krippendorff_alpha(ratings)


@pytest.mark.parametrize("metric", [cohen_kappa, scott_pi])
def test_two_coder_coefficients_refuse_three_coders(metric):
    with pytest.raises(ValueError, match="exactly two coders; got 3"):
        metric([[1, 2, 1], [2, 2, 1]])


def test_unknown_level_raises():
    with pytest.raises(ValueError, match="unknown level 'nominl'"):
        krippendorff_alpha([[1, 2]], level="nominl")


def test_unknown_kappa_weights_raise():
    with pytest.raises(ValueError, match="unknown weights 'squared'"):
        cohen_kappa([[1, 2]], weights="squared")


@pytest.mark.parametrize("call", [
    lambda: krippendorff_alpha([["low", "high"], ["mid", "huge"]], "ordinal",
                               categories=["low", "mid", "high"]),
    lambda: cohen_kappa([["yes", "no"], ["no", "maybe"]], categories=["yes", "no"]),
    lambda: gwet_ac1([[1, 2], [2, 7]], categories=[1, 2, 3]),
])
def test_a_rating_outside_the_categories_raises_naming_it(call):
    with pytest.raises(ValueError, match="is not one of the categories"):
        call()


def test_set_members_outside_the_categories_raise():
    with pytest.raises(ValueError, match="not in the categories"):
        krippendorff_alpha([[{"a"}, {"a", "z"}]], "masi", categories=["a", "b"])


@pytest.mark.parametrize("call", [
    lambda: krippendorff_alpha([[{"a"}, {"a", "b"}], [{"b"}, {"b"}]], "nominal"),
    lambda: fleiss_kappa([[{"a"}, {"a", "b"}], [{"b"}, {"b"}]]),
    lambda: cohen_kappa([[("a",), ("a", "b")], [("b",), ("b",)]]),
])
def test_sets_given_to_a_single_label_metric_raise(call):
    with pytest.raises(ValueError, match="not sets"):
        call()


def test_single_labels_given_to_masi_raise():
    with pytest.raises(ValueError, match="takes set-valued ratings"):
        krippendorff_alpha([["a", "b"], ["b", "b"]], "masi")


def test_mixing_sets_and_single_labels_raises():
    with pytest.raises(ValueError, match="mix sets"):
        krippendorff_alpha([[{"a"}, "a"], [{"b"}, {"b"}]], "masi")


def test_ordinal_text_labels_need_categories_for_their_order():
    with pytest.raises(ValueError, match="needs categories"):
        krippendorff_alpha([["low", "high"], ["mid", "mid"]], "ordinal")


def test_weighted_kappa_on_text_labels_needs_categories():
    with pytest.raises(ValueError, match="needs categories"):
        cohen_kappa([["low", "high"], ["mid", "mid"]], weights="linear")


def test_interval_level_refuses_text():
    with pytest.raises(ValueError, match="takes numbers; got 'a'"):
        krippendorff_alpha([["a", "b"], ["b", "b"]], "interval")


def test_ratio_level_refuses_negative_values():
    with pytest.raises(ValueError, match="non-negative"):
        krippendorff_alpha([[-1, 2], [2, 2]], "ratio")


def test_numpy_text_array_with_nan_raises_instead_of_counting_nan_as_a_label():
    ratings = np.array([["a", nan], ["b", "b"]])  # numpy stores the NaN as the text "nan"
    with pytest.raises(ValueError, match="'nan'"):
        percent_agreement(ratings)


def test_categories_listed_twice_raise():
    with pytest.raises(ValueError, match="twice"):
        gwet_ac1([[1, 2]], categories=[1, 2, 2])


def test_categories_offered_but_unused_change_gwet_and_brennan_prediger_only():
    ratings = [["a", "a"], ["b", "b"], ["a", "b"], ["b", "b"]]
    offered = ["a", "b", "c"]
    assert brennan_prediger(ratings) == pytest.approx((0.75 - 1 / 2) / (1 - 1 / 2))
    assert brennan_prediger(ratings, categories=offered) == pytest.approx((0.75 - 1 / 3) / (2 / 3))
    assert gwet_ac1(ratings, categories=offered) != gwet_ac1(ratings)
    assert cohen_kappa(ratings, categories=offered) == pytest.approx(cohen_kappa(ratings))


# ---------------------------------------------------------------------------
# Undefined results: NaN with a reason
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("call, reason", [
    (lambda: krippendorff_alpha([[1, None], [None, 2]]), "no unit has two or more ratings"),
    (lambda: krippendorff_alpha([[3, 3], [3, 3, ]], "interval"), "same value"),
    (lambda: percent_agreement([[1, None, None]]), "no unit has two or more ratings"),
    (lambda: cohen_kappa([[1, None], [None, 2]]), "no unit was coded by both coders"),
    (lambda: cohen_kappa([["a", "a"], ["a", "a"]]), "one and the same category"),
    (lambda: fleiss_kappa([["a", "a", "a"], ["a", "a", "a"]]), "one category"),
    (lambda: gwet_ac1([["a", "a"], ["a", "a"]]), "at least two categories"),
    (lambda: krippendorff_alpha(np.empty((0, 3))), "no unit has two or more ratings"),
])
def test_undefined_metric_returns_nan_and_warns_why(call, reason):
    with pytest.warns(UndefinedAgreementWarning, match=reason):
        assert np.isnan(call())


def test_defined_metric_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        krippendorff_alpha(KRIPPENDORFF_2011)


# ---------------------------------------------------------------------------
# Bootstrap confidence intervals
# ---------------------------------------------------------------------------


def test_bootstrap_ci_is_reproducible_for_a_seed_and_brackets_the_estimate():
    ratings = random_ratings(0, units=60, coders=3)
    first = bootstrap_ci(krippendorff_alpha, ratings, n_boot=200, seed=7)
    again = bootstrap_ci(krippendorff_alpha, ratings, n_boot=200, seed=7)
    other = bootstrap_ci(krippendorff_alpha, ratings, n_boot=200, seed=8)
    assert first == again != other
    assert first[0] < krippendorff_alpha(ratings) < first[1]


def test_bootstrap_ci_passes_keyword_arguments_to_the_metric():
    ratings = [[1, 1], [2, 2], [1, 2], [2, 2], [1, 1], [2, 1]]
    used = bootstrap_ci(brennan_prediger, ratings, n_boot=100)
    offered = bootstrap_ci(brennan_prediger, ratings, n_boot=100, categories=[1, 2, 3, 4])
    assert offered[0] > used[0]


def test_bootstrap_ci_takes_alphas_level_of_measurement_through_a_partial():
    ratings = random_ratings(1, units=60, coders=3)
    nominal = bootstrap_ci(krippendorff_alpha, ratings, n_boot=100)
    interval = bootstrap_ci(functools.partial(krippendorff_alpha, level="interval"), ratings,
                            n_boot=100)
    assert nominal != interval


def test_bootstrap_ci_explains_that_level_is_the_confidence_level():
    with pytest.raises(ValueError, match="functools.partial"):
        bootstrap_ci(krippendorff_alpha, [[1, 1], [1, 2]], level="interval")


def test_bootstrap_ci_narrows_at_a_lower_confidence_level():
    ratings = random_ratings(2, units=60, coders=3)
    wide = bootstrap_ci(gwet_ac1, ratings, level=0.95, n_boot=200)
    narrow = bootstrap_ci(gwet_ac1, ratings, level=0.5, n_boot=200)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


@pytest.mark.parametrize("kwargs, problem", [
    ({"level": 1.5}, "level"),
    ({"n_boot": 0}, "n_boot"),
])
def test_bootstrap_ci_rejects_bad_settings(kwargs, problem):
    with pytest.raises(ValueError, match=problem):
        bootstrap_ci(percent_agreement, [[1, 1], [1, 2]], **kwargs)


def test_bootstrap_ci_raises_on_invalid_input_whatever_the_resamples_draw():
    ratings = [[1, 1]] * 50 + [[1, 9]]  # 9 is missing from the categories in one unit only
    with pytest.raises(ValueError, match="9"):
        bootstrap_ci(gwet_ac1, ratings, n_boot=20, categories=[1, 2])


def test_bootstrap_ci_warns_about_resamples_where_the_metric_is_undefined():
    ratings = [["a", "a"], ["a", "a"], ["a", "b"]]  # resamples without unit 3 are undefined
    with pytest.warns(UndefinedAgreementWarning, match="resamples were undefined"):
        low, high = bootstrap_ci(fleiss_kappa, ratings, n_boot=50)
    assert low <= high


# --- issue 17: AC2, Conger, custom weights, PABAK, bias and prevalence, Stuart-Maxwell --

from coding.agreement.alpha import (  # noqa: E402
    bias_index, conger_kappa, gwet_ac2, pabak, prevalence_index, stuart_maxwell,
)

# Gwet's raw4raters as irrCAC ships it: unit 12's single rating under coder C.
GWET_RAW4RATERS = KRIPPENDORFF_2011.copy()
GWET_RAW4RATERS[11] = [nan, nan, 3, nan]


@pytest.mark.parametrize("weights, published", [(None, 0.775), ("linear", 0.859),
                                                ("quadratic", 0.914)])
def test_gwet_ac2_matches_irrcac_on_raw4raters(weights, published):
    """Gwet (2014), Handbook, 4th ed.: raw4raters, AC1 0.775; AC2 with linear weights 0.859,
    quadratic 0.914 (irrCAC; afergadis/irrCAC test/unit/irrCAC/raw/test_gwet.py)."""
    assert round(gwet_ac2(GWET_RAW4RATERS, weights), 3) == published


@pytest.mark.parametrize("example, weights, published", [
    (GWET_ABSTRACTORS, "linear", 0.900), (GWET_ABSTRACTORS, "quadratic", 0.940),
    (GWET_DIAGNOSIS, "linear", 0.377), (GWET_DIAGNOSIS, "quadratic", 0.299),
])
def test_gwet_ac2_matches_irrcac_on_the_handbook_tables(example, weights, published):
    """irrCAC's cont3x3abstractors and cont4x4diagnosis (table/test_gwet.py)."""
    labels = example["labels"]
    ratings = two_coder_ratings(table_to_counts(example["table"], labels))
    assert round(gwet_ac2(ratings, weights, categories=labels), 3) == published


CUSTOM = [[1.00, 0.75, 0.50, 0.25, 0.00], [0.00, 1.00, 0.75, 0.50, 0.25],
          [0.25, 0.00, 1.00, 0.75, 0.50], [0.50, 0.25, 0.00, 1.00, 0.75],
          [0.75, 0.50, 0.25, 0.00, 1.00]]


@pytest.mark.parametrize("weights, published", [(None, 0.763), ("linear", 0.814),
                                                ("quadratic", 0.858), (CUSTOM, 0.763)])
def test_conger_kappa_matches_irrcac_on_raw4raters(weights, published):
    """Conger (1980) on raw4raters as irrCAC computes it: 0.763 (p_e 0.233); linear 0.814,
    quadratic 0.858, and 0.763 with a custom (asymmetric) weight matrix
    (afergadis/irrCAC test/unit/irrCAC/raw/test_conger.py)."""
    assert round(conger_kappa(GWET_RAW4RATERS, weights), 3) == published


def test_conger_kappa_is_cohens_kappa_for_two_coders():
    ratings = two_coder_ratings(table_to_counts(GWET_DIAGNOSIS["table"], GWET_DIAGNOSIS["labels"]))
    assert conger_kappa(ratings) == pytest.approx(cohen_kappa(ratings))


def test_cohen_kappa_takes_a_custom_weight_matrix():
    """Linear weights written out as a matrix give linear-weighted kappa (0.843, irrCAC);
    a matrix crediting nothing off the diagonal gives the unweighted 0.796."""
    labels = GWET_ABSTRACTORS["labels"]
    ratings = two_coder_ratings(table_to_counts(GWET_ABSTRACTORS["table"], labels))
    linear = [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]
    assert round(cohen_kappa(ratings, weights=linear, categories=labels), 3) == 0.843
    assert round(cohen_kappa(ratings, weights=np.eye(3), categories=labels), 3) == 0.796


@pytest.mark.parametrize("weights, problem", [
    ([[1, 0.5], [0.5, 1]], "3 x 3"),
    ([[0.9, 0, 0], [0, 1, 0], [0, 0, 1]], "diagonal"),
    ([[1, 2, 0], [0, 1, 0], [0, 0, 1]], "between 0 and 1"),
])
def test_a_bad_weight_matrix_is_refused_saying_why(weights, problem):
    ratings = two_coder_ratings(table_to_counts(GWET_ABSTRACTORS["table"],
                                                GWET_ABSTRACTORS["labels"]))
    with pytest.raises(ValueError, match=problem):
        cohen_kappa(ratings, weights=weights, categories=GWET_ABSTRACTORS["labels"])


# Byrt, Bishop & Carlin (1993): a 2 x 2 table [[a, b], [c, d]] = [[40, 9], [6, 45]] of 100
# units. p_o = .85, so PABAK = 2(.85) - 1 = .70; bias index (9 - 6) / 100 = .03;
# prevalence index (40 - 45) / 100 = -.05: checkable by hand.
BYRT = {"labels": ["yes", "no"], "table": [[40, 9], [6, 45]]}


def test_pabak_bias_and_prevalence_indices_by_hand():
    ratings = two_coder_ratings(table_to_counts(BYRT["table"], BYRT["labels"]))
    assert pabak(ratings, categories=BYRT["labels"]) == pytest.approx(0.70)
    assert bias_index(ratings, categories=BYRT["labels"]) == pytest.approx(0.03)
    assert prevalence_index(ratings, categories=BYRT["labels"]) == pytest.approx(-0.05)


def test_bias_index_is_undefined_beyond_two_categories():
    ratings = two_coder_ratings(table_to_counts(GWET_ABSTRACTORS["table"],
                                                GWET_ABSTRACTORS["labels"]))
    with pytest.warns(UndefinedAgreementWarning, match="two categories"):
        assert np.isnan(bias_index(ratings, categories=GWET_ABSTRACTORS["labels"]))


def test_stuart_maxwell_matches_stuarts_1955_vision_data():
    """Stuart (1955): unaided distance vision of 7,477 women, right eye (rows) against left
    eye, grades 1-4; the test of marginal homogeneity gives chi-square 11.96 on 3 df."""
    vision = {"labels": [1, 2, 3, 4], "table": [[1520, 266, 124, 66], [234, 1512, 432, 78],
                                                 [117, 362, 1772, 205], [36, 82, 179, 492]]}
    result = stuart_maxwell(two_coder_ratings(table_to_counts(vision["table"], vision["labels"])))
    assert round(result["statistic"], 2) == 11.96 and result["df"] == 3
    assert round(result["p"], 4) == 0.0075


def test_stuart_maxwell_sees_a_coder_who_leans_to_one_category():
    """Agreement 80% but every disagreement one way: coder A says yes where B says no."""
    ratings = two_coder_ratings(table_to_counts([[40, 20], [0, 40]], ["yes", "no"]))
    assert stuart_maxwell(ratings)["p"] < 0.001
    balanced = two_coder_ratings(table_to_counts([[40, 10], [10, 40]], ["yes", "no"]))
    assert stuart_maxwell(balanced)["p"] == pytest.approx(1.0)

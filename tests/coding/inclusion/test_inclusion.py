"""Inclusion analysis (issue 17): included against not-included papers, from the method
tracker's landings, on the page, the API, the command, the export; and docs/analysis.md's
recipe, run on an export, printing the same numbers.

The study is built to hand-checkable counts: of the general RL-method papers, 6 released
code (2 included, 4 not) and 9 did not (5 included, 4 not). Rows yes/no, columns
included/not: [[2, 4], [5, 4]]; the sample odds ratio is (2 x 4) / (4 x 5) = 0.40, Woolf's
interval exp(ln 0.4 +- 1.96 sqrt(1/2 + 1/4 + 1/5 + 1/4)) = [0.047, 3.42], and Fisher's
exact two-sided p = 0.608.
"""

import contextlib
import io
import json
import math
import re
import zipfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from coding.export.bundle import build_bundle
from coding.inclusion.analysis import analyse
from tests.coding.inclusion.studies import GENERAL_ONLY, VENUES, field

DOC = Path(__file__).resolve().parents[3] / "docs" / "analysis.md"
def test_two_by_two_counts_fisher_and_odds_ratio_by_hand(tracked):
    analysis = analyse(tracked, GENERAL_ONLY)
    assert (analysis["papers"], analysis["included"], analysis["not_included"]) == (15, 7, 8)
    released = field(analysis, "code_released")
    assert released["answers"] == ["yes", "no"]
    assert (released["included"], released["not_included"]) == ([2, 5], [4, 4])
    assert released["test"] == "fisher" and round(released["p"], 3) == 0.608
    ratio = released["odds_ratio"]
    assert ratio["answer"] == "yes" and ratio["value"] == pytest.approx(0.4)
    half_width = 1.959964 * math.sqrt(1 / 2 + 1 / 4 + 1 / 5 + 1 / 4)
    assert ratio["low"] == pytest.approx(0.4 * math.exp(-half_width), rel=1e-4)
    assert ratio["high"] == pytest.approx(0.4 * math.exp(half_width), rel=1e-4)
    assert "odds of inclusion" in analysis["orientation"]


def test_each_option_of_a_multiple_choice_is_a_field_and_p_values_are_adjusted(tracked):
    analysis = analyse(tracked, GENERAL_ONLY)
    chosen = field(analysis, "failures__entropy_collapse")
    # The first three general papers (both released code and were included, then one not).
    assert chosen["answers"] == ["chosen", "not chosen"]
    assert (chosen["included"], chosen["not_included"]) == ([2, 5], [1, 7])
    tested = [f for f in analysis["fields"] if f["p"] is not None]
    assert len(tested) == 4  # code_released, both failure options, venue
    smallest = min(tested, key=lambda f: f["p"])
    assert smallest["p_holm"] == pytest.approx(min(1, 4 * smallest["p"]))
    largest = max(tested, key=lambda f: f["p"])
    assert largest["p_bh"] == pytest.approx(largest["p"])  # BH leaves the largest as it is
    assert all(f["p_holm"] >= f["p_bh"] >= f["p"] for f in tested)


def test_a_question_with_more_than_two_answers_gets_freeman_halton(tracked):
    """venue has three answers: the Freeman-Halton test, its Monte Carlo p seeded (the same
    data give the same p), and each answer's odds ratio against the rest. Without the
    population filter label is a field too, analysis papers counted."""
    analysis = analyse(tracked, GENERAL_ONLY)
    venue = field(analysis, "venue")
    assert venue["answers"] == VENUES and venue["test"] == "freeman_halton"
    assert 0 < venue["p"] <= 1 and venue["odds_ratio"] is None
    assert venue["p_method"] == "exact"
    rows = [[a, b] for a, b in zip(venue["included"], venue["not_included"])]
    assert venue["p"] == pytest.approx(brute_force_freeman_halton(rows), rel=1e-9)
    assert "1,000,000" in analysis["test_rule"] and "seed 0" in analysis["test_rule"]
    assert [r["answer"] for r in venue["odds_ratios"]] == VENUES
    assert analyse(tracked, GENERAL_ONLY)["fields"] == analysis["fields"]
    label = field(analyse(tracked), "label")
    assert label["answers"] == ["rl_method", "analysis"] and label["included"] == [7, 3]


def brute_force_freeman_halton(table):
    """Every R x 2 table with the same margins, one by one (itertools and math.comb):
    p = the probabilities of the tables no more probable than the observed one."""
    import itertools
    from math import comb

    rows = [a + b for a, b in table]
    first, n = sum(a for a, _ in table), sum(rows)

    def probability(column):
        return math.prod(comb(r, x) for r, x in zip(rows, column)) / comb(n, first)

    observed = probability([a for a, _ in table])
    return sum(p for column in itertools.product(*(range(r + 1) for r in rows))
               if sum(column) == first and (p := probability(column)) <= observed * (1 + 1e-7))


@pytest.mark.parametrize("table", [
    [[3, 1], [1, 3]],  # Fisher's (1935) tea-tasting table, two-sided p = 0.4857
    [[2, 4], [5, 4]],  # docs/analysis.md's code_released table
    [[4, 1], [2, 3], [0, 5]],
    [[7, 3], [2, 9], [5, 5], [1, 6]],
    [[12, 2], [3, 8], [6, 6], [0, 4], [9, 1]],
])
def test_exact_freeman_halton_matches_fishers_test_and_a_brute_force_enumeration(table):
    from scipy import stats

    from coding.inclusion.analysis import freeman_halton

    p, how = freeman_halton(table)
    assert how == "exact"
    assert p == pytest.approx(brute_force_freeman_halton(table), rel=1e-9)
    if len(table) == 2:
        assert p == pytest.approx(stats.fisher_exact(table).pvalue, rel=1e-9)
    if table == [[3, 1], [1, 3]]:
        assert round(p, 4) == 0.4857


def test_freeman_halton_beyond_the_exact_limit_is_monte_carlo_stated_and_close(monkeypatch):
    from coding.inclusion import analysis as inclusion

    table = [[7, 3], [2, 9], [5, 5], [1, 6]]
    exact, _ = inclusion.freeman_halton(table)
    monkeypatch.setattr(inclusion, "EXACT_TABLES", 10)
    p, how = inclusion.freeman_halton(table)
    assert how == "monte carlo: 20000 tables, seed 0"
    assert p == pytest.approx(exact, abs=0.01)  # 20,000 draws: standard error below 0.004
    assert inclusion.freeman_halton(table) == (p, how)  # seeded


def test_a_study_without_the_tracker_says_why(alpha):
    analysis = analyse(alpha)
    assert analysis["available"] is False and "method tracker" in analysis["reason"]


def test_page_api_and_command_agree(tracked, people, client_for, django_assert_max_num_queries):
    client = client_for(people["vera"])
    api = client.get(f"/api/studies/{tracked.slug}/inclusion/",
                     {"population": "label=rl_method,scope=general"}).json()
    assert field(api, "code_released")["odds_ratio"]["value"] == pytest.approx(0.4)
    with django_assert_max_num_queries(25):
        page = client.get(f"/studies/{tracked.slug}/inclusion/",
                          {"population": "label=rl_method,scope=general"})
    html = page.content.decode()
    assert page.status_code == 200 and "0.608" in html and "0.40 [0.05, 3.42]" in html
    assert "Holm" in html and "Benjamini-Hochberg" in html and "odds of inclusion" in html
    out = StringIO()
    call_command("inclusion_report", tracked.slug, "--population", "label=rl_method,scope=general",
                 "--json", stdout=out)
    assert json.loads(out.getvalue()) == api


def test_a_bad_population_filter_is_refused_by_name(tracked, people, client_for):
    response = client_for(people["olive"]).get(f"/api/studies/{tracked.slug}/inclusion/",
                                               {"population": "colour=red"})
    assert response.status_code == 400 and "colour" in response.json()["population"][0]
    with pytest.raises(CommandError, match="question=value"):
        call_command("inclusion_report", tracked.slug, "--population", "label")


def test_coders_never_see_the_inclusion_analysis(tracked, people, client_for):
    client = client_for(people["cora"])
    assert client.get(f"/studies/{tracked.slug}/inclusion/").status_code == 403
    assert client.get(f"/api/studies/{tracked.slug}/inclusion/").status_code == 403


def _recipe():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    recipe = next(b for b in blocks if "fisher_exact" in b)
    printed = re.findall(r"```\n(included.*?)```", DOC.read_text(), re.S)[0]
    return recipe, printed


def test_the_documented_recipe_runs_on_an_export_and_prints_what_the_doc_says(tracked,
                                                                             tmp_path):
    bundle = tmp_path / "bundle.zip"
    build_bundle(tracked, bundle, shapes=["wide", "items"], fmt="parquet")
    recipe, printed = _recipe()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(recipe, {"BUNDLE": str(bundle)})  # noqa: S102 - the project's own doc
    assert out.getvalue() == printed
    released = field(analyse(tracked, GENERAL_ONLY), "code_released")
    assert f"odds ratio {released['odds_ratio']['value']:.2f} (odds of inclusion" in printed
    assert f"p = {released['p']:.3f}" in printed


def test_the_export_holds_the_inclusion_table(tracked, tmp_path):
    bundle = tmp_path / "bundle.zip"
    build_bundle(tracked, bundle, shapes=["items", "inclusion"], fmt="csv")
    with zipfile.ZipFile(bundle) as z:
        text = z.read("inclusion.csv").decode()
        package = json.loads(z.read("datapackage.json"))
    header = text.splitlines()[0].split(",")
    assert header[:6] == ["field", "question", "kind", "answer", "included", "not_included"]
    assert any(line.startswith("code_released,code_released,yes_no,yes,5,4,") for line in
               text.splitlines())
    described = {f["name"]: f["description"] for r in package["resources"]
                 if r["name"] == "inclusion" for f in r["schema"]["fields"]}
    assert "two-sided" in described["p"] and "Holm" in described["p_holm"]


def test_the_data_dictionary_describes_each_items_column_by_its_source():
    """Every column of the items table is described, and the two inclusion columns say
    where they come from: included_in is the imported metadata, frameworks_landed (and
    the landing dates) the method tracker's finding."""
    from coding.export.fields import ITEM_FIELDS, ITEM_SOURCES

    described = {f.name: f.description for f in ITEM_FIELDS}
    assert all(described.values()) and set(ITEM_SOURCES) <= set(described)
    assert "imported" in described["included_in"]
    assert "frameworks_landed" in described["included_in"]
    assert "landed in" not in described["included_in"]
    assert "histories" in described["frameworks_landed"]
    for column in ("first_landing", "days_to_first_landing"):
        assert "landing" in described[column]

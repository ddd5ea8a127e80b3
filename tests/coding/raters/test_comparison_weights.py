"""Weighted Cohen's kappa in a two-rater comparison: linear, quadratic or a custom matrix of
agreement weights by option value (issue 17), on the page, the API and the command.

Synthetic labels on an ordered three-option question; the people are conftest's (olive
owns the study)."""

import io
import json
import re

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from sklearn.metrics import cohen_kappa_score

from coding.models import Comparison, Rater
from coding.raters import comparisons
from coding.raters.imports import import_codings
from coding.raters.setup import add_comparison, add_rater
from tests import factories

LEVELS = ("low", "medium", "high")
ORDERED = {
    "name": "Risk codebook", "applies_to": "paper",
    "questions": [
        {"key": "risk", "kind": "single", "text": "Risk of bias?",
         "options": [{"value": v} for v in LEVELS]},
        {"key": "tags", "kind": "multiple", "text": "Tags?",
         "options": [{"value": "a"}, {"value": "b"}]},
    ],
}
LINEAR = {"low": {"low": 1, "medium": 0.5, "high": 0},
          "medium": {"low": 0.5, "medium": 1, "high": 0.5},
          "high": {"low": 0, "medium": 0.5, "high": 1}}
# Partial credit, not symmetric: the model saying "high" where the person says "medium"
# costs less than the other way round.
ASYMMETRIC = {"low": {"low": 1, "medium": 0.25, "high": 0},
              "medium": {"low": 0.5, "medium": 1, "high": 0.75},
              "high": {"low": 0, "medium": 0.9, "high": 1}}
BAD = [
    ({k: v for k, v in LINEAR.items() if k != "high"}, "row 'high' is missing"),
    ({**LINEAR, "extreme": {"low": 0}}, "row 'extreme' is not an option of risk"),
    ({**LINEAR, "low": {"low": 1, "medium": 0.5, "high": 0, "huge": 0}},
     "row 'low': column 'huge' is not an option of risk"),
    ({**LINEAR, "medium": {"low": 0.5, "medium": 0.8, "high": 0.5}},
     r"cell \(medium, medium\): the diagonal must be 1"),
    ({**LINEAR, "high": {"low": 0, "medium": 1.5, "high": 1}},
     r"cell \(high, medium\): 1.5 is not within \[0, 1\]"),
]


@pytest.fixture
def rated(people):
    """120 papers rated by a model and by cora on the ordered question."""
    study = factories.study("Risk study", owner=people["olive"])
    for name in ("olive", "cora", "vera"):
        factories.member(study, people[name], people["names"][name])
    codebook = factories.codebook(study, ORDERED)
    papers = [factories.paper_item(study, codebook, n) for n in range(120)]
    rng = np.random.default_rng(11)
    person = rng.choice(LEVELS, size=len(papers), p=[0.5, 0.3, 0.2])
    shift = rng.choice([-1, 0, 0, 0, 1], size=len(papers))
    model = [LEVELS[min(2, max(0, LEVELS.index(p) + s))] for p, s in zip(person, shift)]
    add_rater(study, None, kind=Rater.Kind.MODEL, name="gpt-labeller", model_version="v1")
    add_rater(study, None, kind=Rater.Kind.OUTSIDE, name="colleague")
    rows = [{"item": p.document.key, "rater": r, "question": "risk", "value": v}
            for r, values in (("gpt-labeller", model), ("colleague", list(person)))
            for p, v in zip(papers, values)]
    import_codings(study, io.StringIO("".join(json.dumps(r) + "\n" for r in rows)), "jsonl")
    study.model, study.person = model, [str(v) for v in person]
    return study


def hand_kappa(first, second, weights):
    """1 - sum(v * observed) / sum(v * expected), v = 1 - w, written out."""
    index = {v: k for k, v in enumerate(LEVELS)}
    observed = np.zeros((3, 3))
    for a, b in zip(first, second):
        observed[index[a], index[b]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    disagreement = 1 - np.array([[weights[r][c] for c in LEVELS] for r in LEVELS])
    return 1 - (disagreement * observed).sum() / (disagreement * expected).sum()


def test_a_linear_matrix_gives_exactly_linear_kappa_as_sklearn_says(rated, client_for, people):
    client = client_for(people["olive"])
    api = f"/api/studies/{rated.slug}/comparisons/"
    made = {}
    for name, fields in (("plain", {}), ("linear", {"weighting": "linear"}),
                         ("matrix", {"weights": LINEAR}),
                         ("quadratic", {"weighting": "quadratic"})):
        response = client.post(api, {"name": name, "first": "gpt-labeller",
                                     "second": "colleague", "question": "risk", **fields},
                               content_type="application/json")
        assert response.status_code == 201, response.content
        made[name] = client.get(f"{api}{response.json()['id']}/").json()
    linear, matrix = made["linear"], made["matrix"]
    assert (linear["weighting"], matrix["weighting"]) == ("linear", "custom")
    assert matrix["kappa"] == linear["kappa"]  # value and bootstrap interval, exactly
    assert matrix["weights"] == linear["weights"] == [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]
    model, person = rated.model, rated.person
    assert linear["kappa"]["value"] == pytest.approx(
        cohen_kappa_score(model, person, labels=list(LEVELS), weights="linear"))
    assert linear["kappa"]["value"] == pytest.approx(hand_kappa(model, person, LINEAR))
    assert made["quadratic"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score(model, person, labels=list(LEVELS), weights="quadratic"))
    plain = made["plain"]
    assert (plain["weighting"], plain["weights"]) == ("unweighted", None)
    assert plain["kappa"]["value"] == pytest.approx(cohen_kappa_score(model, person))
    assert plain["kappa"]["value"] != pytest.approx(linear["kappa"]["value"])
    listed = {c["name"]: c for c in client.get(api).json()}
    assert listed["matrix"]["weights"] == LINEAR and listed["plain"]["weighting"] == "unweighted"


def test_an_asymmetric_matrix_gives_the_hand_computed_kappa_on_the_page(rated, client_for,
                                                                        people):
    client = client_for(people["olive"])
    response = client.post(f"/studies/{rated.slug}/raters/", {
        "action": "comparison", "name": "partial credit", "first": "gpt-labeller",
        "second": "colleague", "question": "risk", "weighting": "custom",
        "weights": json.dumps(ASYMMETRIC)})
    assert response.status_code == 302, response.content.decode()
    comparison = Comparison.objects.get(study=rated, name="partial credit")
    assert (comparison.weighting, comparison.weights) == ("custom", ASYMMETRIC)
    result = comparisons.compute(comparison)
    model, person = rated.model, rated.person
    expected = hand_kappa(model, person, ASYMMETRIC)
    assert result["kappa"]["value"] == pytest.approx(expected)
    # The interval: the same resamples as the unweighted one, each kappa by hand.
    rng = np.random.default_rng(0)
    draws = rng.integers(0, len(model), size=(1000, len(model)))
    estimates = [hand_kappa([model[i] for i in rows], [person[i] for i in rows], ASYMMETRIC)
                 for rows in draws]
    low, high = np.quantile(estimates, [0.025, 0.975])
    assert (result["kappa"]["low"], result["kappa"]["high"]) == pytest.approx((low, high))
    swapped = add_comparison(rated, None, name="swapped", first="colleague",
                             second="gpt-labeller", question="risk", weights=ASYMMETRIC)
    assert comparisons.compute(swapped)["kappa"]["value"] == pytest.approx(
        hand_kappa(person, model, ASYMMETRIC))

    html = client.get(f"/studies/{rated.slug}/comparisons/{comparison.pk}/").content.decode()
    assert '<span class="muted" id="weighting">(custom weights, below)</span>' in html
    assert f"{expected:.3f}" in html and f'<span id="kappa-low">{low:.3f}</span>' in html
    assert '<table class="confusion" id="weights">' in html
    assert "<th scope=\"row\">medium</th><td>0.500</td><td>1.000</td><td>0.750</td>" in html
    text = comparisons.as_text(result)
    assert f"Cohen's kappa {expected:.3f} [{low:.3f}, {high:.3f}] (custom; 95% bootstrap" in text
    assert "agreement weights (rows: first, columns: second):" in text


def test_unweighted_comparisons_keep_their_numbers_and_say_so(rated, client_for, people):
    comparison = add_comparison(rated, None, name="plain", first="gpt-labeller",
                                second="colleague", question="risk")
    result = comparisons.compute(comparison)
    table = np.array(result["table"])
    assert result["kappa"]["value"] == comparisons._kappa(table[None])[0]
    assert result["kappa"]["value"] == pytest.approx(
        cohen_kappa_score(rated.model, rated.person))
    html = client_for(people["vera"]).get(
        f"/studies/{rated.slug}/comparisons/{comparison.pk}/").content.decode()
    assert '<span class="muted" id="weighting">(unweighted)</span>' in html
    assert 'id="weights"' not in html
    assert "(unweighted; 95% bootstrap, 1000 resamples)" in comparisons.as_text(result)


@pytest.mark.parametrize("matrix, message", BAD)
def test_a_bad_matrix_is_refused_naming_the_cell_on_every_door(rated, client_for, people,
                                                               tmp_path, matrix, message):
    client = client_for(people["olive"])
    given = {"name": "bad", "first": "gpt-labeller", "second": "colleague", "question": "risk"}
    response = client.post(f"/api/studies/{rated.slug}/comparisons/",
                           {**given, "weights": matrix}, content_type="application/json")
    assert response.status_code == 400
    assert re.search(message, json.dumps(response.json())), response.json()
    page = client.post(f"/studies/{rated.slug}/raters/", {
        "action": "comparison", **given, "weighting": "custom", "weights": json.dumps(matrix)})
    assert page.status_code == 400
    assert re.search(message, page.content.decode().replace("&#x27;", "'"))
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(matrix))
    with pytest.raises(CommandError, match=message):
        call_command("compare_raters", rated.slug, "bad", "--first", "gpt-labeller",
                     "--second", "colleague", "--question", "risk", "--weights-file",
                     str(path), stdout=io.StringIO())
    assert not Comparison.objects.filter(study=rated).exists()


def test_weights_only_on_a_one_answer_question_and_only_as_a_custom_matrix(rated):
    with pytest.raises(Exception, match="single-choice or yes/no question only"):
        add_comparison(rated, None, name="tags", first="gpt-labeller", second="colleague",
                       question="tags", weighting="linear")
    with pytest.raises(Exception, match="needs the custom weighting, not linear"):
        add_comparison(rated, None, name="both", first="gpt-labeller", second="colleague",
                       question="risk", weighting="linear", weights=LINEAR)
    with pytest.raises(Exception, match="unknown weighting 'cubic'"):
        add_comparison(rated, None, name="cubic", first="gpt-labeller", second="colleague",
                       question="risk", weighting="cubic")
    assert not Comparison.objects.filter(study=rated).exists()


def test_the_command_weights_kappa_linearly_or_by_a_file(rated, tmp_path):
    out = io.StringIO()
    call_command("compare_raters", rated.slug, "linear", "--first", "gpt-labeller",
                 "--second", "colleague", "--question", "risk", "--weights", "linear",
                 stdout=out)
    linear = cohen_kappa_score(rated.model, rated.person, labels=list(LEVELS),
                               weights="linear")
    assert f"Cohen's kappa {linear:.3f} [" in out.getvalue()
    assert "(linear; 95% bootstrap" in out.getvalue()
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(ASYMMETRIC))
    out = io.StringIO()
    call_command("compare_raters", rated.slug, "partial", "--first", "gpt-labeller",
                 "--second", "colleague", "--question", "risk", "--weights-file", str(path),
                 "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["weighting"] == "custom"
    assert result["kappa"]["value"] == pytest.approx(
        hand_kappa(rated.model, rated.person, ASYMMETRIC))
    with pytest.raises(CommandError, match="its weighting \\(linear\\) was set when it was made"):
        call_command("compare_raters", rated.slug, "linear", "--weights", "quadratic")


def test_the_api_schema_documents_the_weights(client_for, people):
    schema = client_for(people["olive"]).get("/api/schema/",
                                             HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]
    assert "custom matrix of agreement weights" in components["Comparison"]["properties"][
        "weights"]["description"]
    assert "unweighted" in components["ComparisonResult"]["properties"]["weighting"][
        "description"]

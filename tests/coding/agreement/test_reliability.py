"""The reliability report: known answers through the whole path (codings in the database
to numbers in the report), rule 3 (independent codings only, calibration apart), "not
applicable" kept apart from "missing", the sample-size formula, and the snapshots."""

import functools
import json
import math
import re

import numpy as np
import pytest
from django.core.management import call_command
from django.utils import timezone

from coding.actions import sample
from coding.actions.submit import record_coding, submit
from coding.agreement import snapshots
from coding.agreement.alpha import bootstrap_ci, fleiss_kappa, krippendorff_alpha
from coding.agreement.bootstrap import alpha_interval
from coding.agreement.reliability import study_report
from coding.agreement.sample_size import plan, units_needed, values_needed, verdict
from coding.codebooks.versions import create_codebook
from coding.demo.study import DEMO_SLUG
from coding.labeling import queue
from coding.models import AgreementSnapshot, Coding, Decision, Item, Role, Study
from tests import factories
from workbench import jobs
from workbench.models import Job

nan = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders x 12 units.
KRIPPENDORFF_2011 = [
    [1, 1, nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [nan, 5, 5, 5], [nan, nan, 1, 1], [nan, 3, nan, nan],
]
VALUES = [{"value": str(v), "label": str(v)} for v in range(1, 6)]
TONE_CODEBOOK = {
    "name": "Tone", "applies_to": "paper",
    "questions": [
        {"key": "tone", "kind": "single", "text": "Tone (nominal)", "options": VALUES},
        {"key": "tone_rank", "kind": "single", "level": "ordinal", "text": "Tone (ordinal)",
         "options": VALUES},
        {"key": "tone_score", "kind": "number", "level": "interval", "text": "Tone (interval)"},
        {"key": "tone_ratio", "kind": "number", "level": "ratio", "text": "Tone (ratio)"},
    ],
}
CONDITIONAL_CODEBOOK = {
    "name": "Conditional", "applies_to": "paper",
    "questions": [
        {"key": "label", "kind": "single", "text": "Main contribution?",
         "options": [{"value": "rl_method"}, {"value": "analysis"}]},
        {"key": "scope", "kind": "single", "text": "Scope?",
         "show_if": {"question": "label", "in": ["rl_method"]},
         "options": [{"value": "general"}, {"value": "embedded"}]},
        {"key": "venue", "kind": "single", "required": False, "text": "Venue, if stated",
         "options": [{"value": "journal"}, {"value": "conference"}]},
    ],
}


def question(report, key, round="main"):
    return next(q for book in report["rounds"][round]["codebooks"]
                for q in book["questions"] if q["key"] == key)


def coders(study, *names):
    people = [factories.user(name) for name in names]
    for person in people:
        factories.member(study, person, Role.CODER)
    return people


def code(item, coder, values, **kwargs):
    assignment = item.assignments.filter(coder=coder).first() or queue.assign(item, coder)
    return record_coding(assignment, values, **kwargs)


@pytest.fixture
def krippendorff_study(db):
    """Krippendorff's 2011 reliability data, coded through the workbench: each cell one
    coding; the same value answered at four levels of measurement."""
    study = factories.study("Tone study", overlap=4)
    book = create_codebook(study, TONE_CODEBOOK)
    people = coders(study, "ka", "kb", "kc", "kd")
    for n, row in enumerate(KRIPPENDORFF_2011):
        item = factories.paper_item(study, book, n)
        for person, value in zip(people, row):
            if value == value:
                v = int(value)
                code(item, person, {"tone": str(v), "tone_rank": str(v), "tone_score": v,
                                    "tone_ratio": v})
    return study


@pytest.mark.parametrize("key, alpha", [
    ("tone", 0.743), ("tone_rank", 0.815), ("tone_score", 0.849), ("tone_ratio", 0.797)])
def test_alpha_reproduces_krippendorffs_worked_example_at_each_level(krippendorff_study, key,
                                                                      alpha):
    report = study_report(krippendorff_study, n_boot=200)
    found = question(report, key)
    assert round(found["alpha"]["value"], 3) == alpha
    assert found["units"] == 11  # the twelfth unit has one value: not a reliability unit
    assert found["coders"] == 4
    assert found["alpha"]["low"] <= found["alpha"]["value"] <= found["alpha"]["high"]


def test_more_than_two_coders_get_fleiss_kappa_and_percent_agreement(krippendorff_study):
    found = question(study_report(krippendorff_study, n_boot=50), "tone")
    pairable = [row for row in KRIPPENDORFF_2011 if sum(v == v for v in row) >= 2]
    assert found["kappa"]["name"] == "Fleiss' kappa"
    assert found["kappa"]["value"] == pytest.approx(fleiss_kappa(np.array(pairable)))
    assert round(found["percent_agreement"], 3) == 0.818  # Gwet's Handbook, same data


@pytest.fixture
def two_coder_study(alpha, people):
    """Ten papers coded by cora and cyril: code_released agrees on 8 (4 yes, 4 no)."""
    papers = alpha.papers + [factories.paper_item(alpha, alpha.paper_codebook, n)
                             for n in range(3, 10)]
    cora = ["yes"] * 5 + ["no"] * 5
    cyril = ["yes"] * 4 + ["no"] + ["yes"] + ["no"] * 4
    for paper, a, b in zip(papers, cora, cyril):
        factories.code(paper, people["cora"], code_released=a)
        factories.code(paper, people["cyril"], code_released=b)
    return alpha


def test_two_coders_get_cohens_kappa_with_its_known_value(two_coder_study):
    found = question(study_report(two_coder_study, n_boot=50), "code_released")
    # p_o = 0.8; both coders say yes half the time, so p_e = 0.5 and kappa = 0.6.
    assert found["kappa"] | {"low": None, "high": None} == {
        "name": "Cohen's kappa", "value": pytest.approx(0.6), "note": "", "low": None,
        "high": None}
    assert found["kappa"]["low"] < 0.6 < found["kappa"]["high"]
    assert found["percent_agreement"] == pytest.approx(0.8)
    assert found["units"] == 10 and found["coders"] == 2


def test_two_coders_get_every_coefficient_with_an_interval(two_coder_study):
    """Table [[4, 1], [1, 4]]: p_o = .8 and both coders' shares are .5, so Cohen, Scott,
    AC1, Brennan-Prediger and PABAK are all (.8 - .5) / .5 = .6; no lean either way: bias
    index 0, prevalence index (4 - 4) / 10 = 0, Stuart-Maxwell statistic 0."""
    found = question(study_report(two_coder_study, n_boot=200), "code_released")
    figures = {c["key"]: c for c in found["coefficients"]}
    assert set(figures) == {"cohen", "scott", "ac1", "brennan_prediger"}
    for figure in figures.values():
        assert figure["value"] == pytest.approx(0.6)
        assert figure["low"] < 0.6 < figure["high"] <= 1
    two = found["two_coders"]
    assert two["units"] == 10 and two["pabak"]["value"] == pytest.approx(0.6)
    assert two["bias_index"]["value"] == 0 and two["prevalence_index"]["value"] == 0
    assert two["stuart_maxwell"] == {"statistic": 0.0, "df": 1, "p": pytest.approx(1.0)}


def test_the_verdict_follows_the_intervals_lower_bound(two_coder_study):
    """Alpha 0.6 on 10 units: its interval reaches far below .667, so not reliable, and
    the verdict says so even where the point estimate alone would read otherwise."""
    found = question(study_report(two_coder_study, n_boot=200), "code_released")["alpha"]
    assert found["verdict"] == verdict(found["low"]) == "unreliable"
    assert found["low"] < found["value"]


def test_confusion_and_per_category_agreement_have_known_values(two_coder_study):
    found = question(study_report(two_coder_study, n_boot=50), "code_released")
    assert found["confusion"] == {"labels": ["yes", "no"], "counts": [[8, 2], [2, 8]]}
    yes = next(c for c in found["categories"] if c["value"] == "yes")
    # Specific agreement 2a / (2a + b + c) = 8 / 10.
    assert yes["n"] == 10 and yes["specific_agreement"] == pytest.approx(0.8)
    assert found["coder_pairs"] == [{"a": "cora", "b": "cyril", "units": 10,
                                     "percent_agreement": pytest.approx(0.8),
                                     "alpha": pytest.approx(found["alpha"]["value"])}]


def test_not_applicable_is_counted_apart_from_missing_and_left_out_of_units(db):
    study = factories.study("Conditions")
    book = create_codebook(study, CONDITIONAL_CODEBOOK)
    ann, bo = coders(study, "ann", "bo")
    first, second = (factories.paper_item(study, book, n) for n in range(2))
    code(first, ann, {"label": "rl_method", "scope": "general", "venue": "journal"})
    code(first, bo, {"label": "analysis"})  # scope not applicable; venue missing
    code(second, ann, {"label": "rl_method", "scope": "general", "venue": "journal"})
    code(second, bo, {"label": "rl_method", "scope": "embedded", "venue": "journal"})
    report = study_report(study, n_boot=50)
    scope, venue = question(report, "scope"), question(report, "venue")
    assert (scope["not_applicable"], scope["missing"], scope["units"]) == (1, 0, 1)
    assert (venue["not_applicable"], venue["missing"], venue["units"]) == (0, 1, 1)
    assert scope["percent_agreement"] == 0.0  # only the second paper is a unit of scope


def test_revisions_after_discussion_never_feed_reliability(alpha, people):
    paper = alpha.papers[0]
    factories.code(paper, people["cora"], label="analysis")
    factories.code(paper, people["cyril"], label="rl_method", scope="general")
    Item.objects.filter(pk=paper.pk).update(discussion_opened_at="2026-01-01T00:00:00Z")
    cyril = paper.assignments.get(coder=people["cyril"])
    record_coding(cyril, {"label": "analysis", "size_b": 7, "failures": ["none"],
                          "code_released": "no"}, phase=Coding.Phase.RECONCILIATION)
    assert question(study_report(alpha, n_boot=50), "label")["percent_agreement"] == 0.0


def test_calibration_round_is_reported_apart(alpha, people):
    calibration = factories.paper_item(alpha, alpha.paper_codebook, 7, round=Item.Round.CALIBRATION)
    factories.code(calibration, people["cora"], label="analysis")
    factories.code(calibration, people["cyril"], label="analysis")
    factories.code(alpha.papers[0], people["cora"], label="analysis")
    factories.code(alpha.papers[0], people["cyril"], label="rl_method", scope="general")
    report = study_report(alpha, n_boot=50)
    assert question(report, "label", "calibration")["percent_agreement"] == 1.0
    assert question(report, "label", "main")["percent_agreement"] == 0.0
    assert report["rounds"]["calibration"]["items"] == report["rounds"]["main"]["items"] == 1


def test_each_coder_is_compared_with_the_current_decision(alpha, people):
    paper = alpha.papers[0]
    factories.code(paper, people["cora"], label="analysis")
    factories.code(paper, people["cyril"], label="rl_method", scope="general")
    Decision.objects.create(item=paper, question_key="label", revision=1, value="analysis",
                            method=Decision.Method.ADJUDICATED, decided_by=people["ada"])
    Decision.objects.create(item=paper, question_key="label", revision=2, value="rl_method",
                            method=Decision.Method.ADJUDICATED, decided_by=people["ada"])
    rows = question(study_report(alpha, n_boot=50), "label")["against_decisions"]
    assert {row["coder"]: row["percent_agreement"] for row in rows} == {"cora": 0.0, "cyril": 1.0}
    cora = next(row for row in rows if row["coder"] == "cora")
    assert cora["confusion"] == {"labels": ["rl_method", "analysis"], "counts": [[0, 0], [1, 0]]}


def test_coders_are_compared_only_with_decisions_they_did_not_make(alpha, people):
    """Unanimous decisions are the coders' own answers, and an item the coder adjudicated
    holds their view: neither counts, or every coder would score 100% (circular)."""
    first, second, third = alpha.papers
    for paper in (first, second, third):
        factories.code(paper, people["cora"], label="analysis")
    factories.code(first, people["cyril"], label="analysis")
    factories.code(second, people["cyril"], label="rl_method", scope="general")
    factories.code(third, people["cyril"], label="rl_method", scope="general")
    assert Decision.objects.get(item=first, question_key="label").method == "unanimous"
    Decision.objects.create(item=second, question_key="label", revision=1, value="rl_method",
                            method=Decision.Method.ADJUDICATED, decided_by=people["cyril"])
    Decision.objects.create(item=third, question_key="label", revision=1, value="analysis",
                            method=Decision.Method.ADJUDICATED, decided_by=people["ada"])
    rows = question(study_report(alpha, n_boot=50), "label")["against_decisions"]
    # cora: the second (cyril decided) and third (ada) count, and she missed the second;
    # cyril: only the third, which he missed.
    assert {r["coder"]: (r["units"], r["percent_agreement"]) for r in rows} == {
        "cora": (2, 0.5), "cyril": (1, 0.0)}


def test_multiple_choice_is_measured_with_masi_on_sets(alpha, people):
    answers = [(["entropy_collapse"], ["entropy_collapse", "none"]), (["none"], ["none"]),
               (["entropy_collapse"], ["none"])]
    for paper, (a, b) in zip(alpha.papers, answers):
        factories.code(paper, people["cora"], failures=a)
        factories.code(paper, people["cyril"], failures=b)
    found = question(study_report(alpha, n_boot=50), "failures")
    expected = krippendorff_alpha([[set(a), set(b)] for a, b in answers], "masi")
    assert found["metric"] == "masi" and found["alpha"]["value"] == pytest.approx(expected)
    assert found["kappa"]["value"] is None
    assert {c["value"]: c["n"] for c in found["categories"]} == {"entropy_collapse": 3, "none": 4}


def test_special_answers_count_in_alpha_and_a_numbers_only_alpha_is_shown_apart(alpha, people):
    """Units (7, 7), (14, 14), ("not reported", 7). On all answers "not reported" against 7
    is a full disagreement (distance 1) and 7 against 14 the ratio distance (7/21)^2; the
    coincidence matrix has n_7 = 3, n_14 = 2, n_nr = 1, n = 6, one pair (nr, 7) each way:
    alpha = 1 - 5 * 2 / (2 * (3 * 2 / 9 + 3 * 1 + 2 * 1)). On numbers only the disagreeing
    value is left out: alpha 1.0 on the two other units."""
    for paper, (a, b) in zip(alpha.papers, [(7, 7), (14, 14), ("not_reported", 7)]):
        factories.code(paper, people["cora"], size_b=a)
        factories.code(paper, people["cyril"], size_b=b)
    found = question(study_report(alpha, n_boot=50), "size_b")
    expected = 1 - 5 * 2 / (2 * (3 * 2 / 9 + 3 + 2))
    assert found["alpha"]["value"] == pytest.approx(expected) and found["alpha"]["level"] == "mixed"
    assert found["alpha_numbers"]["value"] == 1.0 and found["alpha_numbers"]["level"] == "ratio"
    assert found["alpha_numbers"]["left_out"] == 1 and found["alpha_numbers"]["units"] == 2
    assert found["percent_agreement"] == pytest.approx(2 / 3)
    assert "not_reported" in found["note"] and "not_reported" in found["included"]


# --- pure parts: interval, sample size, thresholds ---------------------------------------

def test_pattern_bootstrap_matches_resampling_rows():
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 4, size=(300, 1))
    ratings = np.where(rng.random((300, 3)) < 0.7, truth, rng.integers(0, 4, size=(300, 3)))
    ratings = ratings.astype(float)
    ratings[rng.random((300, 3)) < 0.2] = nan
    for level in ("nominal", "ordinal", "interval"):
        ours = alpha_interval(ratings, level, n_boot=2000, seed=1)
        rows = ratings[(~np.isnan(ratings)).sum(axis=1) >= 2]
        theirs = bootstrap_ci(functools.partial(krippendorff_alpha, level=level), rows,
                              n_boot=2000, seed=1)
        assert ours == pytest.approx(theirs, abs=0.03)


@pytest.mark.parametrize("alpha_min, share, figure", [(0.800, 0.25, 139), (0.667, 0.25, 81)])
def test_sample_size_reproduces_krippendorffs_table_for_two_coders(alpha_min, share, figure):
    assert values_needed(alpha_min, share, 0.05, coders=2) == figure


def test_sample_size_in_units_follows_the_formula():
    z = 1.6448536269514722
    expected = z * z * (1.8 * 2.2 / (4 * 0.2 * 0.5 * 0.5) - 0.8)
    assert units_needed(0.800, 0.5, 0.05) == math.ceil(expected) == 52
    assert units_needed(0.800, 0.05) > units_needed(0.800, 0.25)  # rarer needs more


@pytest.mark.parametrize("alpha, expected", [
    (0.95, "reliable"), (0.800, "reliable"), (0.7999, "tentative"), (0.667, "tentative"),
    (0.6669, "unreliable"), (-0.2, "unreliable"), (None, None), (nan, None)])
def test_thresholds_follow_content_analysis_practice(alpha, expected):
    assert verdict(alpha) == expected


def test_plan_warns_when_the_sample_is_small_or_a_category_rare():
    main = {"codebooks": [{"name": "Papers", "questions": [{
        "key": "label", "kind": "single", "units": 40, "values": 80,
        "categories": [{"label": "common", "n": 76, "share": 0.95},
                       {"label": "rare", "n": 4, "share": 0.05},
                       {"label": "unused", "n": 0, "share": 0.0}]}]}]}
    result = plan(main, offered={"label": 3}, sample_size=50, coders=2)
    # The observed rarest category (4 of 80 values), not equal shares of the three offered.
    assert result["units_needed"] == units_needed(0.800, 0.05) > units_needed(0.800, 1 / 3)
    assert result["smallest_share"] == 0.05 and "observed" in result["share_source"]
    assert result["questions"][0]["rarest"] == "rare"
    assert result["sample_warnings"][0].startswith("The reliability sample holds 50 items, "
                                                   "fewer than")
    rare, unused = result["questions"][0]["warnings"]
    assert rare.startswith("“rare” is only 5.0% of values") and "unused" in unused
    assert result["warnings"] == result["sample_warnings"] + [f"label: {rare}", f"label: {unused}"]
    roomy = plan(main, offered={}, sample_size=500, coders=2, smallest_share=0.5)
    assert roomy["sample_warnings"] == [] and roomy["warnings"][0].startswith("label: “rare” has")


def test_planner_uses_the_observed_rarest_share_as_in_the_issue():
    """Issue 17: the rarest observed category, 16.5% of values, needs 96 units, whatever
    equal shares of the offered categories would say; before any coding equal shares
    stand in."""
    main = {"codebooks": [{"name": "Papers", "questions": [{
        "key": "label", "kind": "single", "units": 100, "values": 200,
        "categories": [{"label": "common", "n": 167, "share": 0.835},
                       {"label": "rare", "n": 33, "share": 0.165}]}]}]}
    assert plan(main, offered={"label": 7}, sample_size=200, coders=2)["units_needed"] == 96
    empty = {"codebooks": []}
    before = plan(empty, offered={"label": 7}, sample_size=200, coders=2)
    assert before["units_needed"] == units_needed(0.800, 1 / 7)
    assert before["share_source"].startswith("nothing coded yet")


def test_a_sample_drawn_after_coding_is_described_as_drawn_with_its_plan(alpha, people):
    """All items drawn after coding began: not "a simple random sample (a share of 0.2)"."""
    from coding.agreement.report import describe_sample

    for coder in ("cora", "cyril"):
        factories.code(alpha.papers[0], people[coder], label="analysis")
    snapshots.take_snapshot(alpha)
    sample.draw_reliability_sample(alpha, share=1.0, seed=5, user=people["olive"])
    alpha.refresh_from_db()
    drawn = alpha.reliability_sample
    assert (drawn["coded_before"], drawn["kept_for_overlap"], drawn["drawn_by"]) == (1, 1, "olive")
    assert drawn["plan"]["units_needed"] >= 1 and drawn["plan"]["alpha_min"] == 0.8
    text = describe_sample(alpha)["text"]
    assert text.startswith("all 3 main-round items (the draw took every item), drawn ")
    assert "after coding had begun (1 of the 3 items already coded" in text
    assert "simple random sample" not in text
    assert f"asked for {drawn['plan']['units_needed']} units" in text


def test_every_draw_is_kept_and_an_earlier_one_stays_readable_after_a_redraw(alpha, people,
                                                                           client_for):
    """Two draws: the paste-ready text describes the newest from its kept record; the
    first is still there, as drawn, with its plan's inputs and observed shares."""
    from coding.agreement.report import current_document
    from coding.models.reliability import SampleDraw

    for coder, label in (("cora", "analysis"), ("cyril", "rl_method")):
        scope = {"scope": "general"} if label == "rl_method" else {}
        factories.code(alpha.papers[0], people[coder], label=label, **scope)
    for n in range(3, 6):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    snapshots.take_snapshot(alpha)
    # Two drawn, and the item two coders coded already kept whatever the draw.
    size = len(sample.draw_reliability_sample(alpha, count=2, seed=5, user=people["olive"]))
    alpha.refresh_from_db()
    alpha.overlap = 3
    alpha.save(update_fields=["overlap"])
    sample.draw_reliability_sample(alpha, share=1.0, seed=9, user=people["olive"])
    alpha.refresh_from_db()
    first, second = SampleDraw.objects.filter(study=alpha).order_by("drawn_at", "id")
    assert (first.size, first.record["count"], first.record["seed"]) == (size, 2, 5)
    assert (second.size, second.record["share"], second.record["seed"]) == (6, 1.0, 9)
    assert first.record["overlap"] == 2 and second.record["overlap"] == 3
    plan = first.record["plan"]
    assert plan["inputs"] == {"alpha_min": 0.8, "significance": 0.05, "smallest_share": None}
    observed = {q["key"]: q for q in plan["observed"]}
    assert observed["label"]["rarest_share"] == 0.5  # one analysis, one rl_method
    assert plan["from_snapshot"]["n_codings"] == 2
    # Saving the study again with the same sample adds no draw.
    alpha.save(update_fields=["reliability_sample"])
    assert SampleDraw.objects.filter(study=alpha).count() == 2
    doc = client_for(people["olive"]).get(f"/api/studies/{alpha.slug}/agreement/").json()
    drawn = doc["sample"]
    assert [d["size"] for d in drawn["draws"]] == [6, size]
    assert drawn["text"].startswith("all 6 main-round items (the draw took every item)")
    assert "each item in it assigned to 3 coders" in drawn["text"]
    earlier = drawn["draws"][1]["text"]
    assert earlier.startswith(f"a simple random sample of {size} of the 6 main-round items "
                              "(2 items asked for, seed 5)")
    assert "assigned to 2 coders" in earlier
    assert drawn["text"] in doc["text"] and earlier not in doc["text"]
    html = client_for(people["olive"]).get(f"/studies/{alpha.slug}/agreement/").content.decode()
    assert "1 earlier draw, kept as drawn" in html and "seed 5" in html
    assert current_document(alpha)["sample"]["draws"][1]["how"]["count"] == 2


def test_drift_flags_a_coder_whose_agreement_falls_in_later_batches(alpha, people):
    """40 papers coded in order by cora then cyril: they agree on the first 20 and cyril
    answers the opposite of cora on the last 20. Two batches of 40 codings, in submission
    order: cyril is flagged in the late batch (20 units) and not in the early one."""
    papers = alpha.papers + [factories.paper_item(alpha, alpha.paper_codebook, n)
                             for n in range(3, 40)]
    for n, paper in enumerate(papers):
        answer = "yes" if n % 2 else "no"
        other = answer if n < 20 else {"yes": "no", "no": "yes"}[answer]
        factories.code(paper, people["cora"], code_released=answer)
        factories.code(paper, people["cyril"], code_released=other)
    drift = question(study_report(alpha, n_boot=50), "code_released")["drift"]
    assert len(drift["windows"]) == 2 and drift["windows"][0]["from"] <= drift["windows"][-1]["to"]
    cyril = next(c for c in drift["coders"] if c["coder"] == "cyril")
    assert cyril["flagged"]
    early, late = cyril["points"]
    assert early["units"] == late["units"] == 20
    assert early["percent_agreement"] == 1.0 and not early["flag"]
    assert late["percent_agreement"] == 0.0 and late["flag"] and late["alpha"] < 0


def test_drift_does_not_flag_coders_who_agree_as_well_as_the_rest(alpha, people):
    """Issue 39, finding 5: the same 40 papers, the coders agreeing on all but two of the
    late batch. The late window's lower bound falls below .667 (20 units give a wide
    interval), but the interval reaches the question's alpha over all coders: no flag."""
    papers = alpha.papers + [factories.paper_item(alpha, alpha.paper_codebook, n)
                             for n in range(3, 40)]
    for n, paper in enumerate(papers):
        answer = "yes" if n % 2 else "no"
        other = {"yes": "no", "no": "yes"}[answer] if n in (25, 32) else answer
        factories.code(paper, people["cora"], code_released=answer)
        factories.code(paper, people["cyril"], code_released=other)
    found = question(study_report(alpha, n_boot=50), "code_released")
    late = next(c for c in found["drift"]["coders"] if c["coder"] == "cyril")["points"][1]
    assert late["low"] < 0.667 <= found["alpha"]["value"] <= late["high"]
    assert not any(c["flagged"] for c in found["drift"]["coders"])


def three_coders_over_five_weeks(alpha, people, drifting_from_week):
    """60 papers, 12 a week over five weeks from Monday 5 January 2026, each coded by
    cora, cyril and dana; cyril answers the opposite of the other two from the given
    week on (never if None)."""
    from datetime import datetime, timedelta
    from datetime import timezone as utc

    dana = factories.user("dana")
    factories.member(alpha, dana, Role.CODER)
    alpha.overlap = 3
    alpha.save(update_fields=["overlap"])
    papers = [factories.paper_item(alpha, alpha.paper_codebook, 100 + n) for n in range(60)]
    Item.objects.filter(pk__in=[p.pk for p in papers]).update(target=3)
    monday = datetime(2026, 1, 5, 9, tzinfo=utc.utc)
    for n, paper in enumerate(papers):
        week = n // 12
        answer = "yes" if n % 2 else "no"
        moved = drifting_from_week is not None and week >= drifting_from_week
        for coder in (people["cora"], people["cyril"], dana):
            given = {"yes": "no", "no": "yes"}[answer] if moved and coder == people["cyril"] \
                else answer
            coding = factories.code(paper, coder, code_released=given)
            Coding.objects.filter(pk=coding.pk).update(
                submitted_at=monday + timedelta(weeks=week, days=n % 5, hours=n % 3))


def calendar_drift(alpha):
    return question(study_report(alpha, n_boot=50), "code_released")["drift_calendar"]


def test_calendar_drift_flags_the_coder_who_starts_disagreeing_in_a_later_week(alpha, people):
    """The round spans five weeks (more than 26 days), so the windows are ISO weeks. From
    week 4 cyril answers the opposite of cora and dana: cyril is flagged in weeks 4 and 5
    only; cora and dana, who go on agreeing with each other, are never flagged."""
    three_coders_over_five_weeks(alpha, people, drifting_from_week=3)
    drift = calendar_drift(alpha)
    assert drift["unit"] == "week" and "ISO weeks" in drift["rule"]
    assert [w["from"] for w in drift["windows"]] == [
        "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26", "2026-02-02"]
    assert drift["windows"][0]["to"] == "2026-01-11"
    coders = {c["coder"]: c for c in drift["coders"]}
    cyril = coders["cyril"]
    assert cyril["flagged"]
    assert [(p["window"], p["units"], p["flag"]) for p in cyril["points"]] == [
        (0, 12, False), (1, 12, False), (2, 12, False), (3, 12, True), (4, 12, True)]
    assert cyril["points"][0]["alpha"] == 1.0 and cyril["points"][3]["alpha"] < 0
    assert cyril["points"][3]["percent_agreement"] == 0.0
    for name in ("cora", "dana"):
        # In weeks 4 and 5 the others (cyril and one more) differ among themselves: no units.
        assert not coders[name]["flagged"]
        assert [p["window"] for p in coders[name]["points"]] == [0, 1, 2]
        assert all(p["alpha"] == 1.0 and p["low"] == 1.0 for p in coders[name]["points"])


def test_calendar_drift_flags_no_one_when_no_one_moves(alpha, people):
    three_coders_over_five_weeks(alpha, people, drifting_from_week=None)
    drift = calendar_drift(alpha)
    assert [len(c["points"]) for c in drift["coders"]] == [5, 5, 5]
    assert not any(c["flagged"] or any(p["flag"] for p in c["points"])
                   for c in drift["coders"])


def test_calendar_windows_are_days_weeks_or_months_by_the_span():
    from datetime import datetime
    from datetime import timezone as utc

    from coding.agreement.reliability import calendar_windows

    def at(*day):
        return datetime(*day, 12, tzinfo=utc.utc).timestamp()

    days = calendar_windows(np.array([at(2026, 3, 2), at(2026, 3, 9)]))
    assert days["unit"] == "day" and len(days["windows"]) == 8
    weeks = calendar_windows(np.array([at(2026, 3, 4), at(2026, 6, 1)]))
    assert weeks["unit"] == "week" and weeks["windows"][0]["from"] == "2026-03-02"
    months = calendar_windows(np.array([at(2025, 1, 20), at(2026, 6, 1)]))
    assert months["unit"] == "month" and len(months["windows"]) == 18
    assert months["windows"][0]["from"] == "2025-01-01" and months["windows"][0]["to"] == "2025-01-31"
    assert calendar_windows(np.array([at(2026, 3, 2), at(2026, 3, 2)])) is None


def test_alphas_of_subsets_are_each_subsets_own_alpha():
    from coding.agreement.bootstrap import subset_intervals

    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, size=(300, 3))
    codes[rng.random((300, 3)) < 0.2] = -1
    masks = [rng.random(300) < share for share in (0.3, 0.6, 1.0)]
    for level in ("nominal", "ordinal", "interval"):
        found = subset_intervals(codes, [0, 1, 2, 3], level, masks, n_boot=2000, seed=1)
        for mask, (value, low, high) in zip(masks, found):
            table = np.where(codes[mask] >= 0, codes[mask], np.nan).astype(float)
            assert value == pytest.approx(krippendorff_alpha(table, level), abs=1e-12)
            own_low, own_high = alpha_interval(table, level, n_boot=2000, seed=1)
            assert low == pytest.approx(own_low, abs=0.03)
            assert high == pytest.approx(own_high, abs=0.03)


# --- snapshots and the job ---------------------------------------------------------------

def test_agreement_is_scheduled_after_every_n_codings_and_never_computed_in_the_request(
        alpha, people, settings, django_capture_on_commit_callbacks):
    settings.AGREEMENT_SNAPSHOT_EVERY = 3
    answers = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
    papers = alpha.papers
    for n, (paper, coder) in enumerate([(papers[0], "cora"), (papers[0], "cyril"),
                                        (papers[1], "cora"), (papers[1], "cyril")], start=1):
        assignment = queue.assign(paper, people[coder])
        with django_capture_on_commit_callbacks(execute=True):
            submit(assignment, answers)
        waiting = Job.objects.filter(kind="agreement").count()
        assert waiting == (0 if n < 3 else 1)  # one job, however many codings follow
    assert not AgreementSnapshot.objects.exists()  # nothing computed in a coder's request
    snapshots.run_waiting(alpha)  # what opening the agreement page does, tasks in-process
    assert set(AgreementSnapshot.objects.values_list("round", flat=True)) == {"main"}
    assert Job.objects.get(kind="agreement").status == Job.Status.DONE


def test_scheduling_costs_the_coder_two_small_queries(alpha, django_assert_max_num_queries):
    with django_assert_max_num_queries(2):
        snapshots.schedule_agreement(alpha)


def test_counting_new_codings_sorts_nothing(alpha, people):
    """The bounded count runs after every submission: Coding's default ordering made it
    sort every new coding (1.2 s on a 1M-item study) before counting 20 of them."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    factories.code(alpha.papers[0], people["cora"])
    with CaptureQueriesContext(connection) as captured:
        assert snapshots.new_codings(alpha, limit=20) == 1
        assert snapshots.new_codings(alpha) == 1
    assert len(captured) == 2
    # The one ORDER BY left is the newest snapshot's (an index read, LIMIT 1).
    for query in captured:
        orders = re.findall(r"ORDER BY ([^)]*)", query["sql"])
        assert len(orders) == 1 and "coding_coding" not in orders[0]


def test_a_snapshot_job_delivered_twice_adds_no_second_snapshot(alpha, people):
    factories.code(alpha.papers[0], people["cora"])
    factories.code(alpha.papers[0], people["cyril"])
    for _ in range(2):
        job = Job.objects.create(kind="agreement", params={"study": alpha.pk})
        jobs.run(job.pk)
    assert AgreementSnapshot.objects.filter(study=alpha).count() == 1
    snapshot = AgreementSnapshot.objects.get(study=alpha)
    assert snapshot.n_codings == 2 and snapshot.summary[
        f"{alpha.paper_codebook.pk}:label"]["units"] == 1


def test_the_demo_study_report(db):
    """The demo: three coders in rotating pairs, conditional questions, multiple choice."""
    call_command("load_demo", verbosity=0)
    study = Study.objects.get(slug=DEMO_SLUG)
    report = study_report(study, n_boot=200)
    main = report["rounds"]["main"]
    assert main["coders"] == ["coder1", "coder2", "coder3"]
    assert report["rounds"]["calibration"]["n_codings"] == 0
    label = question(report, "label")
    assert (label["units"], label["coders"], label["kappa"]["name"]) == (60, 3, "Fleiss' kappa")
    # Alpha from the codings read directly, by a second route (the krippendorff package).
    import krippendorff

    rows = {}
    for coding in Coding.objects.filter(assignment__item__study=study,
                                        assignment__item__codebook__name="Paper codebook"):
        rows.setdefault(coding.assignment.item_id, {})[coding.assignment.coder.username] = \
            coding.values["label"]
    names = {"rl_method": 0, "rl_application": 1, "analysis": 2, "systems": 3,
             "offline_preference": 4, "distillation": 5, "out_of_scope": 6}
    table = np.array([[names[r[c]] if c in r else nan for c in main["coders"]]
                      for r in rows.values()])
    assert label["alpha"]["value"] == pytest.approx(
        krippendorff.alpha(table.T, level_of_measurement="nominal"))
    scope = question(report, "scope")
    assert scope["not_applicable"] == sum(1 for r in rows.values() for v in r.values()
                                          if v != "rl_method")
    assert question(report, "method_named")["metric"] is None  # free text
    assert question(report, "failure_addressed")["metric"] == "masi"
    # Drift: each coder against the others over batches of the round (the "Over time"
    # section is never empty on the demo).
    drift = label["drift"]
    assert len(drift["windows"]) >= 2
    assert {c["coder"] for c in drift["coders"]} == {"coder1", "coder2", "coder3"}
    assert all(p["units"] > 0 for c in drift["coders"] for p in c["points"])


def test_a_dead_workers_job_does_not_stop_later_snapshots(alpha):
    Job.objects.create(kind="agreement", params={"study": alpha.pk}, status=Job.Status.RUNNING,
                       heartbeat_at=timezone.now() - jobs.STALE_AFTER * 2)
    assert snapshots.waiting_job(alpha) is None
    fresh = Job.objects.create(kind="agreement", params={"study": alpha.pk},
                               status=Job.Status.RUNNING, heartbeat_at=timezone.now())
    assert snapshots.waiting_job(alpha) == fresh


def test_the_report_keeps_its_matrix_products_on_one_thread(krippendorff_study, monkeypatch):
    """OpenBLAS spread the report's small products over every core for no gain in time and
    a quarter more CPU, taken from the coders' web processes on the same machine."""
    from threadpoolctl import threadpool_info

    from coding.agreement import metrics, reliability

    seen, measure = [], metrics.measure

    def watched(*args, **kwargs):
        seen.extend(pool["num_threads"] for pool in threadpool_info()
                    if pool["user_api"] == "blas")
        return measure(*args, **kwargs)

    monkeypatch.setattr(reliability, "measure", watched)
    study_report(krippendorff_study, n_boot=50)
    assert seen and set(seen) == {1}


def test_the_report_lets_go_of_each_question_once_it_is_reported(krippendorff_study, monkeypatch):
    """At 1,000,000 items every question's arrays held to the end of the report, with the
    decisions read and a name per unit for every question, made it 1.8 GB (target 1 GB)."""
    from coding.agreement import reliability

    held, report = [], reliability._question_report

    def watched(column, group, *args):
        earlier = group.columns[:group.columns.index(column)]
        held.extend(c.key for c in earlier if c.codes is not None or c.adjudicator is not None)
        return report(column, group, *args)

    monkeypatch.setattr(reliability, "_question_report", watched)
    report_ = study_report(krippendorff_study, n_boot=50)
    assert held == [] and question(report_, "tone")["alpha"]["value"] is not None


def test_free_text_read_as_json_texts_is_counted_without_keeping_each_text():
    """On PostgreSQL answers arrive as JSON texts and a column remembers each distinct
    one; for free text that was every note of the study, held to the end of the report."""
    from coding.agreement.reliability import _Column
    from coding.models import Question

    column = _Column(Question(key="note", kind=Question.Kind.TEXT, text="Note"), texts=True)
    texts = ['"a note"', '""', None, "null", '" "', "[]", '"another"']
    column.add({"note": texts})
    plain = _Column(Question(key="note", kind=Question.Kind.TEXT, text="Note"))
    plain.add({"note": [None if t is None else json.loads(t) for t in texts]})
    assert list(column._codes[0]) == list(plain._codes[0]) == [0, -1, -1, -1, 0, 0, 0]
    assert column._by_text == {}

"""The stopping rule, the recall estimate and a replay's figures, on sequences small enough
to check by hand (issue 37)."""

import csv
import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy.stats import hypergeom

from coding.screening import stopping
from coding.screening.simulate import read_labelled, simulate


def test_the_rule_does_not_stop_while_includes_keep_coming():
    """Nor after a few hundred excludes when few were found: two missing records in a large
    pool are easily missed by chance."""
    assert not stopping.stop_test([1] * 20 + [0] * 480, 1000)["stop"]
    seq = [1, 0, 1, 1, 0, 1, 0, 1]
    assert not stopping.stop_test(seq, 1000)["stop"]


def test_the_rule_stops_after_a_long_run_of_excludes_and_its_p_is_the_hypergeometric_one():
    # 100 includes among the first 150 records of 1,000, then 400 excludes in a row.
    seq = [1] * 100 + [0] * 50 + [0] * 400
    result = stopping.stop_test(seq, 1000, target=0.95, confidence=0.95)
    assert result["stop"]
    # By hand for the window it names: the null needs ⌊100/0.95⌋ + 1 = 106 relevant
    # records, so 106 − (100 − k) of them among the records left when the window began.
    n = result["window"]
    k = sum(seq[-n:])
    left = 1000 - (len(seq) - n)
    assert result["p"] == pytest.approx(hypergeom.cdf(k, left, 106 - (100 - k), n))
    assert result["p"] < 0.05


def test_a_higher_target_needs_more_excludes_before_it_stops():
    seq = [1] * 100 + [0] * 400  # 2 left unfound under the null at 99%, 26 at 80%
    assert stopping.stop_test(seq, 1000, target=0.8)["stop"]
    assert not stopping.stop_test(seq, 1000, target=0.99)["stop"]


def test_an_empty_screening_never_stops():
    assert stopping.stop_test([], 100) == {"p": 1.0, "stop": False, "window": 0}


def test_long_sequences_test_fewer_windows_and_only_ever_a_larger_p():
    rng = np.random.default_rng(1)
    seq = (rng.random(5000) < np.linspace(0.2, 0.0, 5000)).astype(int).tolist()
    every = stopping.stop_test(seq, 20000)
    import coding.screening.stopping as module
    all_windows = module.windows
    try:
        module.windows = lambda screened, **_: np.arange(1, screened + 1)
        exact = stopping.stop_test(seq, 20000)
    finally:
        module.windows = all_windows
    assert every["p"] >= exact["p"] - 1e-12


def test_the_random_estimate_bounds_what_is_left():
    assert stopping.random_estimate(40, 900, 0, 0) is None
    none_found = stopping.random_estimate(40, 900, 100, 0, confidence=0.95)
    assert none_found["recall"] == 1.0
    upper = 1 - 0.05 ** (1 / 100)  # Clopper-Pearson upper bound for 0 of 100
    assert none_found["left_high"] == pytest.approx(900 * upper)
    assert none_found["recall_low"] == pytest.approx(40 / (40 + 900 * upper))
    some = stopping.random_estimate(40, 900, 100, 2)
    assert some["recall"] == pytest.approx(40 / (40 + 18))
    assert some["recall_low"] < some["recall"]


def test_figures_of_a_short_order_by_hand():
    # 10 records, 4 relevant: found after each record 1 1 2 2 3 3 3 3 3 4.
    seq = [1, 0, 1, 0, 1, 0, 0, 0, 0, 1]
    figures = stopping.figures(seq, total=10, relevant=4, recall=0.75, early=0.2)
    assert figures["records_to_75"] == 5 and figures["records_to_100"] == 10
    assert figures["wss_75"] == pytest.approx((10 - 5) / 10 - 0.25)
    assert figures["rrf_20"] == pytest.approx(1 / 4)
    assert stopping.since_last_include([1, 0, 0]) == 2
    assert stopping.since_last_include([0, 0]) == 2


def write_set(path, size=300, share=0.1, seed=5):
    """An invented labelled set on two topics, in ASReview's column names."""
    rng = np.random.default_rng(seed)
    relevant = "reward policy gradient rollout verifier critic advantage".split()
    other = "soil irrigation crop harvest rainfall orchard nitrogen".split()
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["record_id", "title", "abstract", "label_included"])
        for n in range(size):
            is_relevant = rng.random() < share
            words = relevant if is_relevant else other
            title = " ".join(rng.choice(words, 3))
            abstract = " ".join(rng.choice(words + ["method", "results", "we"], 30))
            out.writerow([n, title, abstract, int(is_relevant)])
    return path


def test_a_replay_reads_the_relevant_records_first_and_the_rule_stops_past_the_target(
        tmp_path):
    texts, labels, _ = read_labelled(write_set(tmp_path / "set.csv"))
    run = simulate(texts, labels, seed=0)
    relevant = int(labels.sum()) - 1  # one include is a prior
    assert run["records_to_100"] == relevant  # a clean split: every relevant record first
    assert run["wss_95"] > 0.8
    assert run["stop"] is not None and run["stop_recall"] >= 0.95
    assert run["stop"] < len(labels) - 2  # and it saved reading the rest
    assert run["recall"][-1] == 1.0


def test_the_command_prints_each_seed_and_writes_the_curve(tmp_path):
    path = write_set(tmp_path / "set.csv")
    out, err = io.StringIO(), io.StringIO()
    call_command("simulate_screening", str(path), "--seeds", "2", "--plot",
                 str(tmp_path / "curve.svg"), stdout=out, stderr=err)
    lines = out.getvalue().splitlines()
    assert [line.split(":")[0] for line in lines] == ["seed 0", "seed 1", "mean"]
    assert "records to 95% recall" in lines[0] and "stopping rule stops after" in lines[0]
    svg = (tmp_path / "curve.svg").read_text()
    assert svg.startswith("<svg") and "random order (expected)" in svg and "<polyline" in svg


def test_a_bad_label_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("title,abstract,label_included\nA title,An abstract,1\nB,C,maybe\n")
    with pytest.raises(CommandError, match=r"line 3: label_included is “maybe”, not 0 or 1"):
        call_command("simulate_screening", str(path))
    (tmp_path / "nolabel.csv").write_text("title,abstract\nA,B\n")
    with pytest.raises(CommandError, match="no column “label_included”"):
        call_command("simulate_screening", str(tmp_path / "nolabel.csv"))

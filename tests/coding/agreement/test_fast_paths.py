"""The report's faster paths give what the plain ones gave, value for value.

Each replaced a slower call whose result the report's numbers depend on (the order of
patterns decides the order of floating-point sums), so each is checked against that
call on invented data rather than through the report alone.
"""

import numpy as np
import pytest
from django.db import connection

from coding.agreement import bootstrap
from coding.agreement import coefficients as rc
from coding.agreement.reliability import _Epoch
from coding.models import Coding


def test_distinct_rows_are_numpys_unique_rows_in_its_order():
    rng = np.random.default_rng(7)
    for _ in range(200):
        size, coders = int(rng.integers(1, 31)), int(rng.integers(1, 6))
        rows = rng.integers(-1, size, size=(int(rng.integers(1, 2000)), coders))
        expected = np.unique(rows, axis=0, return_counts=True)
        found = rc._distinct_rows(rows, size)
        assert np.array_equal(found[0], expected[0]) and np.array_equal(found[1], expected[1])
    wide = rng.integers(-1, 30, size=(50, 14))  # 14 digits of base 31: past 62 bits
    assert all(np.array_equal(a, b) for a, b in zip(
        rc._distinct_rows(wide, 30), np.unique(wide, axis=0, return_counts=True)))


def test_coefficients_share_one_set_of_resamples_that_none_may_change():
    codes = np.random.default_rng(3).integers(-1, 4, size=(500, 3))
    p = rc.Patterns(codes, 4)
    first = rc._float_resamples(p, 200, 0)
    assert rc._float_resamples(p, 200, 0) is first
    assert np.array_equal(first, p.resamples(200, 0).astype(float))
    with pytest.raises(ValueError):
        first[0, 0] = 1
    identity = np.eye(4)
    fresh = rc.Patterns(codes, 4)
    for function in (rc.fleiss, rc.conger, rc.gwet, rc.brennan_prediger):
        shared = rc.with_interval(function, p, 200, 0, 0.95, identity)
        draws = function(fresh, fresh.resamples(200, 0).astype(float), identity)
        draws = draws[~np.isnan(draws)]
        tail = (1 - 0.95) / 2
        assert [shared["low"], shared["high"]] == list(np.quantile(draws, [tail, 1 - tail]))


def test_subset_intervals_count_each_subset_as_before():
    rng = np.random.default_rng(11)
    codes = rng.integers(-1, 5, size=(3000, 2))
    masks = [rng.random(3000) < share for share in (0.1, 0.3, 0.0, 1.0)]
    found = bootstrap.subset_intervals(codes, range(5), "nominal", masks, n_boot=100)
    for mask, (alpha, low, high) in zip(masks, found):
        alone = bootstrap.alpha_interval(np.where(codes[mask] >= 0, codes[mask], np.nan),
                                         "nominal", n_boot=100)
        if not mask.any():
            assert np.isnan([alpha, low, high]).all()
        else:
            assert np.allclose([low, high], alone, rtol=0, atol=1e-12)


def test_subset_intervals_by_window_number_give_what_the_windows_masks_give():
    """The drift passes each unit's window number instead of one mask per window."""
    rng = np.random.default_rng(12)
    codes = rng.integers(-1, 4, size=(5000, 2))
    window = rng.integers(-1, 7, size=5000)
    window[window == 3] = -1  # a window without units, between two with some
    masks = [window == w for w in range(7)]
    for level in ("nominal", "ordinal", "interval"):
        by_number = bootstrap.subset_intervals(codes, range(4), level, window, n_boot=100, seed=3)
        by_mask = bootstrap.subset_intervals(codes, range(4), level, masks, n_boot=100, seed=3)
        assert len(by_number) == 7
        assert np.array_equal(np.array(by_number), np.array(by_mask), equal_nan=True)
    unpaired = np.full((10, 2), -1)
    assert len(bootstrap.subset_intervals(unpaired, range(4), "nominal", np.arange(10) % 3)) == 3


def test_a_units_window_is_the_one_a_loop_over_the_windows_finds():
    from coding.agreement.metrics import _window_of

    when = np.array([-1, 0, 4, 5, 9, 10, 11, 25, 30, np.nan])
    for bounds in ([(0, 5), (5, 10), (20, 30)],  # in order, a gap between the last two
                   [(0, 10), (5, 12), (20, 30)],  # overlapping: the last window holding it
                   [(20, 30), (0, 5)]):  # out of order
        looped = np.full(len(when), -1)
        for w, (start, end) in enumerate(bounds):
            looped[(when >= start) & (when < end)] = w
        assert _window_of(when, bounds).tolist() == looped.tolist()
    assert _window_of(when, []).tolist() == [-1] * len(when)


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
def test_epoch_from_the_database_is_pythons_timestamp(alpha, people):
    from tests import factories

    for n, paper in enumerate(alpha.papers):
        factories.code(paper, people["cora"], label="analysis")
    rows = Coding.objects.values_list("submitted_at", _Epoch("submitted_at"))
    assert rows and all(when.timestamp() == epoch for when, epoch in rows)


def test_the_coincidences_by_counts_are_those_pair_by_pair():
    """Issue 42: alpha at 1M units x 3 coders counts each unit's values instead of listing
    its pairs; on random shapes (coders, categories, missing shares) both give one matrix."""
    from coding.agreement import alpha

    rng = np.random.default_rng(11)
    for _ in range(300):
        units, coders = int(rng.integers(1, 400)), int(rng.integers(1, 12))
        size = int(rng.integers(1, 9))
        codes = rng.integers(0, size, size=(units, coders))
        codes[rng.random((units, coders)) < rng.choice([0, 0.1, 0.5, 0.9])] = -1
        by_pairs = alpha._coincidences_by_pairs(codes, size)
        ways = [alpha._coincidences_by_counts(codes, size)]
        if (size + 1) ** coders <= 1_000_000:  # the patterns a bincount can hold
            ways.append(alpha._coincidences_by_patterns(codes, size))
        for by in ways:
            assert np.allclose(by, by_pairs, rtol=1e-12, atol=1e-9)
    empty = np.full((5, 3), -1)
    assert np.array_equal(alpha._coincidences_by_counts(empty, 2), np.zeros((2, 2)))
    assert np.array_equal(alpha._coincidences_by_patterns(empty, 2), np.zeros((2, 2)))


def test_alpha_counts_patterns_for_few_coders_values_for_many_and_pairs_for_wide_scales(
        monkeypatch):
    from coding.agreement import alpha

    taken = []
    for way in ("patterns", "counts", "pairs"):
        original = getattr(alpha, f"_coincidences_by_{way}")
        monkeypatch.setattr(alpha, f"_coincidences_by_{way}",
                            lambda *a, way=way, original=original:
                            taken.append(way) or original(*a))
    rng = np.random.default_rng(0)
    alpha.krippendorff_alpha(rng.integers(0, 5, size=(1000, 3)).astype(float), "nominal")
    alpha.krippendorff_alpha(rng.integers(0, 5, size=(1000, 50)).astype(float), "nominal")
    alpha.krippendorff_alpha(rng.normal(size=(1000, 3)), "interval")  # 3,000 values
    assert taken[0] == "patterns" and taken[-2:] == ["counts", "pairs"]


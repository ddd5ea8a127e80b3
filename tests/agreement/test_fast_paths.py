"""The report's faster paths give what the plain ones gave, value for value.

Each replaced a slower call whose result the report's numbers depend on (the order of
patterns decides the order of floating-point sums), so each is checked against that
call on invented data rather than through the report alone.
"""

import numpy as np
import pytest
from django.db import connection

from coding import bootstrap
from coding import reliability_coefficients as rc
from coding.models import Coding
from coding.reliability import _Epoch


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


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL only")
def test_epoch_from_the_database_is_pythons_timestamp(alpha, people):
    from tests import factories

    for n, paper in enumerate(alpha.papers):
        factories.code(paper, people["cora"], label="analysis")
    rows = Coding.objects.values_list("submitted_at", _Epoch("submitted_at"))
    assert rows and all(when.timestamp() == epoch for when, epoch in rows)

"""The agreement page between two full reports, in a real browser: alpha's estimate is
shown with the notice saying what is behind, and the intervals carry the mark."""

import os
import random

import pytest

from coding.agreement import estimates, snapshots
from tests import factories
from tests.coding.agreement.test_estimates import Fresh

pytestmark = pytest.mark.browser


def test_the_page_says_alpha_is_an_estimate_and_what_is_behind(page, log_in, live_server,
                                                              tmp_path):
    rng = random.Random(11)
    fresh = Fresh(30)
    fresh.code([(item, c) for item in fresh.items[:15] for c in fresh.coders[:2]], rng)
    snapshots.take_snapshot(fresh.study, force=True)
    fresh.code([(item, c) for item in fresh.items[15:] for c in fresh.coders[:2]], rng)
    estimates.estimate(fresh.study)
    owner = factories.user("olive")
    factories.member(fresh.study, owner, "owner")
    log_in("olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{fresh.study.slug}/agreement/")
    notice = page.locator("#agreement-estimate")
    assert notice.is_visible()
    assert "30 independent codings" in notice.inner_text()
    assert "marked †" in notice.inner_text()
    marks = page.locator("span.behind")
    assert marks.count() >= 1
    assert marks.first.get_attribute("title") == "from the last full report: behind the estimate"
    # The methods text waits for the full report, and says why.
    assert page.get_by_text("the methods text waits for the full report").count() >= 1
    shot = os.environ.get("ESTIMATE_SCREENSHOT") or str(tmp_path / "estimate.png")
    page.screenshot(path=shot, full_page=False)

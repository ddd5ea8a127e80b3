"""The agreement page's drift by calendar week in a real browser: the chart is drawn, a
flagged point is ringed and named when pointed at, and the table flags the coder."""

import os

import pytest

from coding.agreement import snapshots
from tests import factories
from tests.coding.agreement.test_reliability import three_coders_over_five_weeks

pytestmark = pytest.mark.browser


def test_weekly_drift_chart_rings_the_coder_who_moved(alpha, people, page, log_in, live_server,
                                                       tmp_path):
    three_coders_over_five_weeks(alpha, people, drifting_from_week=3)
    snapshots.take_snapshot(alpha)
    log_in("olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{alpha.slug}/agreement/")
    heading = page.get_by_role("heading", name="Drift: each coder against the others, week by week")
    heading.scroll_into_view_if_needed()
    chart = page.get_by_role("img", name="code_released: each coder's alpha against the others, "
                                        "week by week")
    assert chart.is_visible()
    rings = chart.locator("circle.flag")
    assert rings.count() == 2
    assert "cyril" in rings.first.locator("title").text_content()
    table = page.locator("table.drift").nth(1)
    assert "flagged" in table.locator("tr", has_text="cyril").first.inner_text()
    assert "flagged" not in table.locator("tr", has_text="cora").first.inner_text()
    chart.scroll_into_view_if_needed()
    shot = os.environ.get("DRIFT_SCREENSHOT") or str(tmp_path / "drift.png")
    page.screenshot(path=shot, full_page=False)
    # Issue 39, finding 5: the chart has a visible title naming its question, and the
    # figures table fits its box at this width (nothing cut off on the right).
    assert page.locator("figure.drift-chart figcaption", has_text="Code released?").count() >= 1
    fits = page.evaluate("""() => [...document.querySelectorAll('table.figures')].map(
        (t) => t.parentElement.scrollWidth <= t.parentElement.clientWidth)""")
    assert fits and all(fits)

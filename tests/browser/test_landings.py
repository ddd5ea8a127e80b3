"""An owner reads the demo's framework landings in Chromium: every name's own first
appearance, a renamed flag, a bulk sync and a comment that did not count."""

import os

import pytest

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from tests.browser.test_csp import demo, watched  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser


def shot(page, name):
    if os.environ.get("SCREENSHOT_DIR"):  # for looking at the pages by hand
        page.screenshot(path=os.path.join(os.environ["SCREENSHOT_DIR"], name), full_page=True)


def test_owner_follows_a_renamed_flag_from_the_catalog_to_its_two_names(
        demo, watched, log_in, live_server):  # noqa: F811
    page = log_in("owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/catalog/")
    tis = page.locator("tr", has_text="Truncated importance sampling")
    assert "slime" in tis.inner_text() and "as --enable-off-policy-correction" in tis.inner_text()
    assert page.get_by_text("none of").count() == 0
    shot(page, "catalog.png")

    page.get_by_role("link", name="slime", exact=True).click()
    page.wait_for_url("**/frameworks/*/")
    names = page.locator("#option-names + p + table")
    old = names.locator("tr", has_text="enable_off_policy_correction")
    new = names.locator("tr", has_text="use_tis")
    assert "--enable-off-policy-correction" in old.inner_text()
    assert "possible rename" in new.inner_text() and "--use-tis" in new.inner_text()
    assert page.get_by_text("History not scanned yet").count() == 0
    shot(page, "slime.png")

    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/catalog/")
    page.get_by_role("link", name="ROLL", exact=True).click()
    page.wait_for_url("**/frameworks/*/")
    landings = page.locator("table").first
    assert "bulk commit: 41 files" in landings.inner_text()
    assert "batch sync: authored" in landings.inner_text()
    assert "mentioned earlier in a comment" in landings.inner_text()
    shot(page, "roll.png")
    watched.check()

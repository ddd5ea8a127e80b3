"""An owner edits the method catalog in Chromium, under the Content-Security-Policy."""

import pytest

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.models import Method
from tests.browser.test_csp import demo, watched  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser


def test_owner_adds_a_method_with_option_names_from_the_catalog(demo, watched, log_in,  # noqa: F811
                                                                 live_server):
    page = log_in("owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/catalog/")
    page.get_by_role("link", name="Edit methods and frameworks").click()
    page.get_by_text("Add a method").click()
    form = page.locator("details.add-form").first
    form.get_by_label("Name").fill("Invented clipping")
    form.get_by_label("First public").fill("2025-09")
    form.get_by_label("verl").fill("invented_clip, invented_clip_v2")
    form.get_by_role("button", name="Add the method").click()
    page.wait_for_url(f"**/catalog/edit/#methods")
    assert page.locator(".flash").inner_text() == "Invented clipping added."
    row = page.locator("tr", has_text="Invented clipping")
    assert "invented_clip_v2" in row.inner_text()
    method = Method.objects.get(name="Invented clipping")
    assert sorted(method.option_names.values_list("name", flat=True)) == [
        "invented_clip", "invented_clip_v2"]
    row.get_by_role("link", name="Edit").click()
    edit = page.locator("tr.edit-row")
    edit.get_by_label("First public").fill("Sept 2025")
    edit.get_by_role("button", name="Save Invented clipping").click()
    assert "is not a date as YYYY" in page.locator("tr.edit-row").inner_text()
    page.check()

"""The item browser in Chromium (issue 39, finding 2), on a study made from nothing: the
owner filters to the items in disagreement, chooses every one with the head box, excludes
them with a reason, finds them under "excluded" and restores one from there."""

import re

import pytest
from playwright.sync_api import expect

from coding.models import AuditEntry, Item
from tests import factories

pytestmark = pytest.mark.browser


@pytest.fixture
def split(fresh):
    study, people = fresh
    for paper in study.papers[:2]:  # two items in disagreement, one left in the pool
        factories.code(paper, people["cora"], label="analysis")
        factories.code(paper, people["cyril"], label="rl_method", scope="general")
    return study, people


def test_an_owner_excludes_the_items_in_disagreement_and_restores_one(split, log_in,
                                                                      live_server):
    study, people = split
    page = log_in("olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{study.slug}/")
    page.get_by_role("link", name="Items", exact=True).click()
    page.get_by_label("State").select_option("disagreement")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("tbody tr")).to_have_count(2)  # waits for the filtered page
    page.get_by_label("Choose every item on this page").check()
    page.get_by_label("Action").select_option("exclude")
    page.get_by_label("Reason (required to exclude)").fill("Found to be duplicates")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_selector("text=2 items.")
    assert page.locator("tbody td.muted", has_text="No item matches").count() == 1
    assert Item.objects.filter(study=study, deleted_at__isnull=False).count() == 2

    page.get_by_label("State").select_option("excluded")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("tbody tr", has_text="Found to be duplicates")).to_have_count(2)
    first = study.papers[0].document.key
    page.get_by_label(f"Choose {first}").check()
    page.get_by_label("Action").select_option("restore")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_selector("text=1 items.")
    assert list(Item.objects.filter(study=study, deleted_at__isnull=False)
                .values_list("document__key", flat=True)) == [study.papers[1].document.key]
    assert AuditEntry.objects.filter(study=study, action__startswith="items.").count() == 2
    # The list still shows what is excluded; the restored item is back with the rest.
    page.get_by_label("State").select_option("")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"state=&"))
    page.get_by_role("link", name=first).click()
    expect(page.locator("h2", has_text="Changes by the owners")).to_have_count(1)
    assert page.locator("td", has_text="Found to be duplicates").count() == 1

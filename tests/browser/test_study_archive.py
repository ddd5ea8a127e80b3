"""Archiving and restoring a study in Chromium: the owner archives it from its settings, every
member sees the banner and the coder is offered no item; the owner restores it from home."""

import pytest

from coding.models import Role
from tests import factories

pytestmark = pytest.mark.browser


@pytest.fixture
def study(transactional_db):
    owner, coder = factories.user("olive"), factories.user("cora")
    study = factories.study("Screening study", owner=owner)
    factories.member(study, owner, Role.OWNER)
    factories.member(study, coder, Role.CODER)
    book = factories.codebook(study)
    factories.paper_item(study, book, 1)
    return study


def test_an_owner_archives_and_restores_a_study(study, browser, log_in, live_server):
    page = log_in("olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{study.slug}/settings/")
    page.get_by_role("button", name="Archive this study").click()
    page.wait_for_url(f"{live_server.url}/studies/{study.slug}/")
    assert page.get_by_role("status").filter(has_text="takes no new work").is_visible()

    coder = browser.new_context().new_page()
    coder.goto(f"{live_server.url}/login/")
    coder.get_by_label("Username").fill("cora")
    coder.get_by_label("Password").fill(factories.PASSWORD)
    coder.get_by_role("button", name="Log in").click()
    coder.wait_for_url(f"{live_server.url}/")
    assert coder.get_by_text("Screening study").count() == 0  # out of her list
    coder.goto(f"{live_server.url}/studies/{study.slug}/code/")
    assert coder.get_by_role("heading", name="No new items: the study is archived").is_visible()
    assert coder.locator("#start-coding").count() == 0

    page.goto(f"{live_server.url}/")
    page.locator("table.archived").get_by_role("button", name="Restore").click()
    page.wait_for_url(f"{live_server.url}/studies/{study.slug}/")
    assert page.get_by_text("Study restored").is_visible()
    coder.goto(f"{live_server.url}/studies/{study.slug}/code/")
    assert coder.locator("#start-coding").is_visible()
    coder.context.close()

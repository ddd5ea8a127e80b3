"""Accounts in Chromium (issue 39, finding 1): an owner makes a coder a one-time reset link,
the coder sets a password with it, names themself, reads the pages in Chinese and changes
the password again; the account pages pass axe in both languages."""

import pytest

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from tests.browser.conftest import sign_in
from tests.browser.test_accessibility import demo, open_as, serious_violations  # noqa: F401
from tests.browser.test_csp import watched  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser
FIRST, SECOND = "tidal-beacon-quartz-61", "amber-rook-meadow-73"


def test_a_coder_locked_out_gets_back_in_with_an_owners_link_and_sets_up_the_account(
        demo, watched, log_in, live_server, browser):  # noqa: F811
    owner = log_in("owner", DEMO_PASSWORD)
    owner.goto(f"{live_server.url}/studies/{DEMO_SLUG}/members/")
    owner.get_by_role("button", name="Make a password reset link for coder1").click()
    link = owner.locator("#reset-link").inner_text()
    assert "/reset/" in link and "shown only this once" in owner.locator(".notice-card").inner_text()
    watched.check()

    coder = browser.new_context(viewport={"width": 1100, "height": 850}).new_page()
    coder.goto(link)
    coder.locator("input[name=new_password1]").fill(FIRST)  # its label holds the rules too
    coder.get_by_label("The new password again").fill(FIRST)
    coder.get_by_role("button", name="Set the password").click()
    assert "Password set" in coder.locator("h1").inner_text()
    coder.goto(link)  # the link worked once
    assert "no longer works" in coder.locator("main").inner_text()

    sign_in(coder, live_server, "coder1", FIRST)
    coder.get_by_role("link", name="Cora First").click()  # the header names the account
    coder.get_by_label("Display name").fill("Cora the Coder")
    coder.get_by_label("E-mail").fill("cora@example.org")
    coder.get_by_label("Language").select_option("zh-hans")
    coder.get_by_role("button", name="Save").click()
    assert coder.locator("h1").inner_text() == "您的账户"  # the pages follow the choice
    coder.get_by_role("link", name="修改密码").click()
    coder.get_by_label("当前密码").fill(FIRST)
    coder.locator("input[name=new_password1]").fill(SECOND)
    coder.get_by_label("再次输入新密码").fill(SECOND)
    coder.get_by_role("button", name="修改密码").click()
    assert coder.locator("h1").inner_text() == "密码已修改"

    owner.goto(f"{live_server.url}/studies/{DEMO_SLUG}/members/")
    assert "Cora the Coder (coder1)" in owner.locator("table.members").inner_text()
    fresh = browser.new_context().new_page()
    sign_in(fresh, live_server, "coder1", SECOND)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_account_pages_pass_axe(demo, open_as, live_server, language):  # noqa: F811
    page = open_as("coder1", language)
    for name, path in [("account", "/account/"), ("password", "/account/password/")]:
        page.goto(f"{live_server.url}{path}")
        assert serious_violations(page, f"{name}-{language}") == [], name
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/password_reset/")
    assert serious_violations(page, f"password-reset-{language}") == []

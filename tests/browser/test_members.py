"""An owner invites a coder in Chromium; the invitee joins through the link and codes."""

import pytest

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.models import Invite, Role, Study
from tests.browser.test_csp import demo, watched  # noqa: F401  (fixtures)

pytestmark = pytest.mark.browser
PASSWORD = "quiet-harbour-lantern-42"


def test_an_invited_person_joins_with_the_link_and_codes(demo, watched, log_in,  # noqa: F811
                                                         live_server, browser):
    page = log_in("owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/")
    page.get_by_role("link", name="Manage members and invites").click()
    invite_form = page.locator("form", has_text="Make invite link")
    invite_form.get_by_label("Role").select_option("coder")
    invite_form.get_by_label("Who it is for").fill("Nadia Example")
    invite_form.get_by_role("button", name="Make invite link").click()
    link = page.locator("#invite-link").inner_text()
    assert "/invite/" in link and link.split("/invite/")[1].strip("/") not in str(
        list(Invite.objects.values()))
    page.check()

    invitee = browser.new_context(viewport={"width": 1000, "height": 800}).new_page()
    invitee.goto(link)
    assert "Join RL methods" in invitee.locator("h1").inner_text()
    invitee.locator("input[name=username]").fill("nadia")
    invitee.locator("input[name=password1]").fill(PASSWORD)
    invitee.get_by_label("Password again").fill(PASSWORD)
    invitee.get_by_role("button", name="Create account and join").click()
    invitee.wait_for_url(f"{live_server.url}/studies/{DEMO_SLUG}/")
    assert "you are coder here" in invitee.locator(".flash").inner_text()
    invitee.get_by_role("link", name="Code next item").click()
    assert invitee.url.startswith(f"{live_server.url}/studies/{DEMO_SLUG}/code/")
    invitee.goto(link)  # a second use of the link
    assert "no longer valid" in invitee.locator("h1").inner_text()

    study = Study.objects.get(slug=DEMO_SLUG)
    assert Role.CODER in study.roles_of(study.memberships.get(user__username="nadia").user)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/members/")
    assert page.locator("#invite-link").count() == 0  # shown once, never again
    assert "joined as coder through an invite" in page.locator("table", has_text="When").inner_text()
    page.get_by_role("button", name="Remove nadia as coder").click()
    assert "nadia is no longer coder" in page.locator(".flash").inner_text()
    page.check()

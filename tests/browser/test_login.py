"""A demo coder logs in with a real browser and finds the demo study."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from coding.demo.study import DEMO_PASSWORD

pytestmark = pytest.mark.browser


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)


def test_demo_coder_logs_in_and_opens_the_demo_study(demo, log_in, live_server):
    page = log_in("coder1", DEMO_PASSWORD)
    assert page.get_by_role("heading", name="Your studies").is_visible()
    page.get_by_role("link", name="RL methods in open-source frameworks (demo)").click()
    assert page.get_by_role("heading", name="Codebooks").is_visible()
    page.get_by_role("link", name="Paper codebook").click()
    # expect() waits for the page the click opens; is_visible() looked at once, at once.
    expect(page.get_by_text("What does the paper mainly contribute?")).to_be_visible()


def test_wrong_password_is_refused_with_a_message(demo, page, live_server):
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("coder1")
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Log in").click()
    assert page.get_by_text("Please enter a correct username and password").is_visible()
    assert page.url.startswith(f"{live_server.url}/login/")


def test_coder_logs_out(demo, log_in, live_server):
    page = log_in("coder2", DEMO_PASSWORD)
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(f"{live_server.url}/login/")
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url

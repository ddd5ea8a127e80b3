"""A real Chromium (Debian's package) driven by Playwright against the live test server."""

import os
import shutil

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls the
# tests make around it are ordinary synchronous ones.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


# Added to a page before it loads: it gathers CSP violations and script errors in
# window.__problems, which a test reads at the end (it should be empty).
WATCH = """
window.__problems = [];
document.addEventListener("securitypolicyviolation", (e) => window.__problems.push(e.violatedDirective));
window.addEventListener("error", (e) => window.__problems.push(String(e.message)));
"""


def sign_in(page, live_server, username, password):
    """Log in on the login page; the page ends on the home page."""
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    return page


@pytest.fixture(scope="session")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"browser tests need Chromium at {CHROMIUM}: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def log_in(page, live_server):
    def log_in_as(username, password):
        return sign_in(page, live_server, username, password)

    return log_in_as


@pytest.fixture
def fresh(transactional_db):
    """A study made from nothing, as a team starts one (the alpha study: its owner, two
    coders, an adjudicator and a viewer, a small codebook with a condition, a number with a
    special answer and free text, three papers), committed so the live server sees it:
    (study, people)."""
    from django.db import transaction

    from tests.conftest import make_alpha, make_people

    with transaction.atomic():
        people = make_people()
        study = make_alpha(people)
    return study, people

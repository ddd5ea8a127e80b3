"""The owner's study, members, settings, import and export pages, the jobs and tokens pages,
and the login, invitation and not-found pages, in English and Simplified Chinese in Chromium:
axe-core finds no serious or critical violation, the page reads in the chosen language, and a
full-page screenshot of each is kept (a11y-setup-<page>-<language>.png)."""

import re

import pytest

from coding.demo.study import DEMO_SLUG
from coding.models import Role, Study
from coding.studies.members import create_invite

from .test_accessibility import LANGUAGES, demo, open_as, serious_violations  # noqa: F401

pytestmark = pytest.mark.browser

OWNER_PAGES = [("home", "/"), ("new", "/studies/new/"), ("study", f"/studies/{DEMO_SLUG}/"),
               ("settings", f"/studies/{DEMO_SLUG}/settings/"),
               ("members", f"/studies/{DEMO_SLUG}/members/"),
               ("import", f"/studies/{DEMO_SLUG}/import/"),
               ("export", f"/studies/{DEMO_SLUG}/export/"),
               ("jobs", "/jobs/"), ("tokens", "/account/tokens/"),
               ("not-found", "/studies/no-such-study/")]
HAN = re.compile(r"[\u4e00-\u9fff]")


def reads_in(page, language):
    """The page is marked as in the chosen language and its title reads in it (a heading
    can be the study's own name, in whatever language the study wrote it)."""
    return (page.locator("html").get_attribute("lang") == language
            and bool(HAN.search(page.title())) == (language == "zh-hans"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_owners_setup_pages_pass_axe_in_the_readers_language(demo, open_as,  # noqa: F811
                                                                 live_server, language):
    page = open_as("owner", language)
    found = {}
    for name, path in OWNER_PAGES:
        page.goto(f"{live_server.url}{path}")
        found[name] = serious_violations(page, f"setup-{name}-{language}")
        assert reads_in(page, language), name
    assert found == {name: [] for name, _path in OWNER_PAGES}


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_login_and_invitation_pages_follow_the_browsers_language(demo, browser,  # noqa: F811
                                                                     live_server, language):
    study = Study.objects.get(slug=DEMO_SLUG)
    _invite, token = create_invite(study, Role.CODER, None, note="Nadia")
    context = browser.new_context(viewport={"width": 1366, "height": 900}, bypass_csp=True,
                                  locale="zh-CN" if language == "zh-hans" else "en-US")
    page = context.new_page()
    try:
        for name, path in [("login", "/login/"), ("invite", f"/invite/{token}/")]:
            page.goto(f"{live_server.url}{path}")
            assert serious_violations(page, f"setup-{name}-{language}") == [], name
            assert reads_in(page, language), name
    finally:
        context.close()

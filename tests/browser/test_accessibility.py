"""axe-core (the npm package, `make axe`) checks the pages coders, adjudicators and owners
live in, in English and in Simplified Chinese: no serious or critical violation.
Screenshots of each page in each language are kept as test artifacts."""

import os
from pathlib import Path

import pytest
from django.core.management import call_command

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.models import Assignment
from coding.studies import presets_zh

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "tests" / "browser" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", ROOT / "var" / "test-artifacts"))
LANGUAGES = ["en", "zh-hans"]


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)


@pytest.fixture
def open_as(browser, live_server):
    """A fresh browser context for one person in one language (the switcher's cookie),
    with the page's CSP bypassed so axe's script can be injected."""
    contexts = []

    def open_as_(username, language):
        context = browser.new_context(viewport={"width": 1366, "height": 900}, bypass_csp=True)
        contexts.append(context)
        host = live_server.url.split("//")[1].split(":")[0]
        context.add_cookies([{"name": "django_language", "value": language, "domain": host,
                              "path": "/"}])
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(f"{live_server.url}/login/")
        page.locator("input[name=username]").fill(username)
        page.locator("input[name=password]").fill(DEMO_PASSWORD)
        page.locator("form:has(input[name=username]) button[type=submit]").click()
        page.wait_for_url(f"{live_server.url}/")
        return page

    yield open_as_
    for context in contexts:
        context.close()


def serious_violations(page, name):
    """Run axe on the settled page; save a screenshot; the serious and critical findings."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}: run `make axe`")
    page.wait_for_load_state("load")
    page.locator("main").wait_for()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"a11y-{name}.png"), full_page=True)
    page.add_script_tag(path=str(AXE))
    page.wait_for_function("() => window.axe !== undefined")
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['help']} at "
            f"{[n['target'] for n in v['nodes']][:3]}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_coding_page_passes_axe(demo, open_as, live_server, language):
    page = open_as("coder1", language)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/code/")
    page.locator("#start-coding, #coding-form").first.wait_for()
    if page.locator("#start-coding").count():
        page.locator("#start-coding").click()
    page.locator("#coding-form .q.focus").wait_for()
    assert serious_violations(page, f"coding-{language}") == []
    # A refused submit: the summary at the top, focus on the first question with a problem.
    page.locator("#submit-button").click()
    page.locator("#error-summary").wait_for()
    assert serious_violations(page, f"coding-errors-{language}") == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_adjudicators_pages_pass_axe(demo, open_as, live_server, language):
    page = open_as("adjudicator", language)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/review/")
    assert serious_violations(page, f"review-queue-{language}") == []
    page.locator("table a[href*='/review/']").first.click()
    page.locator("#review-form").wait_for()
    assert serious_violations(page, f"review-item-{language}") == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_owners_pages_pass_axe(demo, open_as, live_server, language):
    page = open_as("owner", language)
    for name, path in [("study", ""), ("settings", "settings/"), ("import", "import/"),
                       ("items", "items/"), ("item", "items/1/"), ("codings", "codings/"),
                       ("queue", "queue/")]:
        page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/{path}")
        assert serious_violations(page, f"owner-{name}-{language}") == [], name


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_agreement_page_with_its_methods_text_in_both_languages_passes_axe(
        demo, open_as, live_server, language):
    page = open_as("owner", language)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/agreement/")
    texts = page.locator("#paper textarea.paper")
    # The reader's language first, the other beside it; each with its own copy button.
    assert [texts.nth(i).get_attribute("lang") for i in range(texts.count())] == (
        LANGUAGES if language == "en" else LANGUAGES[::-1])
    assert texts.nth(1).input_value().startswith(("Reliability", "信度"))
    assert page.locator("#paper button.copy-text:visible").count() == 2
    assert serious_violations(page, f"owner-agreement-{language}") == []


def test_a_chinese_reader_sees_chinese_chrome_and_the_codebook_in_chinese(demo, open_as,
                                                                          live_server):
    page = open_as("coder1", "zh-hans")
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/code/")
    page.locator("#start-coding, #coding-form").first.wait_for()
    if page.locator("#start-coding").count():
        page.locator("#start-coding").click()
    page.locator("#coding-form .q.focus").wait_for()
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert "提交并继续" in page.locator("#submit-button").inner_text()
    # The demo codebooks carry Chinese texts (coding.studies.presets_zh), shown in place of the
    # study's own words, which are one click away (tests/browser/test_codebook_languages.py);
    # whichever item the queue gave: a paper or a thread, each with its own codebook.
    assignment = Assignment.objects.select_related("item__codebook").get(
        pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))
    first_question = assignment.item.codebook.current_version().questions.first()
    chinese = {"paper": presets_zh.PAPER, "thread": presets_zh.THREAD}[
        assignment.item.codebook.applies_to]["questions"][first_question.key]["text"]
    assert chinese in page.locator("#coding-form").inner_text()
    page.screenshot(path=str(ARTIFACTS / "coding-page-zh-hans.png"))
    # The switcher takes the reader back to English and remembers it.
    page.get_by_role("button", name="English").click()
    page.locator("#submit-button").wait_for()
    assert "Submit and next" in page.locator("#submit-button").inner_text()
    page.reload()
    assert page.locator("html").get_attribute("lang") == "en"

"""The review page and the codebook page in both languages (issue 20): a Chinese reader
meets the demo codebook in Chinese with the original one click away, the choice is kept
for the next page (per person, in the database), and an English reader sees the codebook
as written without the switch. On the coding page a quote's tooltip names the question in
both languages on lines of their own. Screenshots of each page in each language are kept
as test artifacts; axe-core finds no serious or critical violation on any."""

import pytest
from django.contrib.auth.models import User

from coding.accounts.languages import remember_language
from coding.demo.study import DEMO_SLUG
from coding.models import Codebook, LanguagePreference
from coding.studies import presets_zh
from tests.browser.test_accessibility import demo, open_as, serious_violations  # noqa: F401
from tests.browser.test_codebook_languages import start_coding

pytestmark = pytest.mark.browser
ZH = {"paper": presets_zh.PAPER, "thread": presets_zh.THREAD}


def open_first_review(page, live_server):
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/review/")
    page.locator("table a[href*='/review/']").first.click()
    page.locator("#review-form").wait_for()
    legend = page.locator("#review-form fieldset.q legend").first
    key = page.locator("#review-form fieldset.q").first.get_attribute("data-key")
    return legend, key


def texts_of(key):
    """(Chinese, as written) of the demo question `key`, whichever codebook has it."""
    for codebook in Codebook.objects.filter(study__slug=DEMO_SLUG):
        question = codebook.current_version().questions.filter(key=key).first()
        if question is not None:
            return ZH[codebook.applies_to]["questions"][key]["text"], question.text
    raise AssertionError(key)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_review_page_reads_in_the_reviewer_s_language(demo, open_as, live_server, language):
    page = open_as("adjudicator", language)
    legend, key = open_first_review(page, live_server)
    chinese, written = texts_of(key)
    assert serious_violations(page, f"review-codebook-{language}") == []
    if language == "en":
        assert written in legend.inner_text() and chinese not in legend.inner_text()
        assert page.locator("#show-original").count() == 0
        return
    assert chinese in legend.inner_text() and written not in legend.inner_text()
    page.locator("#show-original").check()
    assert written in legend.inner_text() and chinese not in legend.inner_text()
    assert serious_violations(page, "review-codebook-as-written-zh-hans") == []
    # Kept for the next page: the choice is the person's, stored as it changes.
    page.wait_for_function("() => true")
    adjudicator = User.objects.get(username="adjudicator")
    for _ in range(50):
        found = LanguagePreference.objects.filter(user=adjudicator, show_original=True).exists()
        if found:
            break
        page.wait_for_timeout(100)
    assert found
    page.reload()
    page.locator("#review-form").wait_for()
    assert page.locator("#show-original").is_checked()
    assert written in page.locator("#review-form fieldset.q legend").first.inner_text()
    page.locator("#show-original").uncheck()
    page.wait_for_timeout(300)
    page.reload()
    assert not page.locator("#show-original").is_checked()
    assert chinese in page.locator("#review-form fieldset.q legend").first.inner_text()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_codebook_page_reads_in_the_reader_s_language(demo, open_as, live_server, language):
    page = open_as("owner", language)
    codebook = Codebook.objects.filter(study__slug=DEMO_SLUG, applies_to="paper").get()
    first = codebook.current_version().questions.first()
    chinese = ZH["paper"]["questions"][first.key]["text"]
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/codebooks/{codebook.pk}/")
    heading = page.locator(f"#q-{first.key} h3")
    assert serious_violations(page, f"codebook-detail-{language}") == []
    if language == "en":
        assert first.text in heading.inner_text() and page.locator("#show-original").count() == 0
        return
    assert chinese in heading.inner_text() and first.text not in heading.inner_text()
    option = first.options.first()
    assert ZH["paper"]["questions"][first.key]["options"][option.value]["label"] in \
        page.locator(f"#q-{first.key} dl").inner_text()
    page.locator("#show-original").check()
    assert first.text in heading.inner_text() and chinese not in heading.inner_text()
    assert option.label in page.locator(f"#q-{first.key} dl").inner_text()
    assert serious_violations(page, "codebook-detail-as-written-zh-hans") == []


def test_a_quote_s_tooltip_names_the_question_in_both_languages_apart(demo, open_as, live_server):
    remember_language(User.objects.get(username="coder1"), "zh-hans")
    page = open_as("coder1", "zh-hans")
    assignment = start_coding(page, live_server)
    first = assignment.item.codebook.current_version().questions.first()
    chinese = ZH[assignment.item.codebook.applies_to]["questions"][first.key]["text"]
    page.evaluate("""() => {
        const field = document.querySelector('#item [data-field="title"]');
        const walker = document.createTreeWalker(field, NodeFilter.SHOW_TEXT);
        const text = walker.nextNode();
        const range = document.createRange();
        range.setStart(text, 0);
        range.setEnd(text, Math.min(12, text.data.length));
        getSelection().removeAllRanges();
        getSelection().addRange(range);
    }""")
    page.locator(f"#question-{first.key} .quote-button").click()
    mark = page.locator("#item mark.quote").first
    mark.wait_for()
    assert mark.get_attribute("title") == f"1. {chinese}\n{first.text}"
    page.locator("#show-original").check()
    assert page.locator("#item mark.quote").first.get_attribute("title") == f"1. {first.text}\n{chinese}"
    assert serious_violations(page, "coding-quote-zh-hans") == []

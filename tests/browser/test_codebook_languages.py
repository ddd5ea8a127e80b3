"""A coder who reads Chinese meets the demo codebook in Chinese, the original one click away,
and what they submit is stored as the codebook's keys. Screenshots in both languages are
kept as test artifacts; axe-core finds no serious or critical violation on either."""

import pytest
from django.contrib.auth.models import User

from coding.accounts.languages import remember_language
from coding.demo.study import DEMO_SLUG
from coding.models import Assignment, Coding
from coding.studies import presets_zh
from tests.browser.test_accessibility import (  # noqa: F401
    ARTIFACTS, demo, open_as, serious_violations,
)

pytestmark = pytest.mark.browser
ZH = {"paper": presets_zh.PAPER, "thread": presets_zh.THREAD}


def start_coding(page, live_server):
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/code/")
    page.locator("#start-coding, #coding-form").first.wait_for()
    if page.locator("#start-coding").count():
        page.locator("#start-coding").click()
    page.locator("#coding-form .q.focus").wait_for()
    return Assignment.objects.select_related("item__codebook").get(
        pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))


def answer_each_shown_question_with_its_last_choice(page):
    """The last choice of each question shown: "out of scope" or "other", "not reported",
    "no", "none"; a conditional question stays hidden behind such an answer."""
    for number in range(page.locator("#coding-form fieldset.q").count()):
        question = page.locator("#coding-form fieldset.q").nth(number)
        if question.is_visible() and question.locator("label.opt").count():
            question.locator("label.opt").last.click()


def test_a_chinese_reader_codes_in_chinese_and_the_keys_are_stored(demo, open_as, live_server):
    remember_language(User.objects.get(username="coder1"), "zh-hans")
    page = open_as("coder1", "en")  # the browser says English; the stored choice wins
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assignment = start_coding(page, live_server)
    version = assignment.item.codebook.current_version()
    first = version.questions.first()
    chinese = ZH[assignment.item.codebook.applies_to]["questions"][first.key]["text"]
    legend = page.locator(f"#question-{first.key} legend")
    assert chinese in legend.inner_text() and first.text not in legend.inner_text()
    assert serious_violations(page, "codebook-translated-zh-hans") == []

    # One click shows the codebook as written, in place; another brings the Chinese back.
    page.locator("#show-original").check()
    assert first.text in legend.inner_text() and chinese not in legend.inner_text()
    assert serious_violations(page, "codebook-as-written-zh-hans") == []
    page.locator("#show-original").uncheck()
    assert chinese in legend.inner_text()

    last_option = first.options.last()
    assert (ZH[assignment.item.codebook.applies_to]["questions"][first.key]["options"]
            [last_option.value]["label"] in page.locator(f"#question-{first.key}").inner_text())
    answer_each_shown_question_with_its_last_choice(page)
    page.locator("#submit-button").click()
    page.wait_for_url(lambda url: f"/code/{assignment.pk}/" not in url)
    coding = Coding.objects.get(assignment=assignment)
    assert coding.values[first.key] == last_option.value  # the key, never the Chinese label
    assert "不在范围内" not in str(coding.values) and "其他" not in str(coding.values)


def test_an_english_reader_sees_the_same_codebook_as_written(demo, open_as, live_server):
    page = open_as("coder2", "en")
    assignment = start_coding(page, live_server)
    first = assignment.item.codebook.current_version().questions.first()
    assert first.text in page.locator(f"#question-{first.key} legend").inner_text()
    assert page.locator("#show-original").count() == 0
    assert serious_violations(page, "codebook-as-written-en") == []

"""A coder quotes evidence and reaches special answers from the keyboard, in a real browser."""

import os
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db.models import F

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.labeling import queue
from coding.models import Item
from ingest.models import Document

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)


def open_coding_page(log_in, live_server):
    page = log_in("coder1", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/code/")
    page.locator("#start-coding, #coding-form").first.wait_for()
    if page.locator("#start-coding").count():
        page.locator("#start-coding").click()
    page.locator("#coding-form .q.focus").wait_for()
    return page


@pytest.fixture
def coding_page(demo, log_in, live_server):
    return open_coding_page(log_in, live_server)


@pytest.fixture
def paper_page(demo, log_in, live_server):
    """The coding page on a paper: only the paper codebook has a number question, and the
    queue's order is random per load, so the coder is handed an open paper first."""
    coder = get_user_model().objects.get(username="coder1")
    paper = (Item.objects.filter(study__slug=DEMO_SLUG, round=Item.Round.MAIN,
                                 document__kind=Document.Kind.PAPER, taken__lt=F("target"))
             .exclude(assignments__coder=coder).order_by("pk").first())
    assert paper is not None, "the demo has no open paper left for coder1"
    queue.assign(paper, coder)
    return open_coding_page(log_in, live_server)


def select_in_title(page, start, end):
    """Select characters start..end of the title, cutting words as a hasty mouse does."""
    page.evaluate("""([start, end]) => {
        const text = document.querySelector('#item [data-field="title"]').firstChild;
        const range = document.createRange();
        range.setStart(text, start);
        range.setEnd(text, end);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
    }""", [start, end])


def test_a_quote_snaps_to_whole_words_and_is_marked_in_the_text(coding_page):
    page = coding_page
    title = page.locator('#item [data-field="title"]').inner_text()
    # Two plain words with spaces (or the ends) around them: a hyphen joins words.
    words = re.search(r"(?:^|(?<=\s))([A-Za-z]{3,}) ([A-Za-z]{3,})(?=\s|$)", title)
    # From the second letter of one word to the middle of the next.
    select_in_title(page, words.start(1) + 1, words.start(2) + len(words[2]) // 2)
    page.keyboard.press("e")
    quote = f"{words[1]} {words[2]}"
    assert page.locator("ul.quotes li").first.inner_text().startswith(f"“{quote}”")
    mark = page.locator("#item mark.quote")
    assert mark.count() == 1 and mark.inner_text() == quote
    # The mark's colour is its question's: the same class as the swatch beside the quote.
    swatch = page.locator("ul.quotes li .swatch").first.get_attribute("class").split()[-1]
    assert swatch in mark.get_attribute("class").split()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "coding-quote-marked.png"))
    # Removing the quote removes its mark.
    page.locator("ul.quotes li button", has_text="remove").click()
    assert page.locator("#item mark.quote").count() == 0


def test_alt_digit_in_a_number_box_chooses_the_special_answer(paper_page):
    page = paper_page
    question = page.locator(".q[data-kind=number]").first
    box = question.locator("input.number")
    box.click()
    box.type("12")
    page.keyboard.press("Alt+1")
    assert question.locator("input[type=radio]").first.is_checked()
    assert box.input_value() == ""
    # A plain digit still types into the box.
    box.click()
    page.keyboard.press("4")
    assert box.input_value() == "4"


def test_the_import_form_shows_only_the_chosen_formats_fields(demo, log_in, live_server):
    page = log_in("owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/import/")
    page.locator("select[name=format]").select_option("github")
    assert page.locator("input[name=repository]").is_visible()
    assert not page.locator("textarea[name=mapping]").is_visible()
    assert not page.locator("input[name=file]").is_visible()
    page.locator("select[name=format]").select_option("csv_file")
    assert page.locator("textarea[name=mapping]").is_visible()
    assert page.locator("input[name=file]").is_visible()
    assert not page.locator("input[name=repository]").is_visible()
    page.screenshot(path=str(ARTIFACTS / "import-csv.png"), full_page=True)

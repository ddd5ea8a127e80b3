"""A coder codes demo items in a real browser with the keyboard alone."""

import os
from pathlib import Path

import pytest
from django.core.management import call_command

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.models import Assignment, Coding

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)


def answer_every_question(page):
    """Walk the questions with Tab and answer each from the keyboard, as a coder would."""
    answered = []
    for _ in range(40):
        question = page.locator(".q.focus")
        key, kind = question.get_attribute("data-key"), question.get_attribute("data-kind")
        if key in answered:
            break
        answered.append(key)
        if kind in ("single", "yes_no"):
            page.keyboard.press("1")  # chooses and moves on to the next question
            continue
        if kind == "multiple":
            page.keyboard.press("1")
        elif kind == "number":
            page.keyboard.type("7")
        else:
            page.keyboard.type("GRPO")
        page.keyboard.press("Tab")
    return answered


def select_title(page):
    """Select the item's title text, as a coder would with the mouse or Shift+arrows."""
    page.evaluate("""() => {
        const title = document.querySelector('#item [data-field="title"]');
        const range = document.createRange();
        range.selectNodeContents(title);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
    }""")


def start_coding(page, live_server):
    """The coding start page: Enter on its focused button reserves and opens the next item."""
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/code/")
    if page.locator("#start-coding").count():
        start = page.url
        page.keyboard.press("Enter")
        page.wait_for_url(lambda url: url != start)


def test_coder_codes_three_items_with_the_keyboard_and_skips_one(demo, log_in, live_server):
    before = Coding.objects.filter(assignment__coder__username="coder1").count()
    page = log_in("coder1", DEMO_PASSWORD)
    start_coding(page, live_server)

    # Item 1: answer the first question, reload mid-item: the draft is still there.
    page.keyboard.press("1")
    page.wait_for_selector("#draft-status:has-text('Draft saved')")
    first_url = page.url
    page.reload()
    assert page.locator(".q").first.locator("input").first.is_checked()
    answer_every_question(page)
    select_title(page)
    page.keyboard.press("e")
    assert page.locator("ul.quotes li").count() == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "coding-page.png"), full_page=True)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first_url)

    # Item 2: coded; item 3: skipped with a reason; item 4: coded.
    second_url = page.url
    answer_every_question(page)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != second_url)
    third_url = page.url
    page.keyboard.press("s")
    page.keyboard.type("Not about RL training")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != third_url)
    fourth_url = page.url
    answer_every_question(page)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != fourth_url)

    mine = Coding.objects.filter(assignment__coder__username="coder1")
    assert mine.count() == before + 3
    new = mine.order_by("-submitted_at")[:3]
    assert all(c.revision == 1 and c.phase == "independent" for c in new)
    quoted = [c for c in new if c.evidence]
    assert len(quoted) == 1
    quote = quoted[0].evidence[0]
    title = quoted[0].assignment.item.snapshot.content["title"]
    assert title[quote["start"]:quote["end"]] == quote["quote"] == title
    skipped = Assignment.objects.get(coder__username="coder1", status="skipped")
    assert skipped.skip_reason == "Not about RL training"
    assert (ARTIFACTS / "coding-page.png").stat().st_size > 10_000


def test_question_mark_shows_the_keys_and_conditions_follow_answers(demo, log_in, live_server):
    page = log_in("coder2", DEMO_PASSWORD)
    start_coding(page, live_server)
    page.keyboard.press("?")
    assert page.locator("dialog#keys").is_visible()
    page.keyboard.press("Escape")
    conditional = page.locator(".q[data-show-if]")
    assert conditional.count() >= 1
    assert all(not conditional.nth(i).is_visible() for i in range(conditional.count()))


def test_a_draft_kept_in_the_browser_reaches_the_server_after_a_lost_connection(
        demo, log_in, live_server):
    """Work typed while offline lives in localStorage; on the next load it is restored
    and sent, without the coder touching anything."""
    page = log_in("coder3", DEMO_PASSWORD)
    start_coding(page, live_server)
    held = Assignment.objects.get(coder__username="coder3", status="active")
    with page.expect_response(lambda response: response.url.endswith("/draft/")):
        page.locator("[name=notes]").fill("typed while the network was down")
        page.locator("[name=notes]").dispatch_event("input")
    # As if that save had never reached the server: only this browser has the text.
    Assignment.objects.filter(pk=held.pk).update(draft=None, draft_saved_at=None)
    with page.expect_response(lambda response: response.url.endswith("/draft/")):
        page.reload()
    held.refresh_from_db()
    assert held.draft and held.draft["notes"] == "typed while the network was down"

"""The keys do what the ? dialog says, followed literally, key by key, on a study made from
nothing (issue 39, finding 3): the answers stored are the ones the keys chose, a number box
holding a draft's value is replaced by the first key typed, errors from a refused submit go
as their questions are answered, and on the review page "another value" and its rationale
are reached from the keyboard."""

import pytest

from coding.labeling import queue
from coding.models import Assignment, Coding, Decision
from tests import factories

pytestmark = pytest.mark.browser


def keys(page, *presses):
    for key in presses:
        page.keyboard.press(key)


def stored(page, rows):
    """Wait (in the browser's time) until the submission's rows are in the database."""
    for _ in range(100):
        if rows.exists():
            return rows.get()
        page.wait_for_timeout(100)
    return rows.get()


def focused_question(page):
    return page.evaluate("document.activeElement.closest('.q')?.dataset.key")


def test_the_coding_keys_do_what_the_help_says(fresh, log_in, live_server):
    study, people = fresh
    first, second = study.papers[:2]
    page = log_in("cora", factories.PASSWORD)
    queue.assign(first, people["cora"])
    page.goto(f"{live_server.url}/studies/{study.slug}/code/")
    page.locator("#coding-form .q.focus").wait_for()
    help_text = page.locator("#keys").inner_text()
    assert "moves to the next question by itself" in help_text
    assert "the first key replaces what the box held" in help_text

    # A refused submit marks each unanswered question; answering one clears its mark.
    keys(page, "Enter")
    page.locator("#error-summary").wait_for()
    assert page.locator("#question-label .error:visible").count() == 1
    keys(page, "2")  # label: analysis, and on to the number (scope is not shown)
    assert page.locator("#question-label .error:visible").count() == 0
    assert page.locator("#question-label.has-error").count() == 0
    assert focused_question(page) == "size_b"
    refused_at = page.url
    keys(page, "7", "Tab", "2", "Tab", "n", "Escape", "Enter")
    coding = stored(page, Coding.objects.filter(assignment__item=first,
                                                assignment__coder=people["cora"]))
    page.wait_for_url(lambda url: url != refused_at)  # the next page, before going elsewhere
    page.wait_for_load_state()
    assert coding.values == {"label": "analysis", "size_b": 7, "failures": ["none"],
                             "code_released": "no"}

    # The next item, with a draft whose number the first key replaces.
    assignment = Assignment.objects.get(item=second, coder=people["cora"]) \
        if Assignment.objects.filter(item=second, coder=people["cora"]).exists() \
        else None
    if assignment is None:  # the queue gave another item: code this one by its own page
        Assignment.objects.filter(coder=people["cora"], status="active").update(status="released")
        assignment = queue.assign(second, people["cora"])
    assignment.draft = {"values": {"size_b": "12"}}
    assignment.save(update_fields=["draft"])
    page.goto(f"{live_server.url}/studies/{study.slug}/code/{assignment.pk}/")
    page.locator("#coding-form .q.focus").wait_for()
    # Literally: a digit chooses and moves on; the two single choices, then the box.
    keys(page, "1")  # label: RL method → scope is shown and in focus
    assert focused_question(page) == "scope"
    keys(page, "2")  # scope: embedded → the number box, holding the draft's 12
    assert focused_question(page) == "size_b"
    keys(page, "1")
    assert page.locator("#question-size_b input.number").input_value() == "1"
    keys(page, "Tab", "1", "Tab", "y", "Escape", "Enter")
    coding = stored(page, Coding.objects.filter(assignment=assignment))
    assert coding.values == {"label": "rl_method", "scope": "embedded", "size_b": 1,
                             "failures": ["entropy_collapse"], "code_released": "yes"}


def test_another_value_and_its_rationale_are_reached_from_the_keyboard(fresh, log_in,
                                                                        live_server):
    study, people = fresh
    item = study.papers[0]
    factories.code(item, people["cora"], size_b=7)
    factories.code(item, people["cyril"], size_b=13)
    page = log_in("ada", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{study.slug}/review/{item.pk}/")
    page.locator("#review-form .q.focus").wait_for()
    assert focused_question(page) == "size_b"
    keys(page, "3")  # after the two coders' values: another value, and into its box
    assert page.evaluate("document.activeElement.classList.contains('number')")
    keys(page, "2", "0", "Tab")
    assert page.evaluate("document.activeElement.name") == "why-size_b"
    page.keyboard.type("Both misread the table")
    keys(page, "Escape", "Enter")
    decision = stored(page, Decision.objects.filter(item=item, question_key="size_b"))
    assert (decision.value, decision.rationale) == (20, "Both misread the table")

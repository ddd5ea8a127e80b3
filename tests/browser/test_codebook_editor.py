"""An owner builds a codebook in a real browser, by pointer and by keyboard, and publishes it."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from coding.models import Codebook, Role
from tests import factories
from tests.browser.conftest import WATCH

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))


@pytest.fixture
def owner(transactional_db):
    olive = factories.user("olive")
    study = factories.study("Screening study", owner=olive)
    factories.member(study, olive, Role.OWNER)
    return study


def settle(page):
    page.wait_for_load_state("networkidle")


def card_keys(page):
    return page.locator("#qcards .qcard input[name$='-key']").evaluate_all(
        "inputs => inputs.map(i => i.value)")


def test_owner_builds_a_conditional_codebook_and_publishes_it(owner, page, log_in, live_server):
    page.add_init_script(WATCH)
    log_in("olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{owner.slug}/codebooks/")
    page.get_by_label("Name").fill("Screening codebook")
    page.get_by_label("Papers").check()
    page.get_by_role("button", name="Make draft v1").click()
    page.wait_for_url("**/edit/")
    assert page.locator("#qcards .qcard").count() == 0

    # Question 1 by pointer: add it, fill it, add a second option.
    page.get_by_role("button", name="+ Add a question").click()
    page.wait_for_selector("#q-n0-key")
    page.fill("#q-n0-key", "label")
    page.fill("#q-n0-text", "Main contribution?")
    page.fill("#q-n0-o-o0-value", "method")
    page.fill("#q-n0-o-o0-label", "A training method")
    page.locator("#n0-add-option").click()
    page.wait_for_selector("#q-n0-o-o1-value")
    page.fill("#q-n0-o-o1-value", "analysis")
    page.fill("#q-n0-o-o1-label", "An analysis")

    # Question 2 by keyboard: Enter on "Add a question", then typing and Tab.
    page.locator("#add-question").focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#q-n1-key")
    assert page.evaluate("document.activeElement.id") == "q-n1-key"  # the new card's first field
    page.keyboard.type("scope")
    page.locator("#q-n1-text").focus()
    page.keyboard.type("How general is it?")
    page.locator("#q-n1-o-o0-value").focus()
    page.keyboard.type("general")
    # Shown only when label is "method": choose the question, tick the answer (Space).
    page.locator("#q-n1-show_if_question").select_option("label")
    page.wait_for_selector("input[name='q-n1-show_if_in'][value='method']")
    page.locator("input[name='q-n1-show_if_in'][value='method']").focus()
    page.keyboard.press("Space")
    settle(page)

    # The preview is the coding page: scope appears once "A training method" is chosen.
    preview = page.locator("#preview")
    # The preview caught up; the hint names the question and answer as coders read them.
    expect(preview.locator(".cond")).to_have_text("when Main contribution? is A training method")
    settle(page)
    label = preview.locator(".q[data-key='label']")
    assert label.locator("legend").get_by_text("Main contribution?").is_visible()
    scope = preview.locator(".q[data-key='scope']")
    expect(scope).to_be_hidden()
    label.get_by_text("A training method").click()
    expect(scope).to_be_visible()
    label.get_by_text("An analysis").click()
    expect(scope).to_be_hidden()
    # It follows what is typed, before anything is saved.
    page.fill("#q-n0-text", "What does the paper contribute?")
    expect(preview).to_contain_text("What does the paper contribute?")

    # Reorder: drag scope above label by its handle, then Alt+↓ moves it back.
    page.locator("#card-n1 .qcard-head .drag-handle").drag_to(page.locator("#card-n0 .qcard-head"))
    expect(page.locator("#qcards .qcard").first).to_have_attribute("data-token", "n1")
    settle(page)
    assert card_keys(page) == ["scope", "label"]
    page.locator("#q-n1-text").focus()
    page.keyboard.press("Alt+ArrowDown")
    expect(page.locator("#qcards .qcard").first).to_have_attribute("data-token", "n0")
    settle(page)
    assert card_keys(page) == ["label", "scope"]
    assert page.evaluate("document.activeElement.id") == "n1-down" or page.locator("#card-n1").is_visible()

    # Options move the same ways: drag "An analysis" above the first, Alt+↓ on it back.
    page.locator("#card-n0-o1 .drag-handle").drag_to(page.locator("#card-n0-o0 .orow"))
    expect(page.locator("#card-n0 .ocard").first).to_have_id("card-n0-o1")
    page.locator("#q-n0-o-o1-label").focus()
    page.keyboard.press("Alt+ArrowDown")
    expect(page.locator("#card-n0 .ocard").first).to_have_id("card-n0-o0")

    page.get_by_role("button", name="Save draft").click()
    page.wait_for_selector("#saved")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "codebook-editor.png"), full_page=True)

    page.locator("#publish-link").click()
    page.wait_for_url("**/publish/")
    page.get_by_label("Note").fill("First version: label, and scope for methods.")
    page.locator("input[name=open_assignments][value=switch]").check()
    page.get_by_role("button", name="Publish v1").click()
    page.wait_for_url("**/v1/")
    assert page.locator(".flash").first.text_content().startswith("v1 published")
    assert page.evaluate("window.__problems") == []

    codebook = Codebook.objects.get(study=owner, name="Screening codebook")
    version = codebook.current_version()
    assert version.number == 1 and version.note.startswith("First version")
    questions = list(version.questions.order_by("position"))
    assert [q.key for q in questions] == ["label", "scope"]
    assert questions[0].text == "What does the paper contribute?"
    assert [o.value for o in questions[0].options.all()] == ["method", "analysis"]
    assert questions[1].show_if == {"question": "label", "in": ["method"]}


def test_an_options_own_key_chooses_it_on_the_coding_page(owner, page, log_in, live_server):
    """A shortcut set in the editor is the key a coder presses; the others keep their digit."""
    from coding.codebooks.versions import create_codebook
    from coding.labeling import queue

    cora = factories.user("cora")
    factories.member(owner, cora, Role.CODER)
    codebook = create_codebook(owner, {"name": "Keys", "applies_to": "paper", "questions": [
        {"key": "label", "kind": "single", "text": "Main contribution?",
         "options": [{"value": "method", "label": "A method"},
                     {"value": "analysis", "label": "An analysis", "shortcut": "a"}]},
        {"key": "size_b", "kind": "number", "text": "Largest policy", "unit": "billion parameters",
         "options": [{"value": "not_reported", "label": "Not reported", "shortcut": "r"}]}]})
    held = queue.assign(factories.paper_item(owner, codebook, 1), cora)

    log_in("cora", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{owner.slug}/code/{held.pk}/")
    first = page.locator(".q[data-key='label']")
    assert first.locator("label.opt kbd").all_text_contents() == ["1", "a"]
    page.keyboard.press("a")
    assert first.locator("input[value='analysis']").is_checked()
    second = page.locator(".q[data-key='size_b']")
    expect(second).to_have_class("q focus")  # a radio answer moves on
    assert "billion parameters" in second.text_content()
    page.keyboard.press("r")
    assert second.locator("input[value='not_reported']").is_checked()


def test_the_editor_works_without_javascript(owner, browser, live_server):
    """Every action is a button the server answers: add, condition, move, save, publish."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill("olive")
    page.get_by_label("Password").fill(factories.PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/studies/{owner.slug}/codebooks/")
    page.get_by_label("Name").fill("Plain codebook")
    page.get_by_role("button", name="Make draft v1").click()
    page.get_by_role("button", name="+ Add a question").click()
    page.fill("#q-n0-key", "code_released")
    page.fill("#q-n0-text", "Code released?")
    page.select_option("#q-n0-kind", "yes_no")
    page.get_by_role("button", name="+ Add a question").click()
    page.fill("#q-n1-key", "repository")
    page.fill("#q-n1-text", "Where?")
    page.select_option("#q-n1-kind", "text")
    page.select_option("#q-n1-show_if_question", "code_released")
    page.locator("#card-n1").get_by_role("button", name="Show its answers").click()
    page.check("input[name='q-n1-show_if_in'][value='yes']")
    # The preview is drawn by the server on every answer.
    assert page.locator("#preview .q[data-key='repository']").count() == 1
    page.get_by_role("button", name="Save draft").click()
    page.wait_for_url("**/edit/")
    assert page.locator(".flash").first.text_content().startswith("Draft v1 saved")
    page.locator("#publish-link").click()
    page.get_by_label("Note").fill("First version, made without scripts.")
    page.get_by_role("button", name="Publish v1").click()
    page.wait_for_url("**/v1/")
    version = Codebook.objects.get(study=owner, name="Plain codebook").current_version()
    assert [(q.key, q.kind, q.show_if) for q in version.questions.order_by("position")] == [
        ("code_released", "yes_no", None),
        ("repository", "text", {"question": "code_released", "in": ["yes"]})]
    context.close()

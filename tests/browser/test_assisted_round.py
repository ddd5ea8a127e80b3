"""An assisted round in a real browser (issue 16): the owner makes the main round assisted
on the raters page; a coder then sees the model's answer beside the question, marked as a
suggestion with the model's version and configuration hash, and her coding is recorded as
assisted. axe-core finds no serious or critical violation on either page."""

import io
import json

import pytest

from coding.actions import sample
from coding.labeling import queue
from coding.models import Assignment, Coding, Item, Role
from coding.raters.imports import import_codings
from coding.raters.setup import add_rater
from tests import factories
from tests.browser.test_accessibility import ARTIFACTS, serious_violations
from tests.coding.labeling.test_assisted_rounds import ONE_QUESTION

pytestmark = pytest.mark.browser


@pytest.fixture
def labelled(transactional_db):
    people = {name: factories.user(name) for name in ("olive", "cora", "cyril")}
    study = factories.study("Assisted browser study", owner=people["olive"])
    for name, role in (("olive", Role.OWNER), ("cora", Role.CODER), ("cyril", Role.CODER)):
        factories.member(study, people[name], role)
    codebook = factories.codebook(study, ONE_QUESTION)
    items = [factories.paper_item(study, codebook, n) for n in range(4)]
    sample.draw_reliability_sample(study, count=1, seed=3)
    add_rater(study, None, kind="model", name="gpt-labeller", model_version="gpt-x-2026-01-31",
              config_hash="sha256:c0ffee", provenance="zero-shot prompt v3")
    import_codings(study, io.StringIO("".join(
        json.dumps({"item": i.document.key, "rater": "gpt-labeller", "question": "label",
                    "value": "systems"}) + "\n" for i in items)), "jsonl")
    open_item = Item.objects.filter(study=study, in_reliability_sample=False).order_by("pk")[0]
    return study, people, open_item


def log_in(page, live_server, username):
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/login/")
    page.locator("input[name=username]").fill(username)
    page.locator("input[name=password]").fill(factories.PASSWORD)
    page.locator("form:has(input[name=username]) button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/")


def test_owner_makes_the_round_assisted_and_the_coder_sees_a_marked_suggestion(
        labelled, browser, live_server):
    study, people, open_item = labelled
    # axe-core is injected as a script tag: the page's CSP is bypassed for that only.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    log_in(page, live_server, "olive")
    page.goto(f"{live_server.url}/studies/{study.slug}/raters/")
    form = page.locator("#assisted-round form")
    form.get_by_label("Round").select_option("main")
    form.get_by_label("Suggest the answers of").select_option("gpt-labeller")
    form.get_by_role("button", name="Save").click()
    page.wait_for_url(f"{live_server.url}/studies/{study.slug}/raters/")
    assert "The main round is assisted" in page.locator(".assisted-rounds").inner_text()
    assert serious_violations(page, "raters-assisted") == []

    mine = queue.assign(open_item, people["cora"])
    log_in(page, live_server, "cora")
    page.goto(f"{live_server.url}/studies/{study.slug}/code/{mine.pk}/")
    suggestion = page.locator("#question-label #suggestion-label")
    suggestion.wait_for()
    text = suggestion.inner_text()
    assert "Suggestion" in text and "systems" in text
    assert "gpt-labeller" in text and "gpt-x-2026-01-31" in text and "sha256:c0ffee" in text
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "assisted-suggestion.png"))
    assert serious_violations(page, "assisted-suggestion") == []

    page.locator("#question-label input[value=analysis]").check()
    page.locator("#submit-button").click()
    page.wait_for_load_state()
    coding = Coding.objects.get(assignment=mine)
    assert coding.values == {"label": "analysis"} and coding.assisted is True
    assert Assignment.objects.get(pk=mine.pk).status == "submitted"
    context.close()

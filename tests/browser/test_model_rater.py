"""A model rater from a blank study, in Chromium, with no shell (issue 38): the owner adds a
model rater, points it at a local OpenAI-compatible server (the tests' own), previews the
exact request for one item (blinded fields withheld), runs the model over the reliability
sample, and reads its agreement with each coder and the alternative annotator test."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from coding.models import Item, RaterCoding, Role
from tests import factories
from tests.browser.conftest import sign_in
from tests.browser.test_accessibility import serious_violations
from tests.coding.model_raters.conftest import model_answer
from tests.model_server import ModelServer

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var"
                                / "test-artifacts"))


@pytest.fixture
def coded_study(transactional_db):
    """A study set up from nothing: a codebook with a condition, a special answer and free
    text; three coders who each coded twelve papers independently; authors blinded."""
    owner = factories.user("olive")
    study = factories.study("Fresh model study", owner=owner, blind_authors=True, overlap=3)
    factories.member(study, owner, Role.OWNER)
    coders = [factories.user(name) for name in ("cora", "cyril", "cleo")]
    for coder in coders:
        factories.member(study, coder, Role.CODER)
    codebook = factories.codebook(study)
    items = [factories.paper_item(study, codebook, n) for n in range(1, 13)]
    flipped = {"analysis": "rl_method", "rl_method": "analysis"}
    for n, item in enumerate(items, start=1):
        model = "analysis" if n % 3 == 0 else "rl_method"
        for k, coder in enumerate(coders):
            label = flipped[model] if n % (4 + k) == 0 else model
            factories.code(item, coder, label=label,
                           **({"scope": "general"} if label == "rl_method" else {}))
    assert Item.objects.filter(study=study, in_reliability_sample=True).count() == 12
    return study


@pytest.fixture
def server():
    running = ModelServer(model_answer).start()
    yield running
    running.stop()


def test_the_owner_runs_and_validates_a_model_in_the_browser(coded_study, server, browser,
                                                            live_server):
    study = coded_study
    page = sign_in(browser.new_page(), live_server, "olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{study.slug}/raters/")
    form = page.locator("#add-rater form")
    form.get_by_label("Kind").select_option("model")
    form.get_by_label("Name").fill("local-coder")
    form.get_by_label("Model version").fill("test-coder-8b")
    form.get_by_role("button", name="Add rater").click()
    page.get_by_role("link", name="local-coder").click()
    expect(page.locator("#settings .notice")).to_contain_text("Not set up yet")

    settings = page.locator("#settings-form")
    settings.get_by_label("Base URL").fill(server.url)
    settings.locator("#id_model").fill("test-coder-8b")
    settings.get_by_label("Requests at once").fill("2")
    settings.get_by_role("button", name="Save settings").click()
    expect(page.locator("#key-state")).to_contain_text("none (a local server)")

    # The exact request for one item, with what is withheld from the model.
    preview = page.locator("#preview")
    preview.get_by_label("Item (document key)").fill("2599.00004")
    preview.get_by_role("button", name="Preview").click()
    expect(page.locator("#preview-withheld")).to_contain_text("authors")
    expect(page.locator("#preview-user")).to_contain_text("Invented paper number 4")
    expect(page.locator("#preview-system")).to_contain_text("Asked only when label is")
    page.get_by_text("The whole request body").click()
    request = page.locator("#preview-request").inner_text()
    assert '"model": "test-coder-8b"' in request and "Invented paper number 4" in request
    assert "Ann Example" not in request and "json_schema" in request
    assert server.requests == []  # a preview sends nothing

    run = page.locator("#run-form")
    run.locator("#id_set").select_option("sample")
    run.get_by_role("button", name="Run the model").click()
    row = page.locator("#runs tbody tr").first
    expect(row.locator(".status")).to_have_class("status status-done")
    expect(row).to_contain_text("12 / 12")
    assert RaterCoding.objects.filter(rater__name="local-coder", question_key="label").count() \
        == 12
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "model-rater.png"), full_page=True)

    page.locator("#validation-link").click()
    label = page.locator("#question-label")
    rows = label.locator(".agreement-with tbody tr")
    expect(rows).to_have_count(5)  # three coders, the final decisions, the majority
    expect(label.locator(".agreement-with")).to_contain_text("cora")
    expect(label.locator(".alt-test").first).to_contain_text("Winning rate")
    expect(label.locator(".alt-test-coders tbody tr")).to_have_count(3)
    expect(page.locator("#verdict-label")).to_contain_text("alt-test")
    expect(page.locator("#rule")).to_contain_text("alternative annotator test")
    expect(page.locator("#methods-text")).to_contain_text("test-coder-8b")
    page.screenshot(path=str(ARTIFACTS / "model-validation.png"), full_page=True)

    # Both pages pass axe (serious and critical findings), read as the owner reads them.
    context = browser.new_context(viewport={"width": 1366, "height": 900}, bypass_csp=True)
    checked = sign_in(context.new_page(), live_server, "olive", factories.PASSWORD)
    for name, path in (("model-rater", "model/?item=2599.00004"), ("validation", "validation/")):
        checked.goto(f"{live_server.url}/studies/{study.slug}/raters/local-coder/{path}")
        assert serious_violations(checked, name) == [], name
    context.close()

"""Screening in Chromium (issue 37): two screeners screen invented records on the coding
page; once Cora has an include and an exclude, every record she is handed is on the relevant
topic until they run out (the order is her model's, not chance); Cyril's labels leave her
ranking as it was; the owner reads the stopping rule on the screening page and stops, and
Cora, once she has finished the record on her screen, is handed nothing more."""

import os
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from coding.labeling import queue
from coding.models import Assignment, ScreeningRanking
from tests import factories
from tests.browser.conftest import sign_in
from tests.coding.screening.conftest import RELEVANT

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var"
                                / "test-artifacts"))


@pytest.fixture
def screening_study(transactional_db):
    from django.db import transaction

    from tests.conftest import make_people
    from tests.coding.screening.conftest import make_screening

    with transaction.atomic():
        people = make_people()
        study, relevant = make_screening(people, size=50, share=0.2, target_recall=0.8)
    return study, relevant, people


def on_topic(page):
    title = page.locator("h1[data-field='title']").inner_text().lower()
    return any(word in title.split() for word in RELEVANT)


def screen_one(page, judge):
    """Answer the record on the page (1 include, 2 exclude) and submit; whether it was on
    the relevant topic."""
    page.locator("#coding-form .q.focus").wait_for()
    relevant = on_topic(page)
    url = page.url
    page.keyboard.press("1" if judge(relevant) else "2")
    page.keyboard.press("Escape")  # out of the note box the focus moved on to
    page.keyboard.press("Enter")
    page.wait_for_url(lambda now: now != url)
    page.wait_for_load_state("networkidle")
    return relevant


def start(page, live_server, slug):
    page.goto(f"{live_server.url}/studies/{slug}/code/")
    page.locator("#start-coding, #coding-form, main").first.wait_for()
    if page.locator("#start-coding").count():
        page.locator("#start-coding").click()


def head(study, coder):
    ranking = ScreeningRanking.objects.get(study=study, coder=coder)
    return np.frombuffer(bytes(ranking.head), dtype="<i8").tolist()


def test_two_screeners_screen_to_a_stop_each_in_an_order_of_their_own(
        screening_study, browser, live_server):
    study, relevant, people = screening_study
    cora_page = sign_in(browser.new_page(), live_server, "cora", factories.PASSWORD)
    start(cora_page, live_server, study.slug)
    seen = []
    while not (True in seen and False in seen):  # random order until both labels exist
        seen.append(screen_one(cora_page, lambda on: on))
    unranked = len(seen)
    left = len(relevant) - seen.count(True)
    for _ in range(left):
        seen.append(screen_one(cora_page, lambda on: on))
    # Every record after her first include and exclude was on the relevant topic.
    assert seen[unranked:] == [True] * left, seen
    served = list(Assignment.objects.filter(coder=people["cora"]).order_by("pk")
                  .values_list("served", flat=True))
    assert served[:unranked] == ["unranked"] * unranked
    assert set(served[unranked:]) == {"ranked"}

    # Cyril screens too, in his own browser, including records on the other topic:
    # Cora's ranking does not move.
    before = head(study, people["cora"])
    cyril_page = sign_in(browser.new_context().new_page(), live_server, "cyril",
                         factories.PASSWORD)
    start(cyril_page, live_server, study.slug)
    his = []
    while not (True in his and False in his):
        his.append(screen_one(cyril_page, lambda on: not on))
    for _ in range(3):
        screen_one(cyril_page, lambda on: not on)
    assert ScreeningRanking.objects.filter(study=study, coder=people["cyril"]).exists()
    assert head(study, people["cora"]) == before

    # Cora reads on through excludes until the rule at 80% recall would let her stop.
    for _ in range(min(22, 50 - len(seen) - 2)):  # one left on her screen at the stop
        screen_one(cora_page, lambda on: on)

    owner = sign_in(browser.new_context().new_page(), live_server, "olive", factories.PASSWORD)
    owner.goto(f"{live_server.url}/studies/{study.slug}/")
    owner.get_by_role("link", name="Screening", exact=True).click()
    rule = owner.locator("#stopping-rule")
    expect(rule).to_contain_text("80%")
    assert owner.locator("figure.chart svg").count() == 1
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    owner.screenshot(path=str(ARTIFACTS / "screening-page.png"), full_page=True)
    owner.get_by_role("button", name="Stop screening").click()
    expect(owner.locator("p.notice", has_text="Stopped on")).to_have_count(1)
    study.refresh_from_db()
    assert study.screening["stopped"]["estimate"]["screened"] >= len(seen)
    # The record on Cora's screen is hers to finish; then she is handed nothing more.
    cora_page.locator("#coding-form .q.focus").wait_for()
    cora_page.keyboard.press("2")
    cora_page.keyboard.press("Escape")
    cora_page.keyboard.press("Enter")
    expect(cora_page.locator("h1", has_text="Nothing left for you to code")).to_have_count(1)
    assert queue.next_item(study, people["cora"]) is None

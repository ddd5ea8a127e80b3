"""An adjudicator resolves disagreements in a real browser with the keyboard."""

import json

import pytest
from django.core.management import call_command

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.models import Decision

pytestmark = pytest.mark.browser


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)


def test_adjudicator_resolves_three_disagreements_with_the_keyboard(demo, log_in, live_server):
    page = log_in("adjudicator", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/review/")
    page.locator("table a", has_text="Review").first.focus()
    page.keyboard.press("Enter")
    expected = {}
    while len(expected) < 3:
        page.wait_for_selector("#review-form .q.focus")
        item_url = page.url
        item_id = int(item_url.split("/review/")[1].split("/")[0].split("?")[0])
        for question in page.locator("#review-form .q").all():
            first = question.locator("input[name^='d-']").first
            expected[(item_id, question.get_attribute("data-key"))] = json.loads(
                first.get_attribute("value"))
            page.keyboard.press("1")  # accept the first coder's value, move to the next
        page.keyboard.press("Enter")
        page.wait_for_url(lambda url: url != item_url)

    decided = {(d.item_id, d.question_key): d.value for d in Decision.objects.filter(
        method="adjudicated", decided_by__username="adjudicator")}
    assert decided == expected
    assert len(decided) >= 3

"""The adjudicator sees each coder's quotes marked in the item's text, in a real browser:
one style per coder with a legend, the coder's number beside each mark, and a listed
quote scrolls to its mark. axe-core finds no serious or critical violation."""

import pytest

from coding.actions.submit import submit
from coding.labeling import queue
from coding.models import Role
from tests import factories
from tests.browser.test_accessibility import ARTIFACTS, serious_violations

pytestmark = pytest.mark.browser

# Long enough that the abstract's end is below the fold of a 900-pixel window.
FILLER = " ".join(f"Sentence {n} of invented filler about rollout buffers." for n in range(60))
ABSTRACT = (f"We tune a policy with stale rollouts and report the largest run. {FILLER} "
            "The entropy bonus keeps exploration alive at the very end.")
ANSWERS = {"scope": "general", "size_b": 70, "failures": ["none"], "code_released": "yes"}


@pytest.fixture
def quoted(transactional_db):
    """Cora and cyril disagree on one paper; each quoted it, cora twice (one at the end)."""
    people = {name: factories.user(name) for name in ("olive", "cora", "cyril", "ada")}
    study = factories.study("Quoted study", owner=people["olive"])
    for name, role in (("olive", Role.OWNER), ("cora", Role.CODER), ("cyril", Role.CODER),
                       ("ada", Role.ADJUDICATOR)):
        factories.member(study, people[name], role)
    document = factories.paper(7)
    document.metadata["abstract"] = ABSTRACT
    document.save()
    item = queue.add_item(study, document, factories.codebook(study))
    submit(queue.assign(item, people["cora"]), {**ANSWERS, "label": "analysis"},
           evidence=[{"question": "label", "field": "abstract", "quote": "stale rollouts"},
                     {"question": "failures", "field": "abstract", "quote": "entropy bonus"}])
    submit(queue.assign(item, people["cyril"]), {**ANSWERS, "label": "rl_method"},
           evidence=[{"question": "label", "field": "abstract", "quote": "policy with stale"}])
    return study, item


def test_each_coders_quotes_are_marked_in_the_text_and_a_listed_quote_scrolls_to_its_mark(
        quoted, browser, live_server):
    study, item = quoted
    context = browser.new_context(viewport={"width": 1366, "height": 900}, bypass_csp=True)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{live_server.url}/login/")
    page.locator("input[name=username]").fill("ada")
    page.locator("input[name=password]").fill(factories.PASSWORD)
    page.locator("form:has(input[name=username]) button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/studies/{study.slug}/review/{item.pk}/")
    page.locator("#review-form").wait_for()

    marks = page.locator("#item mark.quote")
    page.wait_for_function("() => document.querySelectorAll('#item mark.quote').length === 4")
    seen = {(m.inner_text(), m.get_attribute("class"), m.get_attribute("title"))
            for m in marks.all()}
    # "policy with stale" and "stale rollouts" overlap on "stale": it is in both coders'
    # quotes: cyril's is two marks, one of them inside cora's (4 marks for 3 quotes).
    assert {(title, cls) for _, cls, title in seen} == {
        ("cora · Main contribution?", "quote by-0"), ("cora · Failures addressed", "quote by-0"),
        ("cyril · Main contribution?", "quote by-1")}
    # Not colour alone: a different underline style per coder, and the coder's number.
    styles = page.evaluate("""() => [...document.querySelectorAll('#item mark.quote')].map(
        m => getComputedStyle(m).textDecorationStyle)""")
    assert set(styles) == {"solid", "dashed"}
    badges = page.locator("#item sup.quote-by").all_inner_texts()
    assert sorted(badges) == ["1", "1", "2"]
    legend = page.locator(".quote-legend").inner_text()
    assert "1 cora" in legend and "2 cyril" in legend

    end = page.locator("#item mark.quote", has_text="entropy bonus")
    assert not end.evaluate("m => m.getBoundingClientRect().top < innerHeight")
    page.locator("button[data-quote='entropy bonus']").click()
    page.wait_for_function("""() => { const m = [...document.querySelectorAll('#item mark.quote')]
        .find(m => m.textContent === 'entropy bonus'); const r = m.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight; }""")
    assert "flash-target" in end.get_attribute("class")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "review-quotes-marked.png"))
    page.evaluate("() => window.scrollTo(0, 0)")
    assert serious_violations(page, "review-quotes") == []
    context.close()

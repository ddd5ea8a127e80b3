"""Evidence quotes on the adjudicator's side (issue 20): each coder's quotes are listed on
the review page, ready to be marked in the item's text, with the coder named; and they
never reach another coder, who opens the same item on their own coding page or API."""

import re

import pytest

from coding.actions.submit import submit
from coding.labeling import queue
from coding.models import Assignment
from tests import factories

ABSTRACT = ("We tune a policy with stale rollouts and report the largest run. "
            "The entropy bonus keeps exploration alive.")
# What each coder quoted (words of the abstract above), and the forms a page or the API
# writes a quote in: the words alone are in the abstract everyone reads.
CYRIL_QUOTE, CORA_QUOTE = "stale rollouts", "entropy bonus"
ANSWERS = {"label": "rl_method", "scope": "general", "size_b": 70,
           "failures": ["entropy_collapse"], "code_released": "yes"}


def quote_forms(quote):
    return [f"\u201c{quote}\u201d", f'"quote": "{quote}"', f'"quote":"{quote}"',
            f"&quot;quote&quot;: &quot;{quote}", f'data-quote="{quote}"']


@pytest.fixture
def quoted(alpha, people):
    """One paper: cyril coded it with a quote; cora holds it, not yet submitted."""
    document = factories.paper(80)
    document.metadata["abstract"] = ABSTRACT
    document.save()
    item = queue.add_item(alpha, document, alpha.paper_codebook)
    submit(queue.assign(item, people["cyril"]), ANSWERS,
           evidence=[{"question": "label", "field": "abstract", "quote": CYRIL_QUOTE}])
    alpha.item = item
    alpha.held = queue.assign(item, people["cora"])
    return alpha


def cora_sees(study, client):
    """Every body cora's coding of the item passes through: her page of it, the API's
    assignment, her codings, her previous item and the next-item answer."""
    base, api = f"/studies/{study.slug}", f"/api/studies/{study.slug}"
    urls = [f"{base}/code/{study.held.pk}/", f"{api}/assignments/{study.held.pk}/",
            f"{base}/code/", f"{base}/code/previous/", f"{base}/codings/", f"{api}/codings/",
            f"{api}/assignments/"]
    bodies = {url: client.get(url, follow=True) for url in urls}
    bodies["POST next"] = client.post(f"{api}/next/")
    assert all(r.status_code == 200 for r in bodies.values()), {
        url: r.status_code for url, r in bodies.items()}
    return {url: r.content.decode() for url, r in bodies.items()}


def test_a_coder_holding_an_item_another_coder_quoted_sees_none_of_the_quotes(
        quoted, people, client_for):
    bodies = cora_sees(quoted, client_for(people["cora"]))
    page = bodies[f"/studies/{quoted.slug}/code/{quoted.held.pk}/"]
    assert "stale rollouts" in page  # the text itself is hers to read
    assert re.search(r'id="evidence"[^>]*value="\[\]"', page), "her evidence starts empty"
    for url, body in bodies.items():
        assert not [f for f in quote_forms(CYRIL_QUOTE) if f in body], url
        assert '<mark class="quote' not in body, url


def test_after_submitting_her_own_quote_a_coder_still_sees_only_hers(quoted, people, client_for):
    held = Assignment.objects.get(pk=quoted.held.pk)
    submit(held, {**ANSWERS, "label": "analysis"},
           evidence=[{"question": "label", "field": "abstract", "quote": CORA_QUOTE}])
    bodies = cora_sees(quoted, client_for(people["cora"]))
    page = bodies[f"/studies/{quoted.slug}/code/{quoted.held.pk}/"]
    assert any(f in page for f in quote_forms(CORA_QUOTE)), "her own quote is on her page"
    for url, body in bodies.items():
        assert not [f for f in quote_forms(CYRIL_QUOTE) if f in body], url


def review_page(study, people, client_for):
    held = Assignment.objects.get(pk=study.held.pk)
    submit(held, {**ANSWERS, "label": "analysis"},
           evidence=[{"question": "label", "field": "abstract", "quote": CORA_QUOTE},
                     {"question": "failures", "field": "title", "quote": "Invented paper"}])
    response = client_for(people["ada"]).get(f"/studies/{study.slug}/review/{study.item.pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_adjudicator_sees_each_coders_quotes_named_and_styled_by_coder(
        quoted, people, client_for):
    html = review_page(quoted, people, client_for)
    links = re.findall(r"<button[^>]*data-quote=[^>]*>", html)
    found = {(re.search(r'data-quote="([^"]*)"', b)[1], re.search(r'data-by="(\d)"', b)[1],
              re.search(r'data-field="([^"]*)"', b)[1], re.search(r'data-who="([^"]*)"', b)[1])
             for b in links}
    # Coders in name order: cora 0, cyril 1; the mark's title names coder and question.
    assert found == {(CORA_QUOTE, "0", "abstract", "cora · Main contribution?"),
                     ("Invented paper", "0", "title", "cora · Failures addressed"),
                     (CYRIL_QUOTE, "1", "abstract", "cyril · Main contribution?")}
    # The fields the marks go into, and a legend that names each coder beside their style.
    assert 'data-field="abstract"' in html and 'data-field="title"' in html
    legend = re.search(r'<ul class="quote-legend".*?</ul>', html, re.S)[0]
    assert re.search(r'quote-sample by-0[^>]*>1</span>\s*cora', legend)
    assert re.search(r'quote-sample by-1[^>]*>2</span>\s*cyril', legend)


def test_the_review_page_finds_a_thread_posts_quote_field(alpha, people, client_for):
    """A quote in a thread's post names the field posts.N.body: the review page lays the
    posts out with those names, as the coding page does."""
    item = queue.add_item(alpha, factories.thread(81, posts=("Opening post about stale rollouts.",
                                                             "A reply.")),
                          alpha.paper_codebook)
    for name, label in (("cora", "analysis"), ("cyril", "rl_method")):
        submit(queue.assign(item, people[name]), {**ANSWERS, "label": label},
               evidence=[{"question": "label", "field": "posts.0.body", "quote": "stale rollouts"}])
    html = client_for(people["ada"]).get(f"/studies/{alpha.slug}/review/{item.pk}/").content.decode()
    assert re.search(r'<div class="body" data-field="posts.0.body">', html)
    links = re.findall(r"<button[^>]*data-quote=[^>]*>", html)
    assert len(links) == 2 and all('data-field="posts.0.body"' in b for b in links)

"""The coding page shows a thread and a paper as faithfully as they were imported: reviews
with their state, review comments under their file and line with replies under what they
answer, a deleted fork and deleted accounts marked, each author with their affiliations."""

import re

import pytest

from coding.labeling import queue
from ingest.imports import run_import
from ingest.models import Document
from tests import factories
from tests.ingest.conftest import FIXTURES


@pytest.fixture
def pr_page(alpha, people, client_for):
    run_import({"format": "github_file", "path": str(FIXTURES / "github" / "rest_folder")})
    for item in alpha.papers:
        item.delete()
    thread = Document.objects.get(key="example-lab/lantern-probes#44")
    assignment = queue.assign(queue.add_item(alpha, thread, alpha.paper_codebook), people["cora"])
    return client_for(people["cora"]).get(f"/studies/{alpha.slug}/code/{assignment.pk}/")


def test_reviews_show_their_state_and_empty_reviews_are_not_dropped(pr_page):
    html = pr_page.content.decode()
    states = re.findall(r'class="tag review-state review-[a-z_]+">([^<]+)<', html)
    assert states == ["changes requested", "commented", "dismissed", "approved"]


def test_review_comments_sit_under_their_file_and_line_with_replies_nested(pr_page):
    html = pr_page.content.decode()
    assert "<code>src/lantern/echo.py</code> line 10" in html
    assert "outdated, was line 7" in html
    first = html.index("Why return (0, 0) rather than raise?")
    replies = html.index('class="replies"', first)
    assert first < replies < html.index("An empty window is valid for a zero-layer toy.")
    assert html.count("An empty window is valid") == 1  # shown once, under its parent
    assert html.count("<code>src/lantern/echo.py</code>") == 2  # the reply repeats no place


def test_a_deleted_fork_and_a_deleted_account_are_marked(pr_page):
    html = pr_page.content.decode()
    assert "deleted fork" in html and "cy-mockford:fix/empty-window" in html
    assert '<i class="deleted-account"' in html and "<b>ghost</b>" not in html
    assert "edited" in html  # the comment changed after it was posted


def test_each_author_is_shown_with_their_own_affiliations(alpha, people, client_for):
    paper = factories.paper(97, author_records=[
        {"name": "Ann Example", "keyname": "Example", "forenames": "Ann", "suffix": None,
         "affiliations": ["Invented Institute"], "orcid": "0000-0002-5555-0097"},
        {"name": "Bo Sample", "keyname": "Sample", "forenames": "Bo", "suffix": None,
         "affiliations": [], "orcid": None}])
    assignment = queue.assign(queue.add_item(alpha, paper, alpha.paper_codebook), people["cora"])
    html = client_for(people["cora"]).get(f"/studies/{alpha.slug}/code/{assignment.pk}/")
    html = html.content.decode()
    assert re.search(r"Ann Example</span> <span class=\"muted\">\(Invented Institute\)</span>", html)
    assert re.search(r"Bo Sample</span></li>", html)  # no affiliation, and none borrowed
    assert "ORCID 0000-0002-5555-0097" in html

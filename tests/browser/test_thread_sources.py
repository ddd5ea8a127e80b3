"""A coder reads an imported pull request and paper in a real browser: review states, review
comments on their file and line with the reply beneath, a deleted fork and account, each
author with their affiliations. A screenshot of each is kept with the test artifacts."""

import os
from pathlib import Path

import pytest

from coding.labeling import queue
from coding.models import Role
from ingest.imports import run_import
from ingest.models import Document
from tests import factories
from tests.ingest.conftest import FIXTURES

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))


@pytest.fixture
def held(transactional_db):
    owner, coders = factories.user("olive"), [factories.user("cora"), factories.user("cyril")]
    study = factories.study("Threads read faithfully", owner=owner)
    factories.member(study, owner, Role.OWNER)
    for coder in coders:
        factories.member(study, coder, Role.CODER)
    book = factories.codebook(study)
    run_import({"format": "github_file", "path": str(FIXTURES / "github" / "rest_folder")})
    run_import({"format": "arxiv_oai_file", "path": str(FIXTURES / "arxiv" / "oai_arxiv_authors.xml")})
    pr = Document.objects.get(key="example-lab/lantern-probes#44")
    paper = Document.objects.get(key="2507.99919")
    return [queue.assign(queue.add_item(study, doc, book), coder)
            for doc, coder in zip((pr, paper), coders)]


def test_a_coder_reads_reviews_review_comments_and_authors_as_imported(held, log_in, live_server):
    pr, paper = held
    page = log_in("cora", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{pr.item.study.slug}/code/{pr.pk}/")
    states = page.locator(".review-state")
    assert states.all_inner_texts() == ["changes requested", "commented", "dismissed", "approved"]
    reply = page.locator(".review-comment .replies .review-comment")
    assert "An empty window is valid" in reply.inner_text()
    assert page.get_by_text("deleted fork").is_visible()
    assert page.locator(".deleted-account").first.is_visible()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "thread_reviews.png"), full_page=True)

    page.context.clear_cookies()
    page = log_in("cyril", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{paper.item.study.slug}/code/{paper.pk}/")
    authors = page.get_by_role("list", name="Authors").locator("li")
    assert authors.all_inner_texts() == [
        "Ada Q. Placeholder (Example Institute of Technology; Imaginary Research Lab)",
        "Bo Testwell Jr ORCID 0000-0002-5555-0042", "Chloé Mockford"]
    page.screenshot(path=str(ARTIFACTS / "paper_authors.png"), full_page=True)

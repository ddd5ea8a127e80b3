"""Issue 14's "done when", in a real browser: from an empty database with one person who may
create studies, everything up to a first coding is done through the pages.

The owner creates a blank study from the home page, follows the setup checklist to write a
two-question codebook (the second question shown only for one answer of the first),
publishes it, makes an invite link for a coder and imports three papers from a snapshot
file. In a browser of their own the coder opens the link, makes an account and codes one
item. The API version is tests/test_setup_journey.py.
"""

import json

import pytest
from django.contrib.auth.models import Permission, User

from coding.models import Coding, Item, Study
from tests.browser import editor
from tests.browser.conftest import WATCH
from tests.test_setup_journey import PASSWORD, snapshot_lines

pytestmark = pytest.mark.browser


@pytest.fixture
def founder(transactional_db):
    person = User.objects.create_user("rita", password=PASSWORD)
    person.user_permissions.add(Permission.objects.get(codename="create_study"))
    return person


def follow_checklist(page, step):
    """Open the page a step of the study's setup checklist leads to."""
    page.locator(f"#setup [data-step='{step}'] a").click()
    page.wait_for_load_state("networkidle")


def test_a_study_is_set_up_and_coded_in_the_browser(founder, page, browser, log_in, live_server,
                                                     tmp_path):
    page.add_init_script(WATCH)
    log_in("rita", PASSWORD)

    # An empty home page leads to creating a study.
    page.get_by_role("link", name="Create a study").first.click()
    page.get_by_label("Name").fill("Small RL screen")
    page.get_by_label("A blank study: you write the codebook").check()
    page.get_by_role("button", name="Create the study").click()
    page.wait_for_url("**/studies/small-rl-screen/")
    slug = Study.objects.get().slug
    study_url = page.url
    assert page.locator("#setup [data-step='codebook']").get_attribute("class") == "todo"

    # The codebook: two questions, the second shown only when the first is "method".
    follow_checklist(page, "codebook")
    editor.start_draft(page, "Screening")
    editor.add_question(page, 0, "kind", "What does the paper contribute?",
                        [("method", "A training method"), ("other", "Something else")])
    editor.add_question(page, 1, "component", "Which component does it change?",
                        kind="text", shown_if=("kind", "method"))
    editor.save_and_publish(page)

    # A coder, invited by link.
    page.goto(study_url)
    follow_checklist(page, "members")
    page.locator("select[name=role]").last.select_option("coder")
    page.get_by_role("button", name="Make invite link").click()
    link = page.locator("#invite-link").text_content().strip()
    assert "/invite/" in link

    # Three papers from a snapshot file.
    page.goto(study_url)
    follow_checklist(page, "items")
    upload = tmp_path / "three-papers.jsonl"
    upload.write_text("\n".join(snapshot_lines()) + "\n")
    page.locator("select[name=format]").select_option("arxiv_snapshot_file")
    page.locator("input[type=file][name=file]").set_input_files(str(upload))
    page.get_by_role("button", name="Import").click()
    page.wait_for_url("**/jobs/**")
    page.wait_for_function("() => /done|finished/i.test(document.body.innerText)", timeout=30_000)
    assert Item.objects.filter(study__slug=slug).count() == 3
    page.goto(study_url)
    for step in ("codebook", "items"):
        assert page.locator(f"#setup [data-step='{step}']").get_attribute("class") == "done"
    # An invite is not yet a coder: the step stays open until the link is used.
    assert page.locator("#setup [data-step='members']").get_attribute("class") == "todo"
    assert page.evaluate("window.__problems") == []

    # The coder, in a browser of their own: the link makes an account and joins the study.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    coder = context.new_page()
    coder.add_init_script(WATCH)
    coder.goto(link.replace("http://127.0.0.1:8000", live_server.url))
    coder.locator("input[name=username]").fill("cleo")
    coder.locator("input[name=password1]").fill(PASSWORD)
    coder.locator("input[name=password2]").fill(PASSWORD)
    coder.get_by_role("button", name="Create account and join").click()
    coder.wait_for_url(f"**/studies/{slug}/**")
    coder.goto(f"{live_server.url}/studies/{slug}/code/")
    if coder.locator("#start-coding").count():
        coder.locator("#start-coding").click()
    coder.wait_for_url("**/code/*/")
    component = coder.locator(".q[data-key='component']")
    assert not component.is_visible()
    coder.locator("label.opt", has_text="A training method").click()  # not the hint below
    assert component.is_visible()
    component.locator("textarea, input[type=text]").first.fill("the clipping of the ratio")
    coder.locator("#submit-button").click()
    coder.wait_for_load_state("networkidle")
    assert coder.evaluate("window.__problems") == []
    context.close()
    page.reload()
    for step in ("codebook", "members", "items", "started"):
        assert page.locator(f"#setup [data-step='{step}']").get_attribute("class") == "done"

    coding = Coding.objects.get()
    assert coding.assignment.coder.username == "cleo"
    assert coding.values == {"kind": "method", "component": "the clipping of the ratio"}
    assert json.dumps(coding.values)  # stored as the JSON the export reads

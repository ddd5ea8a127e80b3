"""Issue 35's scenario in a real browser: a team's own first study, from a blank study to a
pandas load of its export.

The owner creates a blank study, writes a codebook in the editor (a finding that is
observed or only discussed, and where it is observed, asked only when observed), adds two
coders and an adjudicator who have accounts, and imports two papers. Cora codes every
paper as observed in training and quotes the title for it; Cyril codes each as only
discussed, so the follow-up question never reached him. The adjudicator decides the
first paper as Cora saw it, the page asking before it leaves "where" open, and the second
as Cyril saw it, which rules "where" out. The owner's export, loaded with pandas, has the
decisions, "where" not applicable on the second paper, and Cora's quotes.
"""

import json
import os
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User

from coding.dataset import load
from coding.models import Decision, StoredDisagreement, Study
from tests.browser import editor
from tests.browser.conftest import WATCH, sign_in
from tests.test_setup_journey import PASSWORD, snapshot_lines

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS", Path(__file__).resolve().parents[2] / "var"
                                / "test-artifacts"))


@pytest.fixture
def team(transactional_db):
    founder = User.objects.create_user("rita", password=PASSWORD)
    founder.user_permissions.add(Permission.objects.get(codename="create_study"))
    for name in ("cora", "cyril", "adam"):
        User.objects.create_user(name, password=PASSWORD)


def person(browser, live_server, username):
    """A browser of the person's own, logged in."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.add_init_script(WATCH)
    return sign_in(page, live_server, username, PASSWORD)


def write_codebook(page):
    editor.start_draft(page, "Failures")
    editor.add_question(page, 0, "finding", "Is the failure observed or only discussed?",
                        [("observed", "Observed"), ("discussed", "Only discussed")])
    editor.add_question(page, 1, "where", "Where is it observed?",
                        [("training", "In training"), ("evaluation", "In evaluation")],
                        shown_if=("finding", "observed"))
    editor.save_and_publish(page)


def code_all(page, live_server, slug, choose):
    """Code every item the coder is handed; `choose(page)` answers one."""
    page.goto(f"{live_server.url}/studies/{slug}/code/")
    page.locator("#start-coding, #coding-form, main").first.wait_for()
    if page.locator("#start-coding").count():
        page.locator("#start-coding").click()
    coded = 0
    while page.locator("#coding-form").count():
        page.locator("#coding-form .q.focus").wait_for()
        url = page.url
        choose(page)
        page.keyboard.press("Enter")
        page.wait_for_url(lambda now: now != url)
        page.wait_for_load_state("networkidle")
        coded += 1
        assert coded <= 2
    return coded


def observed_in_training_with_a_quote(page):
    page.keyboard.press("1")  # finding: observed; "where" appears and takes the focus
    page.locator(".q[data-key='where'].focus").wait_for()
    page.evaluate("""() => {
        const text = document.querySelector('#item [data-field="title"]').firstChild;
        const range = document.createRange();
        range.setStart(text, 0);
        range.setEnd(text, text.textContent.indexOf(" "));
        window.getSelection().removeAllRanges();
        window.getSelection().addRange(range);
    }""")
    page.keyboard.press("e")
    page.locator("ul.quotes li").first.wait_for()
    page.keyboard.press("1")  # where: in training


def only_discussed(page):
    page.keyboard.press("2")


def test_a_blank_study_goes_from_the_editor_to_a_pandas_load(team, browser, live_server,
                                                            tmp_path):
    owner = person(browser, live_server, "rita")
    owner.get_by_role("link", name="Create a study").first.click()
    owner.get_by_label("Name").fill("First failure screen")
    owner.get_by_label("A blank study: you write the codebook").check()
    owner.get_by_role("button", name="Create the study").click()
    owner.wait_for_url("**/studies/first-failure-screen/")
    study_url, slug = owner.url, Study.objects.get().slug
    owner.locator("#setup [data-step='codebook'] a").click()
    write_codebook(owner)

    owner.goto(f"{study_url}members/")
    for username, role in (("cora", "coder"), ("cyril", "coder"), ("adam", "adjudicator")):
        owner.get_by_label("Username or e-mail").fill(username)
        owner.locator("form:has(input[name=person]) select[name=role]").select_option(role)
        owner.get_by_role("button", name="Add", exact=True).click()
        owner.wait_for_load_state("networkidle")
    assert owner.locator("text=cyril").count() >= 1

    owner.goto(f"{study_url}import/")
    upload = tmp_path / "two-papers.jsonl"
    upload.write_text("\n".join(list(snapshot_lines())[:2]) + "\n")
    owner.locator("select[name=format]").select_option("arxiv_snapshot_file")
    owner.locator("input[type=file][name=file]").set_input_files(str(upload))
    owner.get_by_role("button", name="Import").click()
    owner.wait_for_url("**/jobs/**")
    owner.wait_for_function("() => /done|finished/i.test(document.body.innerText)",
                            timeout=30_000)
    owner.goto(f"{study_url}import/")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    owner.screenshot(path=ARTIFACTS / "import-flow.png", full_page=True)
    flow = owner.locator("#screening-flow").inner_text()
    assert "Records read\t2" in flow and "Added to the pool\t2" in flow

    cora = person(browser, live_server, "cora")
    assert code_all(cora, live_server, slug, observed_in_training_with_a_quote) == 2
    cyril = person(browser, live_server, "cyril")
    assert code_all(cyril, live_server, slug, only_discussed) == 2
    assert StoredDisagreement.objects.filter(decided=False).count() == 4  # finding, where x2

    adam = person(browser, live_server, "adam")
    adam.goto(f"{live_server.url}/studies/{slug}/review/")
    adam.locator("table a", has_text="Review").first.click()
    adam.locator("#review-form .q.focus").wait_for()
    first = adam.url
    # Cora's "observed" is choice 1 (tied groups in coder order): "where" then applies.
    adam.keyboard.press("1")
    adam.keyboard.press("Enter")
    adam.locator("#partial-confirm").wait_for()
    adam.screenshot(path=ARTIFACTS / "review-partial-confirm.png", full_page=True)
    assert "Where is it observed?" in adam.locator("#partial-confirm").inner_text()
    assert not Decision.objects.filter(method="adjudicated").exists()  # asked first
    adam.locator(".q[data-key='where'] input[name='d-where']").first.check()
    adam.locator("#review-form button[type=submit]:not([name=partial])").click()
    adam.wait_for_url(lambda now: now != first)
    adam.locator("#review-form .q.focus").wait_for()
    adam.locator(".q[data-key='finding'] input[name='d-finding']").nth(1).check()  # discussed
    adam.locator("#review-form button[type=submit]:not([name=partial])").click()
    adam.wait_for_url(lambda now: now.split("?")[0].endswith("/review/"))
    assert StoredDisagreement.objects.filter(decided=False).count() == 0

    owner.goto(f"{study_url}export/")
    for shape in owner.locator("input[name=shapes]").all():
        shape.set_checked(shape.get_attribute("value") in ("wide", "decisions", "evidence"))
    with owner.expect_download() as download:
        owner.get_by_role("button", name="Export", exact=True).click()
    path = tmp_path / "export.zip"
    download.value.save_as(path)
    tables = load(path)
    wide = tables["wide-failures"].set_index("document_key").sort_index()
    observed, discussed = wide.iloc[0], wide.iloc[1]
    if observed["finding"] != "observed":
        observed, discussed = discussed, observed
    assert (observed["finding"], observed["where"], observed["where__method"]) == (
        "observed", "training", "adjudicated")
    assert (discussed["finding"], discussed["where__status"], discussed["where__method"]) == (
        "discussed", "not_applicable", "not_applicable")
    evidence = tables["evidence"]
    assert len(evidence) == 2 and set(evidence["question"]) == {"where"}
    assert set(evidence["coder"]) == {"coder_1"} or evidence["coder"].nunique() == 1
    for page in (owner, cora, cyril, adam):
        assert page.evaluate("window.__problems") == []
    json.dumps(tables["decisions"].to_dict("records"), default=str)

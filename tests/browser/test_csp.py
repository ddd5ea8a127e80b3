"""The pages work in Chromium under the Content-Security-Policy, which refuses nothing.

An init script records every `securitypolicyviolation` event before the page's own
scripts run; console errors are recorded too. A refused script or style shows up here
even when the page seems to work (the CSP breaks pages silently).
"""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from coding.demo.study import DEMO_PASSWORD, DEMO_SLUG
from coding.models import Study
from workbench.models import Job

pytestmark = pytest.mark.browser

RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(event.violatedDirective + " " + (event.blockedURI || "inline")
    + " at " + event.sourceFile + ":" + event.lineNumber);
});
"""


@pytest.fixture
def demo(transactional_db):
    call_command("load_demo", verbosity=0)


@pytest.fixture
def watched(page):
    """The page, recording CSP violations and console errors: watched.check() asserts none."""
    errors = []
    page.add_init_script(RECORD_VIOLATIONS)

    def on_console(message):
        # The browser asks for /favicon.ico on its own; the site has none (a 404, not CSP).
        if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico"):
            errors.append(f"{message.text} ({message.location.get('url')})")

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(str(error)))

    def check():
        violations = page.evaluate("window.__violations")
        assert violations == [], f"CSP violations on {page.url}"
        assert errors == [], f"console errors on {page.url}"

    page.check = check
    return page


def test_coding_page_runs_under_the_policy(demo, watched, log_in, live_server):
    page = log_in("coder1", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/code/")
    if page.locator("#start-coding").count():  # "Ready to code": the item is reserved on start
        page.locator("#start-coding").click()
    page.wait_for_selector(".q.focus")  # code.js ran and focused the first question
    page.keyboard.press("?")
    assert page.locator("dialog#keys").is_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("1")  # answers, and htmx saves the draft
    page.wait_for_selector("#draft-status:has-text('Draft saved')")
    page.check()


def test_review_page_runs_under_the_policy(demo, watched, log_in, live_server):
    page = log_in("adjudicator", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/review/")
    page.locator("table a", has_text="Review").first.click()
    page.wait_for_selector("#review-form .q.focus")  # review.js ran
    page.keyboard.press("?")
    assert page.locator("dialog#keys").is_visible()
    page.keyboard.press("Escape")
    page.keyboard.press("1")
    assert page.locator("#review-form .q input[name^='d-']:checked").count() == 1
    page.check()


def test_job_page_polls_under_the_policy(demo, watched, log_in, live_server):
    owner = get_user_model().objects.get(username="owner")
    job = Job.objects.create(kind="export", created_by=owner, status=Job.Status.RUNNING,
                             done=3, total=10, started_at=timezone.now(),
                             heartbeat_at=timezone.now())
    page = log_in("owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/jobs/{job.pk}/")
    page.wait_for_selector("progress.bar-track[value='30']")
    Job.objects.filter(pk=job.pk).update(done=7, heartbeat_at=timezone.now())
    page.wait_for_selector("progress.bar-track[value='70']")  # htmx swapped the new progress in
    page.check()


def test_api_docs_and_admin_work_under_the_policy(demo, watched, log_in, live_server):
    get_user_model().objects.filter(username="owner").update(is_staff=True, is_superuser=True)
    page = log_in("owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector("#swagger-ui .opblock")  # Swagger UI ran and read the schema
    page.check()
    study = Study.objects.get(slug=DEMO_SLUG)
    for path in ("/admin/", "/admin/coding/study/", f"/admin/coding/study/{study.pk}/change/"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_selector("#content")
        page.check()


def test_an_editor_session_runs_under_the_policy(demo, watched, log_in, live_server):
    """Issue 39, finding 5: an editor session (a new codebook, questions added, a kind
    changed, an option moved, the preview redrawn, saved) refuses no style or script."""
    from tests.browser.editor import add_question, start_draft

    page = log_in("owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/studies/{DEMO_SLUG}/codebooks/")
    start_draft(page, "Session codebook")
    add_question(page, 0, "label", "Main contribution?",
                 options=[("method", "A method"), ("analysis", "An analysis")])
    # Kind changed to Number: the level follows (numbers are not nominal), the empty row
    # a new question starts with is no special answer, and the save goes through.
    add_question(page, 1, "seeds", "How many seeds?", kind="number")
    page.locator("#q-n0-text").focus()
    page.keyboard.press("Alt+ArrowDown")  # moves the first question below the second
    page.wait_for_load_state("networkidle")
    page.get_by_role("button", name="Save draft").click()
    page.wait_for_selector("#saved")
    page.check()

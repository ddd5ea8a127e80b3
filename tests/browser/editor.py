"""Writing a codebook in the editor as an owner does, for the browser tests that start
from a blank study: a draft, questions added one by one, saved and published as v1."""


def start_draft(page, name):
    """On the new-codebook page: a paper codebook's draft v1, open in the editor."""
    page.get_by_label("Name").fill(name)
    page.get_by_label("Papers").check()
    page.get_by_role("button", name="Make draft v1").click()
    page.wait_for_url("**/edit/")


def add_question(page, n, key, text, options=(), kind=None, shown_if=None):
    """The n-th question (from 0): options as (value, label) pairs (a new question starts
    as a single choice with one option); `shown_if` (question key, value) asks it only
    when that question has that answer."""
    page.get_by_role("button", name="+ Add a question").click()
    page.wait_for_selector(f"#q-n{n}-key")
    page.fill(f"#q-n{n}-key", key)
    page.fill(f"#q-n{n}-text", text)
    for at, (value, label) in enumerate(options):
        if at:
            page.locator(f"#n{n}-add-option").click()
            page.wait_for_selector(f"#q-n{n}-o-o{at}-value")
        page.fill(f"#q-n{n}-o-o{at}-value", value)
        page.fill(f"#q-n{n}-o-o{at}-label", label)
    if kind:
        page.locator(f"#q-n{n}-kind").select_option(kind)
        page.wait_for_load_state("networkidle")
    if shown_if:
        parent, value = shown_if
        page.locator(f"#q-n{n}-show_if_question").select_option(parent)
        choice = f"input[name='q-n{n}-show_if_in'][value='{value}']"
        page.wait_for_selector(choice)
        page.locator(choice).check()
        page.wait_for_load_state("networkidle")


def save_and_publish(page, note="First version."):
    page.get_by_role("button", name="Save draft").click()
    page.wait_for_selector("#saved")
    page.locator("#publish-link").click()
    page.wait_for_url("**/publish/")
    page.get_by_label("Note").fill(note)
    page.get_by_role("button", name="Publish v1").click()
    page.wait_for_url("**/v1/")

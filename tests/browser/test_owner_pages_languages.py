"""The owner's codebook, calibration, queue and catalog pages in English and Simplified
Chinese (issue 20), in a real Chromium: each page is in the reader's language (its `lang`
and its title from the catalog), axe-core finds no serious or critical violation, and a
screenshot of each is kept as a test artifact."""

import pytest
from django.utils import translation
from django.utils.translation import gettext

from coding.codebooks.editing import start_draft
from coding.demo.study import DEMO_SLUG
from coding.labeling import calibration
from coding.models import Study

from .test_accessibility import ARTIFACTS, demo, open_as, serious_violations  # noqa: F401

pytestmark = pytest.mark.browser
LANGUAGES = ["en", "zh-hans"]


def words(language, text):
    """`text` as the catalog gives it in `language`; in Chinese it must be translated."""
    with translation.override(language):
        found = gettext(text)
    assert language == "en" or found != text, f"{text!r} has no {language} translation"
    return found


def check_page(page, name, title, language):
    """The page is in the reader's language, titled from the catalog, and passes axe."""
    assert page.locator("html").get_attribute("lang") == language, name
    assert page.title().startswith(words(language, title)), (name, page.title())
    passes_axe(page, name, language)


def passes_axe(page, name, language):
    """No serious or critical axe finding; the full page and its first screen kept."""
    assert serious_violations(page, f"owner-{name}-{language}") == [], name
    page.screenshot(path=str(ARTIFACTS / f"owner-{name}-{language}-top.png"))


@pytest.fixture
def study(demo):  # noqa: F811 (the fixture imported above)
    """The demo study with a codebook draft open and one main-round item in calibration."""
    study = Study.objects.get(slug=DEMO_SLUG)
    owner = study.memberships.get(role="owner").user
    codebook = study.codebooks.order_by("name").first()
    start_draft(codebook, owner)
    item = calibration.pool_candidates(study, "", None)[0][0]
    calibration.add_items(study, owner, ids=[item.pk])
    return study, codebook, item


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_owners_codebook_pages_are_in_the_readers_language(study, open_as, live_server,
                                                               language):
    study, codebook, _ = study
    page = open_as("owner", language)
    base = f"{live_server.url}/studies/{study.slug}/codebooks"
    page.goto(f"{base}/")
    check_page(page, "codebook-list", "Codebooks", language)
    page.goto(f"{base}/{codebook.pk}/")
    page.locator("section.question").first.wait_for()
    assert page.locator("html").get_attribute("lang") == language
    assert words(language, "Questions") in page.locator("h2").all_inner_texts()
    passes_axe(page, "codebook-detail", language)
    page.goto(f"{base}/import/")
    check_page(page, "codebook-import", "Import a codebook", language)
    page.goto(f"{base}/{codebook.pk}/publish/")
    assert page.locator("html").get_attribute("lang") == language
    assert words(language, "Keep editing") in page.locator("form.publish-form").inner_text()
    passes_axe(page, "codebook-publish", language)

    # The editor: a question added, then a refused save (an empty key) shows its errors.
    page.goto(f"{base}/{codebook.pk}/edit/")
    page.locator("#qcards").wait_for()
    assert page.locator("html").get_attribute("lang") == language
    passes_axe(page, "codebook-editor", language)
    cards = page.locator("#qcards > li.qcard")
    before = cards.count()
    page.locator("#add-question").click()
    new_card = cards.nth(before)  # the form is drawn again with one card more
    new_card.locator("input[name$='-text']").fill("Anything else?")
    page.locator("#save-button").click()
    page.locator("#save-errors").wait_for()
    assert words(language, "Save draft") in page.locator("#save-button").inner_text()
    passes_axe(page, "codebook-editor-errors", language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_owners_calibration_queue_and_catalog_pages_are_in_the_readers_language(
        study, open_as, live_server, language):
    study, _, item = study
    page = open_as("owner", language)
    base = f"{live_server.url}/studies/{study.slug}"
    for name, path, title in [
        ("calibration", "calibration/", "Calibration"),
        ("calibration-reference", f"calibration/{item.pk}/reference/", "Reference answer"),
        ("queue", "queue/", "Queue"),
        ("catalog", "catalog/", "Method catalog"),
        ("catalog-edit", "catalog/edit/", "Edit the method catalog"),
        ("audit", "audit/", "Audit trail"),
        ("codings", "codings/", "Codings"),
    ]:
        page.goto(f"{base}/{path}")
        check_page(page, name, title, language)
    framework = study.frameworks.order_by("name").first()
    page.goto(f"{base}/frameworks/{framework.pk}/")
    assert page.locator("html").get_attribute("lang") == language
    assert words(language, "Landings") in page.locator("h2").all_inner_texts()
    passes_axe(page, "framework", language)

"""A study's backup in Chromium: the owner starts it from the export page, the job page
shows its progress and then the download, and the zip is a backup of the study."""

import json
import zipfile

import pytest

from coding.models import Role
from tests import factories

pytestmark = pytest.mark.browser


@pytest.fixture
def study(transactional_db, stored_files):
    owner = factories.user("olive")
    study = factories.study("Backed-up study", owner=owner)
    factories.member(study, owner, Role.OWNER)
    book = factories.codebook(study)
    factories.paper_item(study, book, 1)
    return study


def test_an_owner_backs_up_a_study_from_the_export_page(study, log_in, live_server, tmp_path):
    page = log_in("olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{study.slug}/export/")
    assert page.get_by_role("heading", name="Back up the study").is_visible()
    page.get_by_role("button", name="Back up").click()
    page.wait_for_url(f"{live_server.url}/jobs/*/")
    link = page.get_by_role("link", name=f"Download {study.slug}-backup-")
    link.wait_for()
    with page.expect_download() as download:
        link.click()
    path = tmp_path / "backup.zip"
    download.value.save_as(path)
    with zipfile.ZipFile(path) as bundle:
        assert json.loads(bundle.read("manifest.json"))["study"] == study.slug

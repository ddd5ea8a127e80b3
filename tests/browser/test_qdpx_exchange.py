"""The .qdpx exchange in a real browser (issue 41): an owner exports a study coded from
nothing as a REFI-QDA project that validates, and imports a QDA tool's project with two
users' codings, whose agreement then shows on the comparison page."""

import os
import zipfile

import pytest

from coding.codebooks.versions import publish
from coding.models import Codebook, Role
from tests import factories
from tests.coding.export.test_qdpx import TITLE, coded, schema
from tests.coding.raters.test_qdpx_import import qdpx, tool_project

pytestmark = pytest.mark.browser


def test_a_coded_study_exports_as_a_project_that_validates(page, log_in, live_server,
                                                          tmp_path):
    from coding.labeling import queue
    from ingest.models import Document

    owner = factories.user("olive")
    study = factories.study("Fresh browser study", owner=owner)
    factories.member(study, owner, Role.OWNER)
    people = {"owner": owner}
    for name in ("cora", "cyril"):
        people[name] = factories.user(name)
        factories.member(study, people[name], Role.CODER)
    people["ada"] = factories.user("ada")
    factories.member(study, people["ada"], Role.ADJUDICATOR)
    codebook = factories.codebook(study)
    study.papers = [queue.add_item(study, Document.objects.create(
        kind="paper", source="test", key=f"2602.{n:05d}",
        title=TITLE if n == 0 else f"Invented paper {n}",
        metadata={"abstract": "We invent \U0001F9EA a method: group-relative clipping with a "
                              "verifier \U0001F50E." if n == 0 else f"Abstract {n}."}),
        codebook) for n in range(3)]
    study.people = people
    coded(study)
    log_in("olive", factories.PASSWORD)
    page.goto(f"{live_server.url}/studies/{study.slug}/export/")
    page.locator("#qdpx").scroll_into_view_if_needed()
    page.screenshot(path=os.environ.get("QDPX_EXPORT_SCREENSHOT") or str(tmp_path / "export.png"))
    page.select_option("select[name=scope]", "study")
    page.get_by_role("button", name="Export as .qdpx").click()
    link = page.get_by_role("link", name="Download")
    link.wait_for()
    with page.expect_download() as download:
        link.click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    assert path.suffix == ".qdpx"
    from lxml import etree

    with zipfile.ZipFile(path) as archive:
        root = etree.fromstring(archive.read("project.qde"))
    assert schema().validate(root.getroottree())
    assert len(root.findall(".//{urn:QDA-XML:project:1.0}TextSource")) == 3


def test_a_tools_project_imports_and_its_users_agreement_shows(page, log_in, live_server,
                                                              tmp_path):
    owner = factories.user("olive")
    study = factories.study("Receiving browser study", owner=owner)
    factories.member(study, owner, Role.OWNER)
    qde, files = tool_project()
    path = qdpx(tmp_path / "pilot-interviews.qdpx", qde, files)
    log_in("olive", factories.PASSWORD)

    def import_it():
        page.goto(f"{live_server.url}/studies/{study.slug}/raters/")
        section = page.locator("#import-qdpx")
        section.locator("input[type=file]").set_input_files(str(path))
        section.get_by_role("button", name="Import project").click()
        page.get_by_text("Done").first.wait_for()

    import_it()
    assert page.get_by_text("is a draft made from the project's codes").is_visible()
    page.screenshot(path=os.environ.get("QDPX_JOB_SCREENSHOT") or str(tmp_path / "job.png"),
                    full_page=True)
    publish(Codebook.objects.get(study=study).versions.get())  # the owner's review
    import_it()
    assert page.get_by_text("rosa-rater, tim-t").is_visible()
    page.goto(f"{live_server.url}/studies/{study.slug}/raters/")
    form = page.locator("#add-comparison")
    form.locator("input[name=name]").fill("rosa against tim")
    form.locator("select[name=first]").select_option("rosa-rater")
    form.locator("select[name=second]").select_option("tim-t")
    form.locator("input[name=question]").fill("outcomes")
    form.get_by_role("button", name="Add comparison").click()
    page.get_by_role("link", name="rosa against tim").click()
    body = page.locator("main").inner_text()
    # S1: rosa clipping, tim clipping + stable; S2: rosa divergence, tim clipping.
    assert "rosa-rater (rows) against tim-t (columns) on outcomes: 2 items answered by both" \
        in body
    assert "Percent agreement\n0.000" in body and "Krippendorff's alpha\n-0.200" in body
    shot = os.environ.get("QDPX_SCREENSHOT") or str(tmp_path / "comparison.png")
    page.screenshot(path=shot, full_page=True)

"""Importing a REFI-QDA project (.qdpx, issue 41): sources become items, codes a codebook the
owner reviews, each user's codings an outside rater's; a study's own export comes back as
the same codings; a malformed or hostile archive is refused with where, and nothing is
stored. The projects here are made in the test, with invented texts, shaped like those the
QDA tools write (braced upper-case GUIDs, codes without descriptions, codings on whole
sources, vendor elements)."""

import itertools
import zipfile

import pytest

from coding.codebooks.versions import publish
from coding.export.qdpx import build_qdpx
from coding.models import Codebook, ImportRun, Item, Rater, RaterCoding, Role
from coding.raters.qdpx import QdpxImportError, import_qdpx
from tests import factories
from tests.coding.export.test_qdpx import NS, coded, fresh, project, schema  # noqa: F401

NUMBERS = itertools.count(1)
U1 = "{0B6E3F4A-1C2D-4E5F-8A9B-0C1D2E3F4A5B}"
U2 = "{1C7F4A5B-2D3E-4F60-9BAC-1D2E3F4A5B6C}"


def blank(name="Receiving study"):
    owner = factories.user(f"owner-{next(NUMBERS)}")
    study = factories.study(f"{name} {owner.username}", owner=owner)
    factories.member(study, owner, Role.OWNER)
    study.owner = owner
    return study


def qdpx(path, qde, sources=None, extra=()):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("project.qde", qde)
        for name, body in (sources or {}).items():
            archive.writestr(f"sources/{name}", body)
        for name, data in extra:
            archive.writestr(name, data)
    return path


TEXTS = {"S1": "Interview one. We clipped the ratio \U0001F680 and it held steady.",
         "S2": "Interview two. Nothing was clipped; the run diverged."}
GUIDS = {"S1": "2A3B4C5D-6E7F-4081-92A3-B4C5D6E7F809",
         "S2": "3B4C5D6E-7F80-4192-A3B4-C5D6E7F8091A"}
CODES = {"clip": "4C5D6E7F-8091-42A3-B4C5-D6E7F8091A2B",
         "div": "5D6E7F80-91A2-43B4-C5D6-E7F8091A2B3C",
         "stab": "6E7F8091-A2B3-44C5-D6E7-F8091A2B3C4D"}


def tool_project(selections=None, vendor=""):
    """A project as a QDA tool writes one: two users, three codes in a group, two sources
    with files; `selections` are (source, user, code, start, end)."""
    selections = selections if selections is not None else [
        ("S1", U1, "clip", 18, 37), ("S1", U2, "clip", 18, 37), ("S1", U2, "stab", 45, 56),
        ("S2", U1, "div", 0, 53), ("S2", U2, "clip", 15, 35)]
    sources = []
    for n, (name, guid) in enumerate(GUIDS.items()):
        parts = []
        for m, (source, user, code, start, end) in enumerate(selections):
            if source != name:
                continue
            parts.append(f'<PlainTextSelection guid="{{7F8091A2-B3C4-45D6-E7F8-{n:06d}{m:06d}}}" '
                         f'startPosition="{start}" endPosition="{end}" creatingUser="{user}" '
                         f'creationDateTime="2026-03-0{n + 1}T10:00:00Z">'
                         f'<Coding guid="{{8091A2B3-C4D5-46E7-F809-{n:06d}{m:06d}}}" '
                         f'creatingUser="{user}"><CodeRef targetGUID="{{{CODES[code]}}}"/>'
                         f'</Coding></PlainTextSelection>')
        sources.append(f'<TextSource guid="{{{guid}}}" name="{name}" '
                       f'plainTextPath="internal://{guid}.txt">{"".join(parts)}</TextSource>')
    qde = (f'<?xml version="1.0" encoding="utf-8"?>'
           f'<Project xmlns="urn:QDA-XML:project:1.0" name="Pilot interviews" '
           f'origin="An invented QDA tool 4.2" xmlns:v="urn:example:vendor">'
           f'<Users><User guid="{U1}" name="Rosa Rater"/><User guid="{U2}" name="Tim T."/></Users>'
           f'<CodeBook><Codes><Code guid="{{9A2B3C4D-5E6F-4708-8192-A3B4C5D6E7F8}}" '
           f'name="Outcomes" isCodable="false">'
           f'<Code guid="{{{CODES["clip"]}}}" name="Clipping" isCodable="true">'
           f'<Description>The ratio is clipped.</Description></Code>'
           f'<Code guid="{{{CODES["div"]}}}" name="Divergence" isCodable="true"/>'
           f'<Code guid="{{{CODES["stab"]}}}" name="Stable" isCodable="true"/>'
           f'</Code></Codes></CodeBook>'
           f'<Sources>{"".join(sources)}</Sources>{vendor}</Project>')
    return qde, {f"{GUIDS[name]}.txt": text.encode() for name, text in TEXTS.items()}


@pytest.fixture
def made(db, tmp_path):
    qde, files = tool_project()
    return qdpx(tmp_path / "pilot.qdpx", qde, files)


def test_a_tools_project_becomes_items_a_draft_codebook_and_waiting_codings(made):
    study = blank()
    summary = import_qdpx(study, study.owner, made)
    assert summary["sources"] == 2 and summary["pool"]["added_to_pool"] == 2
    assert summary["codebook"]["action"] == "draft"
    codebook = Codebook.objects.get(study=study)
    draft = codebook.versions.get()
    question = draft.questions.get()
    assert (question.key, question.kind) == ("outcomes", "multiple")
    assert [o.label for o in question.options.order_by("position")] == [
        "Clipping", "Divergence", "Stable"]
    assert summary["waiting"] == 5 and not RaterCoding.objects.exists()
    items = Item.objects.filter(study=study).order_by("document__key")
    assert [i.snapshot.content["abstract"] for i in items] == [TEXTS["S1"], TEXTS["S2"]] or \
        sorted(i.snapshot.content["abstract"] for i in items) == sorted(TEXTS.values())
    assert ImportRun.objects.filter(study=study).count() == 1


def test_after_publishing_the_same_file_brings_each_users_codings_as_a_rater(made):
    study = blank()
    import_qdpx(study, study.owner, made)
    publish(Codebook.objects.get(study=study).versions.get())
    summary = import_qdpx(study, study.owner, made)
    assert summary["codebook"]["action"] == "matches"
    assert summary["pool"]["already_in_pool"] == 2 and summary["pool"]["added_to_pool"] == 0
    assert summary["raters"] == ["rosa-rater", "tim-t"]
    got = {(c.rater.name, c.item.document.title, tuple(c.value), c.evidence)
           for c in RaterCoding.objects.select_related("rater", "item__document")}
    assert got == {
        ("rosa-rater", "S1", ("clipping",), "clipped the ratio \U0001F680"),
        ("rosa-rater", "S2", ("divergence",), ""),
        ("tim-t", "S1", ("clipping", "stable"), "clipped the ratio \U0001F680"),
        ("tim-t", "S2", ("clipping",), "Nothing was clipped;"),
    }
    rater = Rater.objects.get(study=study, name="tim-t")
    assert rater.kind == Rater.Kind.OUTSIDE
    assert "Pilot interviews" in rater.provenance
    assert "An invented QDA tool 4.2" in rater.provenance
    again = import_qdpx(study, study.owner, made)
    assert again["codings"]["unchanged"] == 4 and again["codings"]["new"] == 0


def test_what_is_not_read_is_reported_and_kept_in_provenance(tmp_path, db):
    vendor = ('<Cases><Case guid="{AB2B3C4D-5E6F-4708-8192-A3B4C5D6E7F8}" name="Site A"/></Cases>'
              '<v:Layout v:zoom="2"/>')
    qde, files = tool_project(vendor=vendor)
    qde = qde.replace("</Sources>", '<PictureSource guid="{BC2B3C4D-5E6F-4708-8192-A3B4C5D6E7F8}" '
                                    'path="internal://x.png"/></Sources>')
    path = qdpx(tmp_path / "vendor.qdpx", qde, files)
    study = blank()
    summary = import_qdpx(study, study.owner, path)
    assert summary["unread"] == {"cases": 1, "picture sources": 1,
                                 "elements {urn:example:vendor}Layout": 1}
    publish(Codebook.objects.get(study=study).versions.get())
    import_qdpx(study, study.owner, path)
    assert "cases: 1" in Rater.objects.get(name="rosa-rater").provenance


def test_a_studys_export_imports_as_the_same_codings_and_exports_again(fresh, tmp_path):  # noqa: F811
    coded(fresh)
    first = tmp_path / "first.qdpx"
    build_qdpx(fresh, first)
    other = blank("Second study")
    summary = import_qdpx(other, other.owner, first)
    assert summary["codebook"]["action"] == "draft"
    publish(Codebook.objects.get(study=other).versions.get())
    summary = import_qdpx(other, other.owner, first)
    assert summary["without_code"] == 0 and summary["waiting"] == 0
    assert summary["raters"] == ["adjudicated", "coder_1", "coder_2"]
    second = tmp_path / "second.qdpx"
    build_qdpx(other, second)
    assert len(codings_of(first)) == 16 and codings_of(first) == codings_of(second)
    root, _ = project(second)
    assert schema().validate(root.getroottree())


def codings_of(path):
    """{(user, source name, code name, start, end, note)} of a project."""
    root, _ = project(path)
    users = {u.get("guid"): u.get("name") for u in root.iterfind(".//q:User", NS)}
    codes = {c.get("guid"): c.get("name") for c in root.iterfind(".//q:Code", NS)}
    notes = {n.get("guid"): n.findtext("q:PlainTextContent", namespaces=NS)
             for n in root.iterfind("q:Notes/q:Note", NS)}
    found = set()
    for source in root.iterfind(".//q:TextSource", NS):
        for selection in source.iterfind("q:PlainTextSelection", NS):
            for coding in selection.iterfind("q:Coding", NS):
                ref = coding.find("q:NoteRef", NS)
                found.add((users[coding.get("creatingUser")], source.get("name"),
                           codes[coding.find("q:CodeRef", NS).get("targetGUID")],
                           selection.get("startPosition"), selection.get("endPosition"),
                           notes.get(ref.get("targetGUID")) if ref is not None else None))
    return found


# --- refused, nothing stored ---------------------------------------------------------

def refused(path, match):
    study = blank()
    with pytest.raises(QdpxImportError, match=match):
        import_qdpx(study, study.owner, path)
    assert not Item.objects.filter(study=study).exists()
    assert not Codebook.objects.filter(study=study).exists()
    assert not Rater.objects.filter(study=study).exists()
    assert not ImportRun.objects.filter(study=study).exists()


def test_a_selection_outside_its_text_is_refused_with_its_line(tmp_path, db):
    qde, files = tool_project([("S1", U1, "clip", 40, 400)])
    refused(qdpx(tmp_path / "far.qdpx", qde, files),
            r"project.qde line 1: the selection 40–400 of source 'S1' lies outside its text "
            r"of 57 characters")


def test_positions_count_code_points_not_bytes_or_utf16_units(tmp_path, db):
    # The text of S1 is 57 code points and 58 UTF-16 units.
    assert len(TEXTS["S1"]) == 57 and len(TEXTS["S1"].encode("utf-16-le")) == 2 * 58
    qde, files = tool_project([("S1", U1, "clip", 0, 58)])
    refused(qdpx(tmp_path / "units.qdpx", qde, files), "lies outside its text of 57")


@pytest.mark.parametrize("name", ["../evil.txt", "/etc/passwd", "sources/..\\x.txt",
                                  "sources/../../x.txt"])
def test_an_entry_climbing_out_of_the_archive_is_refused(tmp_path, db, name):
    qde, files = tool_project()
    refused(qdpx(tmp_path / "climb.qdpx", qde, files, extra=[(name, b"x")]),
            "may not be absolute, climb out")


def test_entities_and_a_dtd_are_refused(tmp_path, db):
    laughs = ('<?xml version="1.0"?><!DOCTYPE Project [<!ENTITY a "aaaaaaaaaa">'
              '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
              '<Project xmlns="urn:QDA-XML:project:1.0" name="&b;"/>')
    refused(qdpx(tmp_path / "laughs.qdpx", laughs), "refused hostile XML")


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path, db):
    qde, files = tool_project()
    path = tmp_path / "bomb.qdpx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("project.qde", qde)
        for name, body in files.items():
            archive.writestr(f"sources/{name}", body)
        archive.writestr("sources/bomb.txt", b"\0" * (64 << 20))
    refused(path, "sources/bomb.txt: .* over the .* limit|inflates")


def test_not_a_zip_no_project_and_a_missing_text_are_refused(tmp_path, db):
    (tmp_path / "plain.qdpx").write_bytes(b"<Project/>")
    refused(tmp_path / "plain.qdpx", "not a .qdpx")
    refused(_zip_without_project(tmp_path), "no project.qde")
    qde, files = tool_project()
    files.pop(f"{GUIDS['S2']}.txt")
    refused(qdpx(tmp_path / "lost.qdpx", qde, files), "no such entry")


def _zip_without_project(tmp_path):
    path = tmp_path / "noproject.qdpx"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("sources/a.txt", "text")
    return path


def test_a_text_that_is_not_utf8_is_refused_naming_its_entry(tmp_path, db):
    qde, files = tool_project()
    files[f"{GUIDS['S1']}.txt"] = "caf\u00e9".encode("latin-1")
    refused(qdpx(tmp_path / "latin.qdpx", qde, files),
            f"sources/{GUIDS['S1']}.txt: not UTF-8")


def test_broken_xml_is_refused_with_its_line(tmp_path, db):
    qde, files = tool_project()
    refused(qdpx(tmp_path / "broken.qdpx", qde.replace("</Sources>", "</Sourcez>"), files),
            r"project.qde line 1 column \d+: malformed XML")


def test_inflating_a_short_header_is_stopped_at_the_limit(tmp_path, db, monkeypatch):
    """An entry whose header understates its size is stopped as it inflates."""
    from ingest.sources import qdpx as reader

    monkeypatch.setattr(reader, "MAX_PROJECT_BYTES", 2000)
    qde, files = tool_project()
    refused(qdpx(tmp_path / "big.qdpx", qde + " " * 3000, files), "inflates past 2,000 bytes")


# --- the doors: API, page, command ---------------------------------------------------

def test_the_api_exports_a_project_an_owner_downloads_and_imports_elsewhere(
        fresh, tmp_path, client_for, stored_files, django_capture_on_commit_callbacks):  # noqa: F811
    coded(fresh)
    client = client_for(fresh.people["owner"])
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(f"/api/studies/{fresh.slug}/exports/qdpx/", {"scope": "study"},
                              content_type="application/json")
    assert started.status_code == 202, started.content
    from workbench.models import Job

    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == "done", job.error
    assert job.result["filename"].endswith(".qdpx") and job.result["sources"] == 3
    download = client.get(job.result["download"])
    assert download.status_code == 200
    path = tmp_path / "downloaded.qdpx"
    path.write_bytes(b"".join(download.streaming_content))
    root, _ = project(path)
    assert schema().validate(root.getroottree())
    other = blank("API study")
    factories.member(other, fresh.people["owner"], Role.OWNER)
    with open(path, "rb") as upload, django_capture_on_commit_callbacks(execute=True):
        imported = client.post(f"/api/studies/{other.slug}/qdpx-imports/", {"file": upload})
    assert imported.status_code == 202, imported.content
    job = Job.objects.get(pk=imported.json()["id"])
    assert job.status == "done", job.error
    assert job.result["counts"]["added_to_pool"] == 3
    assert job.result["codebook"]["action"] == "draft"


def test_names_are_for_owners_only_over_the_api(fresh, client_for):  # noqa: F811
    client = client_for(fresh.people["ada"])
    refused = client.post(f"/api/studies/{fresh.slug}/exports/qdpx/", {"include_names": True},
                          content_type="application/json")
    assert refused.status_code == 400 and "include_names" in refused.json()


def test_a_refused_project_fails_its_job_naming_where(db, tmp_path, client_for, stored_files,
                                                      django_capture_on_commit_callbacks):
    study = blank("Refusing study")
    qde, files = tool_project([("S1", U1, "clip", 40, 400)])
    path = qdpx(tmp_path / "far.qdpx", qde, files)
    client = client_for(study.owner)
    with open(path, "rb") as upload, django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/studies/{study.slug}/raters/",
                               {"action": "qdpx", "file": upload})
    assert response.status_code == 302
    from workbench.models import Job, JobEvent

    job = Job.objects.get(kind="import_qdpx")
    assert job.status == "failed" and "lies outside its text" in job.error
    logged = JobEvent.objects.filter(job=job).values_list("location", flat=True)
    assert "project.qde line 1" in list(logged)
    assert not Item.objects.filter(study=study).exists()


def test_the_command_exports_and_imports(fresh, tmp_path, capsys):  # noqa: F811
    from django.core.management import call_command

    coded(fresh)
    out = tmp_path / "cmd.qdpx"
    call_command("qdpx", "export", fresh.slug, "--out", str(out), "--scope", "sample")
    assert "Wrote" in capsys.readouterr().out
    other = blank("Command study")
    call_command("qdpx", "import", other.slug, str(out))
    said = capsys.readouterr().out
    assert "Added to the pool: 3" in said and "is a draft" in said
    publish(Codebook.objects.get(study=other).versions.get())
    call_command("qdpx", "import", other.slug, str(out))
    assert "Raters: adjudicated, coder_1, coder_2." in capsys.readouterr().out


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_export_and_import_jobs_run_on_the_worker(celery_worker, client_for, tmp_path):
    from tests.conftest import wait_for_job
    from workbench.models import Job

    qde, files = tool_project()
    path = qdpx(tmp_path / "pilot.qdpx", qde, files)
    study = blank("Worker study")
    client = client_for(study.owner)
    with open(path, "rb") as upload:
        response = client.post(f"/api/studies/{study.slug}/qdpx-imports/", {"file": upload})
    job = wait_for_job(Job.objects.get(pk=response.json()["id"]))
    assert job.status == "done", job.error
    assert job.result["pool"]["added_to_pool"] == 2
    response = client.post(f"/api/studies/{study.slug}/exports/qdpx/", {},
                           content_type="application/json")
    job = wait_for_job(Job.objects.get(pk=response.json()["id"]))
    assert job.status == "done", job.error
    assert job.result["sources"] == 2


def test_a_coder_who_also_adjudicates_gets_a_blinded_project_and_informed_codings(
        fresh, tmp_path, client_for, stored_files, django_capture_on_commit_callbacks):  # noqa: F811
    """A .qdpx is the whole study's codings: for a coder with a second role it is read like
    any export (rule 8: their later revisions are informed), and blinded like their coding
    page (rule 2), whatever the second role."""
    from coding.actions.submit import submit
    from coding.labeling import queue
    from coding.models import Coding, OthersWorkRead
    from workbench.models import Job

    coded(fresh)
    cora = fresh.people["cora"]
    factories.member(fresh, cora, Role.ADJUDICATOR)
    fresh.blinded_fields = ["abstract"]
    fresh.adjudicators_see_blinded = True  # not for one who codes
    fresh.save()
    client = client_for(cora)
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(f"/api/studies/{fresh.slug}/exports/qdpx/", {},
                              content_type="application/json")
    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == "done", job.error
    assert OthersWorkRead.objects.filter(coder=cora, kind="export", item=None).exists()
    path = tmp_path / "cora.qdpx"
    path.write_bytes(b"".join(client.get(job.result["download"]).streaming_content))
    with zipfile.ZipFile(path) as archive:
        texts = " ".join(archive.read(n).decode() for n in archive.namelist())
    assert "group-relative" not in texts and "invented abstract" not in texts.lower()
    third = fresh.papers[2]
    coding = submit(queue.assign(third, cora), {"label": "analysis", "size_b": 1,
                                                "failures": ["none"], "code_released": "no"})
    assert Coding.objects.get(pk=coding.pk).phase != "independent"


# --- other tools' shapes --------------------------------------------------------------

FLAT = """<?xml version="1.0" encoding="UTF-8"?>
<Project xmlns="urn:QDA-XML:project:1.0" name="Flat codes" origin="Another invented tool">
 <Users><User guid="a1b2c3d4-0000-4000-8000-000000000001" name="Ines"/>
  <User guid="a1b2c3d4-0000-4000-8000-000000000002" name="Jon"/></Users>
 <CodeBook><Codes>
  <Code guid="c0de0000-0000-4000-8000-000000000001" name="Reward hacking" isCodable="true"/>
  <Code guid="c0de0000-0000-4000-8000-000000000002" name="Verifier" isCodable="true"/>
 </Codes></CodeBook>
 <Sources>
  <TextSource guid="50000000-0000-4000-8000-000000000001" name="Thread about verifiers">
   <PlainTextContent>The verifier was gamed \U0001F643 twice before the fix.</PlainTextContent>
   <PlainTextSelection guid="5e100000-0000-4000-8000-000000000001" startPosition="4"
     endPosition="12" creatingUser="a1b2c3d4-0000-4000-8000-000000000001"
     creationDateTime="2026-02-01T09:30:00+02:00">
    <Coding guid="c1000000-0000-4000-8000-000000000001"
      creatingUser="a1b2c3d4-0000-4000-8000-000000000001">
     <CodeRef targetGUID="c0de0000-0000-4000-8000-000000000002"/></Coding>
   </PlainTextSelection>
   <Coding guid="c1000000-0000-4000-8000-000000000002"
     creatingUser="a1b2c3d4-0000-4000-8000-000000000002">
    <CodeRef targetGUID="c0de0000-0000-4000-8000-000000000001"/></Coding>
   <NoteRef targetGUID="4e000000-0000-4000-8000-000000000001"/>
  </TextSource>
 </Sources>
 <Notes><Note guid="4e000000-0000-4000-8000-000000000001" name="memo">
  <PlainTextContent>An invented memo.</PlainTextContent></Note></Notes>
 <Sets><Set guid="5e700000-0000-4000-8000-000000000001" name="Pilot">
  <MemberSource targetGUID="50000000-0000-4000-8000-000000000001"/></Set></Sets>
</Project>"""


def test_flat_codes_inline_texts_and_codings_of_a_whole_source(tmp_path, db):
    """Childless top-level codes become the options of one question; a text inline in the
    project, a coding directly on a source (the whole text) and times with an offset are
    read; a selection's evidence counts code points past a character outside the BMP."""
    path = qdpx(tmp_path / "flat.qdpx", FLAT)
    study = blank()
    summary = import_qdpx(study, study.owner, path)
    question = Codebook.objects.get(study=study).versions.get().questions.get()
    assert question.key == "codes" and [o.value for o in question.options.all()] == [
        "reward_hacking", "verifier"]
    publish(Codebook.objects.get(study=study).versions.get())
    summary = import_qdpx(study, study.owner, path)
    assert summary["raters"] == ["ines", "jon"]
    got = {c.rater.name: (c.value, c.evidence, c.coded_at.isoformat() if c.coded_at else None)
           for c in RaterCoding.objects.select_related("rater")}
    assert got == {"ines": (["verifier"], "verifier", "2026-02-01T07:30:00+00:00"),
                   "jon": (["reward_hacking"], "", None)}
    item = Item.objects.get(study=study)
    assert item.snapshot.content["title"] == "Thread about verifiers"
    assert item.snapshot.content["abstract"].startswith("The verifier was gamed \U0001F643")

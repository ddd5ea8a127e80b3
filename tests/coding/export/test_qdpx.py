"""A coded study as a REFI-QDA project (.qdpx, issue 41): a study made from nothing (a codebook
with a condition, a special answer, free text, several choices), two coders, an adjudicator;
the project validates against the REFI-QDA schema, positions are code points, the same data
gives the same bytes, blinded fields never reach a reader who may not see them."""

import os
import zipfile
from pathlib import Path

import pytest

from coding.actions.submit import submit
from coding.adjudication.decisions import decide
from coding.export.qdpx import build_qdpx, source_text
from coding.labeling import queue
from coding.models import Role
from ingest.models import Document
from tests import factories

# The REFI-QDA project schema is not the project's to copy: it is read where the workplace
# keeps it, beside the checkout (../shared) or at /work/shared, or where REFI_QDA_SCHEMA says.
PLACES = [os.environ.get("REFI_QDA_SCHEMA", ""),
          Path(__file__).resolve().parents[3].parent / "shared/refi-qda/Project.xsd",
          "/work/shared/refi-qda/Project.xsd"]
SCHEMA = next((Path(p) for p in PLACES if p and Path(p).is_file()), Path(PLACES[1]))
NS = {"q": "urn:QDA-XML:project:1.0"}
# Text outside the Basic Multilingual Plane: each of these is one code point, two UTF-16
# units and four UTF-8 bytes, so a position counted in any of those instead is wrong.
TITLE = "Clipped \U0001F680 ratios for \U0001D4C7-shaped rewards"
ABSTRACT = "We invent \U0001F9EA a method: group-relative clipping with a verifier \U0001F50E."


def schema():
    if not SCHEMA.exists():
        pytest.fail(f"the REFI-QDA project schema is in none of {[str(p) for p in PLACES if p]}"
                    f": the export cannot be validated without it (set REFI_QDA_SCHEMA)")
    from lxml import etree

    return etree.XMLSchema(etree.parse(str(SCHEMA)))


@pytest.fixture
def fresh(db):
    return make_fresh()


def make_fresh():
    """A blank study: owner, two coders, an adjudicator, three invented papers."""
    owner, cora, cyril, ada = (factories.user(n) for n in ("olga", "cora", "cyril", "ada"))
    study = factories.study("Fresh study", owner=owner)
    factories.member(study, owner, Role.OWNER)
    factories.member(study, cora, Role.CODER)
    factories.member(study, cyril, Role.CODER)
    factories.member(study, ada, Role.ADJUDICATOR)
    codebook = factories.codebook(study)
    items = []
    for n in range(3):
        document = Document.objects.create(
            kind=Document.Kind.PAPER, source="test", key=f"2601.{n:05d}",
            title=TITLE if n == 0 else f"Invented paper {n}",
            metadata={"abstract": ABSTRACT if n == 0 else f"An invented abstract {n}.",
                      "authors": ["Ann Example"]})
        items.append(queue.add_item(study, document, codebook))
    study.people = {"owner": owner, "cora": cora, "cyril": cyril, "ada": ada}
    study.papers = items
    return study


def coded(study):
    cora, cyril = study.people["cora"], study.people["cyril"]
    first = study.papers[0]
    submit(queue.assign(first, cora), {"label": "rl_method", "scope": "general", "size_b": 7,
                                       "failures": ["entropy_collapse"],
                                       "code_released": "yes", "note": "clip \U0001F680"},
           notes="The verifier is the novelty.",
           evidence=[{"question": "label", "field": "abstract", "quote": "group-relative"},
                     {"question": "size_b", "field": "title", "quote": "\U0001D4C7-shaped"}])
    submit(queue.assign(first, cyril), {"label": "analysis", "size_b": "not_reported",
                                        "failures": ["none"], "code_released": "yes"})
    decide(first, "label", "rl_method", study.people["ada"], rationale="The abstract says so.")
    second = study.papers[1]
    submit(queue.assign(second, cora), {"label": "analysis", "size_b": 3,
                                        "failures": ["none"], "code_released": "no"})
    return study


def export(study, tmp_path, name="study.qdpx", **options):
    path = tmp_path / name
    summary = build_qdpx(study, path, **options)
    return path, summary


def project(path):
    from lxml import etree

    with zipfile.ZipFile(path) as archive:
        return etree.fromstring(archive.read("project.qde")), archive.namelist()


def test_the_project_validates_against_the_refi_qda_schema(fresh, tmp_path):
    path, summary = export(coded(fresh), tmp_path)
    root, names = project(path)
    checker = schema()
    assert checker.validate(root.getroottree()), checker.error_log
    assert summary["sources"] == 3
    assert sorted(n for n in names if n.startswith("sources/")) == sorted(
        f"sources/{s.get('guid')}.txt" for s in root.iterfind(".//q:TextSource", NS))


def test_an_empty_study_validates_too(fresh, tmp_path):
    path, _ = export(fresh, tmp_path)
    root, _ = project(path)
    assert schema().validate(root.getroottree())


def test_positions_are_code_points_in_the_source_text(fresh, tmp_path):
    path, _ = export(coded(fresh), tmp_path)
    root, _ = project(path)
    users = {u.get("guid"): u.get("name") for u in root.iterfind(".//q:User", NS)}
    with zipfile.ZipFile(path) as archive:
        for source in root.iterfind(".//q:TextSource", NS):
            body = archive.read(f"sources/{source.get('guid')}.txt").decode("utf-8")
            for selection in source.iterfind("q:PlainTextSelection", NS):
                start, end = int(selection.get("startPosition")), int(selection.get("endPosition"))
                assert 0 <= start <= end <= len(body)
                quoted = body[start:end]
                who = users[selection.get("creatingUser")]
                if source.get("name") != TITLE:
                    assert (start, end) == (0, len(body))  # nothing quoted: the whole text
                elif who == "coder_1" and selection.get("name") == "label":
                    assert quoted == "group-relative"
                elif who == "coder_1" and selection.get("name") == "size_b":
                    assert quoted == "\U0001D4C7-shaped"
    assert source_text({"title": TITLE, "abstract": ABSTRACT})[0] == f"{TITLE}\n\n{ABSTRACT}"


def test_each_answer_is_a_coding_of_its_code_by_its_user(fresh, tmp_path):
    path, _ = export(coded(fresh), tmp_path)
    root, _ = project(path)
    users = {u.get("guid"): u.get("name") for u in root.iterfind(".//q:User", NS)}
    codes = {}
    for question in root.iterfind("q:CodeBook/q:Codes/q:Code", NS):
        key = question.findtext("q:Description", namespaces=NS).split("\n")[0][5:]
        codes[question.get("guid")] = (key, None)
        for option in question.iterfind("q:Code", NS):
            codes[option.get("guid")] = (key, option.findtext("q:Description", namespaces=NS)
                                         .split("\n")[0][7:])
    notes = {n.get("guid"): n.findtext("q:PlainTextContent", namespaces=NS)
             for n in root.iterfind("q:Notes/q:Note", NS)}
    first = root.find("q:Sources/q:TextSource", NS)
    found = set()
    for selection in first.iterfind("q:PlainTextSelection", NS):
        for coding in selection.iterfind("q:Coding", NS):
            key, value = codes[coding.find("q:CodeRef", NS).get("targetGUID")]
            if value is None:
                value = notes[coding.find("q:NoteRef", NS).get("targetGUID")]
            found.add((users[coding.get("creatingUser")], key, value))
    assert found == {
        ("coder_1", "label", "rl_method"), ("coder_1", "scope", "general"),
        ("coder_1", "size_b", "7"), ("coder_1", "failures", "entropy_collapse"),
        ("coder_1", "code_released", "yes"), ("coder_1", "note", "clip \U0001F680"),
        ("coder_2", "label", "analysis"), ("coder_2", "size_b", "not_reported"),
        ("coder_2", "failures", "none"), ("coder_2", "code_released", "yes"),
        ("adjudicated", "label", "rl_method"), ("adjudicated", "code_released", "yes"),
    }
    refs = [r.get("targetGUID") for r in first.iterfind("q:NoteRef", NS)]
    assert [notes[r] for r in refs] == ["The verifier is the novelty."]


def test_the_same_data_gives_the_same_bytes(fresh, tmp_path):
    coded(fresh)
    first, _ = export(fresh, tmp_path, "one.qdpx")
    second, _ = export(fresh, tmp_path, "two.qdpx")
    assert first.read_bytes() == second.read_bytes()


def test_pseudonyms_unless_names_are_asked_for(fresh, tmp_path):
    coded(fresh)
    root, _ = project(export(fresh, tmp_path)[0])
    named = {u.get("name") for u in root.iterfind(".//q:User", NS)}
    assert {"coder_1", "coder_2", "adjudicated"} <= named
    assert not named & {"cora", "cyril"}
    root, _ = project(export(fresh, tmp_path, "names.qdpx", names=True)[0])
    assert {"cora", "cyril"} <= {u.get("name") for u in root.iterfind(".//q:User", NS)}


def test_a_blinded_field_is_not_in_a_readers_sources(fresh, tmp_path):
    coded(fresh)
    fresh.blinded_fields = ["abstract"]
    fresh.save()
    path, _ = export(fresh, tmp_path, roles={Role.ADJUDICATOR})
    with zipfile.ZipFile(path) as archive:
        texts = [archive.read(n).decode() for n in archive.namelist()
                 if n.startswith("sources/")]
        qde = archive.read("project.qde").decode()
    assert not any("invented abstract" in t or "group-relative" in t for t in texts)
    assert "group-relative" not in qde
    root, _ = project(path)
    assert schema().validate(root.getroottree())


def test_rounds_and_the_sample_are_sets_and_scopes(fresh, tmp_path):
    coded(fresh)
    fresh.papers[2].in_reliability_sample = False
    fresh.papers[2].save()
    root, _ = project(export(fresh, tmp_path)[0])
    sets = {s.get("name"): len(s.findall("q:MemberSource", NS))
            for s in root.iterfind("q:Sets/q:Set", NS)}
    assert sets == {"Round: main": 3, "Reliability sample": 2}
    root, _ = project(export(fresh, tmp_path, "sample.qdpx", scope="sample")[0])
    assert len(root.findall("q:Sources/q:TextSource", NS)) == 2


def test_guids_are_uuid5_of_the_study_and_the_row():
    import uuid

    from coding.export.qdpx import GUIDS, guid

    for parts in [(1, "source", 7), (12, "coding", 99, "label", 0),
                  (3, "code", 4, "k", "v\u00e9")]:
        assert guid(*parts) == str(uuid.uuid5(GUIDS, "\x1f".join(map(str, parts))))


@pytest.mark.django_db(transaction=True)
def test_reading_ahead_on_threads_writes_the_same_bytes_as_reading_in_turn(tmp_path,
                                                                           monkeypatch):
    """On PostgreSQL outside a transaction the items and their codings are read on threads
    of their own (coding.export.rows.read_ahead); inside one, in turn. Same bytes."""
    from django.db import transaction

    from coding.export import qdpx as module

    monkeypatch.setattr(module, "BATCH", 2)  # several batches, so the pipeline turns
    study = coded(make_fresh())
    ahead, _ = export(study, tmp_path, "ahead.qdpx")
    with transaction.atomic():
        in_turn, _ = export(study, tmp_path, "in-turn.qdpx")
    assert ahead.read_bytes() == in_turn.read_bytes()

"""Quoted evidence and coders' notes reach the export (issue 35, finding 3): one row per
quote with where it stands in the item's field, one per note, in every format, described
in the data dictionary, and withheld where the field they quote is."""

import pytest

from coding.actions.submit import submit
from coding.dataset import data_dictionary, load
from coding.export.bundle import FORMATS, build_bundle
from coding.labeling import queue
from coding.models import Assignment, Role
from tests import factories

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}


@pytest.fixture
def quoted(alpha, people):
    """Paper 0: cora quotes its title and abstract and writes a note, then revises with
    one quote; cyril codes it without evidence."""
    paper = alpha.papers[0]
    held = queue.assign(paper, people["cora"])
    submit(held, ANSWERS, notes="Read the abstract twice.", evidence=[
        {"question": "label", "field": "title", "quote": "paper number"},
        {"question": "size_b", "field": "abstract", "quote": "invented abstract"}])
    submit(Assignment.objects.get(pk=held.pk), {**ANSWERS, "size_b": 8},
           evidence=[{"question": "size_b", "field": "abstract", "quote": "abstract for"}])
    submit(queue.assign(paper, people["cyril"]), ANSWERS)
    return alpha


def bundle(study, tmp_path, fmt, **options):
    path = tmp_path / f"evidence-{fmt}.zip"
    build_bundle(study, path, shapes=["long", "evidence"], fmt=fmt, **options)
    return path


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_quote_is_a_row_of_the_evidence_table_with_its_offsets(quoted, tmp_path, fmt):
    evidence = load(bundle(quoted, tmp_path, fmt))["evidence"]
    rows = evidence[["coder", "revision", "question", "field", "quote"]].values.tolist()
    assert rows == [["coder_1", 1, "label", "title", "paper number"],
                    ["coder_1", 1, "size_b", "abstract", "invented abstract"],
                    ["coder_1", 2, "size_b", "abstract", "abstract for"]]
    title = quoted.papers[0].document.title
    first = evidence.iloc[0]
    assert title[first["start"]:first["end"]] == "paper number"
    assert set(evidence["phase"]) == {"independent"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_note_is_a_row_of_the_notes_table(quoted, tmp_path, fmt):
    notes = load(bundle(quoted, tmp_path, fmt))["notes"]
    assert notes[["coder", "revision", "note"]].values.tolist() == [
        ["coder_1", 1, "Read the abstract twice."]]


def test_the_data_dictionary_describes_the_evidence_and_notes_columns(quoted, tmp_path):
    package = data_dictionary(bundle(quoted, tmp_path, "csv"))
    described = {r["name"]: [f["name"] for f in r["schema"]["fields"]]
                 for r in package["resources"]}
    assert described["evidence"] == ["item_id", "document_key", "coder", "round", "revision",
                                     "phase", "submitted_at", "question", "field", "start",
                                     "end", "quote"]
    assert described["notes"][-1] == "note"


def test_a_quote_from_a_field_withheld_from_the_reader_is_left_out(quoted, people, tmp_path):
    """An adjudicator does not receive blinded fields (unless the study says so), nor the
    quotes taken from one before it was blinded."""
    quoted.blinded_fields = ["abstract"]
    quoted.save()
    evidence = load(bundle(quoted, tmp_path, "csv", roles={Role.ADJUDICATOR}))["evidence"]
    assert evidence["field"].tolist() == ["title"]
    owners = load(bundle(quoted, tmp_path, "jsonl"))["evidence"]
    assert owners["field"].tolist() == ["title", "abstract", "abstract"]


def test_a_study_without_evidence_exports_empty_tables_with_their_columns(alpha, people,
                                                                            tmp_path):
    factories.code(alpha.papers[0], people["cora"])
    tables = load(bundle(alpha, tmp_path, "parquet"))
    assert len(tables["evidence"]) == 0 and "quote" in tables["evidence"].columns
    assert len(tables["notes"]) == 0

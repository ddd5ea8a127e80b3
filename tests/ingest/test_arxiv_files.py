"""Saved arXiv API (Atom) and OAI-PMH responses, and hostile or broken XML."""

import json
from datetime import UTC, datetime
from io import StringIO

import pytest

from ingest.imports import run_import
from ingest.models import Document
from ingest.sources import arxiv_atom, oai_pmh

from .conftest import FIXTURES

ARXIV = FIXTURES / "arxiv"


def import_file(fmt, name, **params):
    errors = []
    counts = run_import({"format": fmt, "path": str(ARXIV / name), **params},
                        log_error=errors.append)
    return counts, errors


def test_an_api_response_becomes_a_paper_keyed_without_its_version(db):
    counts, errors = import_file("arxiv_atom_file", "atom_one.xml")
    assert (counts["added"], errors) == (1, [])
    paper = Document.objects.get(source="arxiv", key="2507.99917")
    assert paper.title == "Sparse Lantern Probes for Tracing Gradient Echoes in Toy Transformers"
    assert paper.published == datetime(2025, 7, 30, 8, 41, 27, tzinfo=UTC)
    assert paper.updated == datetime(2025, 9, 14, 16, 2, 11, tzinfo=UTC)
    assert paper.metadata["authors"] == ["Ada Q. Placeholder", "Bo Testwell"]
    assert paper.metadata["affiliations"] == ["Example Institute of Technology"]
    assert paper.metadata["categories"] == ["cs.LG", "stat.ML"]
    assert paper.metadata["versions"] == [
        {"version": "v1", "created": "2025-07-30T08:41:27+00:00"},
        {"version": "v2", "created": "2025-09-14T16:02:11+00:00"}]
    assert paper.metadata["comments"] == "14 pages, 5 figures; v2 fixes a typo in Eq. 3"
    assert paper.metadata["doi"] == "10.5555/jir.2025.0042"


def test_api_abstracts_are_stored_as_received(db):
    import_file("arxiv_atom_file", "atom_one.xml")
    abstract = Document.objects.get().metadata["abstract"]
    assert abstract.startswith("  We introduce lantern probes")
    assert "(see Fig. 2 & Table 1)" in abstract and "$\\alpha < 0.5$" in abstract


def test_the_legacy_api_output_is_read_too(db):
    import_file("arxiv_atom_file", "atom_legacy.xml")
    paper = Document.objects.get(key="hep-th/9901991")
    assert paper.published == datetime(1999, 1, 19, 23, tzinfo=UTC)
    assert paper.metadata["categories"] == ["hep-th"]
    assert paper.metadata["versions"] == [{"version": "v1", "created": "1999-01-19T23:00:00+00:00"}]


@pytest.mark.parametrize("name", ["atom_error.xml", "atom_legacy_error.xml"])
def test_an_api_error_entry_is_never_stored_as_a_paper_and_fails_the_import(db, name):
    from ingest.load import SourceFailed

    errors = []
    with pytest.raises(SourceFailed) as failed:
        run_import({"format": "arxiv_atom_file", "path": str(ARXIV / name)},
                   log_error=errors.append)
    assert (failed.value.counts["added"], failed.value.counts["failed"]) == (0, 1)
    assert errors[0].reason == "arXiv API error: incorrect id format for not-an-id"
    assert "incorrect id format for not-an-id" in str(failed.value)  # arXiv's own words
    assert not Document.objects.exists()


def test_bad_entries_are_recorded_by_entry_and_the_rest_imported(db):
    counts, errors = import_file("arxiv_atom_file", "atom_bad_entries.xml")
    assert (counts["added"], counts["failed"]) == (1, 3)
    assert [(e.location.rsplit(" ", 2)[-2:], e.reason) for e in errors] == [
        (["entry", "2"], "bad date in published: 'Blursday'"),
        (["entry", "3"], "missing field 'title'"),
        (["entry", "4"], "entry id 'http://example.org/not-an-abstract' is not an arXiv abstract URL"),
    ]


def test_an_empty_result_imports_nothing_and_is_no_error(db):
    counts, errors = import_file("arxiv_atom_file", "atom_empty.xml")
    assert (counts["read"], errors) == (0, [])


@pytest.mark.parametrize("fmt, name, where", [
    ("arxiv_atom_file", "atom_page2_truncated.xml", "line 16 column 34"),
    ("arxiv_oai_file", "oai_raw_page1_truncated.xml", "line 29 column 30"),
])
def test_truncated_xml_is_recorded_with_its_line(db, fmt, name, where):
    counts, errors = import_file(fmt, name)
    assert counts["failed"] == 1
    assert errors[0].location == f"{ARXIV / name} {where}"
    assert errors[0].reason == "malformed XML: no element found"


@pytest.mark.parametrize("name", ["billion_laughs.xml", "external_entity.xml"])
def test_entity_expansion_and_external_entities_are_refused(db, name):
    counts, errors = import_file("arxiv_atom_file", name)
    assert (counts["added"], counts["failed"]) == (0, 1)
    assert errors[0].reason.startswith("refused hostile XML (DTDForbidden)")
    assert not Document.objects.exists()


def test_the_parser_refuses_entities_even_without_the_dtd_check():
    """Defence in depth: defusedxml refuses entity declarations on its own as well."""
    from defusedxml import EntitiesForbidden
    from defusedxml.ElementTree import fromstring

    with pytest.raises(EntitiesForbidden):
        fromstring((ARXIV / "billion_laughs.xml").read_bytes())


def test_latin1_bytes_in_a_utf8_document_are_a_recorded_error(db):
    counts, errors = import_file("arxiv_oai_file", "oai_latin1.xml")
    assert errors[0].location.endswith("oai_latin1.xml line 26 column 21")
    assert errors[0].reason == "malformed XML: not well-formed (invalid token)"


def test_an_unknown_xml_encoding_is_a_recorded_error(db):
    counts, errors = import_file("arxiv_oai_file", "oai_unknown_encoding.xml")
    assert counts["failed"] == 1
    assert "unknown encoding: x-klingon-7" in errors[0].reason


def test_an_arxivraw_record_keeps_every_version(db):
    counts, _ = import_file("arxiv_oai_file", "oai_raw_page1.xml")
    paper = Document.objects.get(key="2507.99917")
    assert paper.metadata["versions"] == [
        {"version": "v1", "created": "2025-07-30T08:41:27+00:00"},
        {"version": "v2", "created": "2025-09-14T16:02:11+00:00"}]
    assert paper.metadata["authors"] == ["Ada Q. Placeholder", "Bo Testwell"]
    assert paper.metadata["affiliations"] == ["Example Institute of Technology"]
    assert paper.metadata["license"] == "http://creativecommons.org/licenses/by/4.0/"


def test_an_arxiv_format_record_has_structured_authors(db):
    import_file("arxiv_oai_file", "oai_arxiv_record.xml")
    paper = Document.objects.get(key="2507.99917")
    assert paper.metadata["authors"] == ["Ada Q. Placeholder", "Bo Testwell"]
    assert paper.published == datetime(2025, 7, 30, tzinfo=UTC)
    assert paper.updated == datetime(2025, 9, 14, tzinfo=UTC)


def test_a_deleted_oai_record_marks_a_stored_paper_deleted_and_adds_nothing(db):
    counts, _ = import_file("arxiv_oai_file", "oai_raw_page1.xml")
    assert (counts["added"], counts["deleted"], counts["deletions"], counts["unchanged"]) == (
        1, 0, 1, 0)
    Document.objects.create(kind="paper", source="arxiv", key="2507.99918", title="Invented")
    counts, _ = import_file("arxiv_oai_file", "oai_raw_page1.xml")
    assert (counts["added"], counts["deleted"], counts["deletions"], counts["unchanged"]) == (
        0, 1, 1, 1)
    assert Document.objects.get(key="2507.99918").metadata == {
        "deleted": True, "deleted_on": "2025-09-15"}


def test_no_records_match_is_an_empty_result_not_an_error(db):
    counts, errors = import_file("arxiv_oai_file", "oai_no_records.xml")
    assert (counts["read"], errors) == (0, [])


def test_another_oai_error_in_a_saved_file_fails_the_import(db):
    from ingest.load import SourceFailed

    with pytest.raises(SourceFailed, match="OAI-PMH error badResumptionToken"):
        import_file("arxiv_oai_file", "oai_bad_token.xml")


def test_the_command_exits_non_zero_on_an_arxiv_error_feed(db):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="arXiv API error: incorrect id format for not-an-id"):
        call_command("ingest_arxiv", "atom", str(ARXIV / "atom_error.xml"), stdout=StringIO(),
                     stderr=StringIO())


def test_the_same_paper_from_the_api_and_the_snapshot_is_one_document(db):
    import_file("arxiv_atom_file", "atom_one.xml")
    import_file("arxiv_snapshot_file", "snapshot.jsonl")
    assert Document.objects.filter(key="2507.99917").count() == 1


def test_an_oai_page_gives_its_records_and_its_resumption_token():
    info = oai_pmh.OaiInfo()
    with open(ARXIV / "oai_raw_page1.xml", "rb") as stream:
        items = list(oai_pmh.read_response(stream, "page", info))
    assert len(items) == 2
    assert info.resumption_token.endswith("skip%3D2500")


def test_feed_totals_are_read_for_paging():
    info = arxiv_atom.FeedInfo()
    with open(ARXIV / "atom_page1.xml", "rb") as stream:
        list(arxiv_atom.read_feed(stream, "page", info))
    assert (info.total, info.start, info.items_per_page, info.entries) == (3, 0, 2, 2)


@pytest.mark.parametrize("fmt, name", [
    ("arxiv_atom_file", "atom_one.xml"), ("arxiv_atom_file", "atom_legacy.xml"),
    ("arxiv_oai_file", "oai_raw_page1.xml"), ("arxiv_oai_file", "oai_arxiv_record.xml"),
    ("arxiv_snapshot_file", "snapshot.jsonl"),
])
def test_every_arxiv_format_gives_papers_the_same_metadata_keys(db, fmt, name):
    from ingest.records import PAPER_METADATA_KEYS

    import_file(fmt, name)
    for paper in Document.objects.all():
        assert sorted(paper.metadata) == sorted(PAPER_METADATA_KEYS)


# --- authors, one record each ---------------------------------------------------------------

def test_atom_authors_keep_their_own_affiliations_so_one_without_any_says_so(db):
    import_file("arxiv_atom_file", "atom_one.xml")
    records = Document.objects.get().metadata["author_records"]
    assert [(a["name"], a["affiliations"]) for a in records] == [
        ("Ada Q. Placeholder", ["Example Institute of Technology"]), ("Bo Testwell", [])]
    assert records[0]["keyname"] is None  # the API gives a whole name, not its parts


def test_oai_arxiv_authors_keep_keyname_forenames_suffix_affiliations_and_orcid(db):
    import_file("arxiv_oai_file", "oai_arxiv_authors.xml")
    paper = Document.objects.get()
    assert paper.metadata["author_records"] == [
        {"name": "Ada Q. Placeholder", "keyname": "Placeholder", "forenames": "Ada Q.",
         "suffix": None, "affiliations": ["Example Institute of Technology",
                                          "Imaginary Research Lab"], "orcid": None},
        {"name": "Bo Testwell Jr", "keyname": "Testwell", "forenames": "Bo", "suffix": "Jr",
         "affiliations": [], "orcid": "0000-0002-5555-0042"},
        {"name": "Chloé Mockford", "keyname": "Mockford", "forenames": "Chloé", "suffix": None,
         "affiliations": [], "orcid": None}]
    # The display names are derived from the parts; the flat lists stay for old readers.
    assert paper.metadata["authors"] == ["Ada Q. Placeholder", "Bo Testwell Jr", "Chloé Mockford"]
    assert paper.metadata["affiliations"] == ["Example Institute of Technology",
                                              "Imaginary Research Lab"]


def test_arxivraw_author_lines_give_each_author_the_affiliation_after_their_name(db):
    import_file("arxiv_oai_file", "oai_raw_page1.xml")
    paper = Document.objects.get(key="2507.99917")
    assert [(a["name"], a["affiliations"]) for a in paper.metadata["author_records"]] == [
        ("Ada Q. Placeholder", ["Example Institute of Technology"]), ("Bo Testwell", [])]


def test_snapshot_authors_parsed_keep_every_affiliation_per_author(db, tmp_path):
    line = json.loads((ARXIV / "snapshot.jsonl").read_text().splitlines()[0])
    line["authors_parsed"] = [["Placeholder", "Ada Q.", "", "Example Institute", "Imaginary Lab"],
                              ["Testwell", "Bo", "III"], ["Mockford", "Chloé", ""]]
    (tmp_path / "one.jsonl").write_text(json.dumps(line) + "\n")
    run_import({"format": "arxiv_snapshot_file", "path": str(tmp_path / "one.jsonl")})
    records = Document.objects.get().metadata["author_records"]
    assert [(a["name"], a["suffix"], a["affiliations"]) for a in records] == [
        ("Ada Q. Placeholder", None, ["Example Institute", "Imaginary Lab"]),
        ("Bo Testwell III", "III", []), ("Chloé Mockford", None, [])]


def test_a_saved_oai_page_reports_the_resumption_token_it_ends_with(db):
    """Issue 40, finding 7: a saved page of a longer list says the list goes on."""
    warnings = []
    counts = run_import({"format": "arxiv_oai_file", "path": str(ARXIV / "oai_raw_page1.xml")},
                        log_warning=warnings.append)
    token = [w for w in warnings if "resumption token" in w.reason]
    assert len(token) == 1 and token[0].location == "oai_raw_page1.xml"
    assert "resumptionToken=" in token[0].reason
    assert counts["read"] == 2  # the note is not a record
    last = []
    run_import({"format": "arxiv_oai_file", "path": str(ARXIV / "oai_raw_page2.xml")},
               log_warning=last.append)
    assert not [w for w in last if "resumption token" in w.reason]  # the list's last page

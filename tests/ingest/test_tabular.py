"""CSV or JSON Lines with mapped columns, for sources without a parser of their own."""

import pytest

from ingest.imports import check_params, run_import
from ingest.models import Document

from .conftest import FIXTURES

TABLE = FIXTURES / "table"
CSV_MAPPING = {"source": "openreview", "key": "id", "title": "title", "url": "link",
               "published": "date", "metadata": {"abstract": "abstract", "authors": "authors"},
               "split": {"authors": ";"}}
JSONL_MAPPING = {"source": "openreview", "key": "paper_id", "title": "name", "published": "when",
                 "metadata": {"abstract": "summary", "authors": "people", "venue": "venue"}}


def import_table(fmt, name, mapping, **params):
    errors = []
    counts = run_import({"format": fmt, "path": str(TABLE / name), "mapping": mapping, **params},
                        log_error=errors.append)
    return counts, errors


def test_csv_rows_become_documents_through_the_mapping(db):
    counts, errors = import_table("csv_file", "papers.csv", CSV_MAPPING)
    assert (counts["added"], counts["failed"]) == (3, 4)
    paper = Document.objects.get(source="openreview", key="or-001")
    assert paper.title == "A Fictional Paper, With a Comma"
    assert paper.metadata == {
        "abstract": 'Line one.\nLine two with "quotes" and <script>x</script>.',
        "authors": ["Ann Example", "Bo Sample"]}
    assert paper.url == "https://example.org/or-001"


def test_bad_csv_rows_are_recorded_by_the_line_they_start_on(db):
    _, errors = import_table("csv_file", "papers.csv", CSV_MAPPING)
    assert [(e.location.rsplit(" ", 1)[-1], e.reason) for e in errors] == [
        ("5", "missing field 'title'"),
        ("6", "bad date in date: 'someday'"),
        ("7", "bytes that are not valid utf-8"),
        ("8", "2 cells where the header has 6"),
    ]


def test_a_csv_in_another_encoding_is_read_when_it_is_named(db):
    counts, _ = import_table("csv_file", "papers.csv", CSV_MAPPING, encoding="latin-1")
    assert Document.objects.get(key="or-005").title == "Latin é Paper"


def test_jsonl_rows_become_documents_through_the_mapping(db):
    counts, errors = import_table("jsonl_file", "papers.jsonl", JSONL_MAPPING)
    assert (counts["added"], counts["failed"]) == (2, 2)
    paper = Document.objects.get(key="or-101")
    assert paper.metadata["venue"] == {"name": "Imaginary Conf", "year": 2025}
    assert Document.objects.get(key="102").metadata["abstract"] is None
    assert [e.reason for e in errors] == [
        "field 'name' should be a string, got dict",
        "malformed JSON: the line ends inside a string (cut short, or a record that goes on "
        "over the next line: JSON Lines holds one whole record per line)"]


def test_reimporting_a_table_creates_nothing(db):
    import_table("csv_file", "papers.csv", CSV_MAPPING)
    counts, _ = import_table("csv_file", "papers.csv", CSV_MAPPING)
    assert (counts["added"], counts["unchanged"]) == (0, 3)


@pytest.mark.parametrize("params, message", [
    ({"mapping": {"key": "id"}}, "a mapping needs at least the 'key' and 'title' columns"),
    ({"mapping": {**CSV_MAPPING, "colour": "x"}}, "unknown mapping entries: colour"),
    ({"mapping": {**CSV_MAPPING, "kind": "video"}}, "mapping kind must be one of"),
    ({"format": "xls_file"}, "unknown format 'xls_file'"),
    ({"path": "/nowhere/papers.csv"}, "csv_file needs an existing 'path'"),
])
def test_a_mapping_or_request_that_cannot_work_is_refused_before_reading(params, message):
    request = {"format": "csv_file", "path": str(TABLE / "papers.csv"), "mapping": CSV_MAPPING,
               **params}
    with pytest.raises(ValueError, match=message):
        check_params(request)


def test_a_mapping_naming_a_column_the_file_lacks_is_refused(db):
    with pytest.raises(ValueError, match="columns summary are not in the header"):
        import_table("csv_file", "papers.csv", {**CSV_MAPPING, "metadata": {"x": "summary"}})


def test_an_unknown_encoding_name_is_refused(db):
    with pytest.raises(LookupError):
        import_table("csv_file", "papers.csv", CSV_MAPPING, encoding="x-klingon-7")


def test_a_huge_csv_line_is_skipped_and_recorded(db, tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text("id,title\nbig," + "b" * 5000 + "\nsmall,Small Title\n")
    from ingest.sources import tabular

    mapping = tabular.Mapping.from_dict({"key": "id", "title": "title"})
    with open(path, "rb") as stream:
        items = list(tabular.read_csv(stream, "huge.csv", mapping, max_line_bytes=1000))
    assert [i.reason if hasattr(i, "reason") else i.key for i in items] == ["line longer than 1,000 bytes", "small"]
    assert items[0].location == "huge.csv line 2"

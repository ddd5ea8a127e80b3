"""The files screening teams already have (issue 37): RIS from a reference manager and
ASReview-style CSV, read as papers with located errors; a label column never reaches the
documents. All records are invented here."""

import pytest

from ingest.imports import check_params, run_import
from ingest.models import Document
from ingest.records import DocumentRecord, RecordError
from ingest.sources.screening_files import read_asreview_csv, read_ris_file, record_key

RIS = """TY  - JOUR
TI  - Invented policy gradients for tiny robots
AB  - An invented abstract about rollouts.
AU  - Example, Ann
AU  - Sample, Bo
PY  - 2021
DO  - 10.9999/INVENTED.1
KW  - reward
ER  - 

TY  - JOUR
AB  - This entry forgot its title.
ER  - 

TY  - CONF
T1  - A second invented record
PY  - 2020///
UR  - https://example.org/second
ER  - 
"""


def test_ris_entries_become_papers_and_a_bad_entry_is_named_by_its_line(tmp_path):
    path = tmp_path / "library.ris"
    path.write_text(RIS, encoding="utf-8")
    found = list(read_ris_file(path))
    assert [type(f) for f in found] == [DocumentRecord, RecordError, DocumentRecord]
    first, error, second = found
    assert first.key == "doi:10.9999/invented.1" and first.kind == "paper"
    assert first.metadata["authors"] == ["Example, Ann", "Sample, Bo"]
    assert first.metadata["abstract"] == "An invented abstract about rollouts."
    assert first.published.year == 2021
    assert str(error) == f"{path} line 11: the entry has no title (TI or T1)"
    # No DOI: keyed by its title and year, as the same record in a CSV would be.
    assert second.key == record_key({"title": "A second invented record", "year": "2020"})
    assert second.url == "https://example.org/second"


@pytest.mark.parametrize("content, reason", [
    (b"", "the file is empty"),
    ("TY  - JOUR\nTI  - x\n".encode("utf-16"), "UTF-16"),
    (b"TY  - JOUR\nTI  - Never ended\n", "line 1: the entry does not end with an ER line"),
    (b"just some text\n", "line 1: the entry does not end with an ER line"),
    (b"\n\n", "no RIS entries"),
    (b"TY  - JOUR\nTI  - Bad \xff byte\nER  - \n", "line 2: the text is not UTF-8"),
])
def test_a_file_that_is_not_ris_is_one_located_error(tmp_path, content, reason):
    path = tmp_path / "odd.ris"
    path.write_bytes(content)
    found = list(read_ris_file(path))
    assert all(isinstance(f, RecordError) for f in found) and found
    assert reason in str(found[0])


def test_an_asreview_csv_keeps_its_label_out_of_the_documents(tmp_path):
    path = tmp_path / "set.csv"
    path.write_text("record_id,title,abstract,authors,year,doi,label_included\n"
                    "1,Invented verifier rewards,Abstract one.,Ann Example; Bo Sample,2022,,1\n"
                    "2,Invented soil sensors,Abstract two.,Cy Doe,2021,10.9999/SOIL,0\n"
                    "3,,No title here.,,,,\n", encoding="utf-8")
    found = list(read_asreview_csv(path))
    one, two, bad = found
    assert one.key == record_key({"title": "Invented verifier rewards", "year": "2022"})
    assert one.metadata == {"abstract": "Abstract one.", "authors": ["Ann Example", "Bo Sample"],
                            "year": "2022"}
    assert two.key == "doi:10.9999/soil" and two.published.year == 2021
    assert "label_included" not in str(one.metadata) + str(two.metadata)
    assert isinstance(bad, RecordError) and "line 4" in str(bad)


def test_a_csv_without_a_title_column_is_refused_before_reading(tmp_path):
    path = tmp_path / "set.csv"
    path.write_text("name,abstract\nx,y\n")
    with pytest.raises(ValueError, match="an ASReview CSV needs a 'title' column"):
        check_params({"format": "asreview_csv_file", "path": str(path)})


@pytest.mark.django_db
def test_both_formats_import_into_the_document_store_once(tmp_path):
    ris = tmp_path / "library.ris"
    ris.write_text(RIS, encoding="utf-8")
    table = tmp_path / "set.csv"
    table.write_text("title,abstract,doi,year\nSomething else invented,An abstract.,,2019\n"
                     "Invented policy gradients for tiny robots,Same DOI.,10.9999/invented.1,"
                     "2021\n")
    first = run_import({"format": "ris_file", "path": str(ris)})
    second = run_import({"format": "asreview_csv_file", "path": str(table)})
    assert first["added"] == 2 and first["failed"] == 1
    # The CSV's second row is the RIS file's first record (same DOI): one document.
    assert Document.objects.filter(key="doi:10.9999/invented.1").count() == 1
    assert Document.objects.filter(source="screening").count() == 3
    assert second["added"] == 1 and second["updated"] == 1

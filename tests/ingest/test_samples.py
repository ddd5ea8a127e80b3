"""The import page's sample of each file format (issue 39, finding 7) is a file the
importer takes: each one, written as it is shown, imports one document and no error."""

import pytest

from ingest.imports import FILE_FORMATS, run_import
from ingest.models import Document
from ingest.samples import SAMPLES

pytestmark = pytest.mark.django_db
SUFFIX = {"arxiv_snapshot_file": "jsonl", "arxiv_atom_file": "xml", "arxiv_oai_file": "xml",
          "github_file": "jsonl", "csv_file": "csv", "jsonl_file": "jsonl", "ris_file": "ris",
          "asreview_csv_file": "csv"}
MAPPING = {"key": "id", "title": "title", "published": "date",
           "split": {"authors": ";"}, "metadata": {"authors": "authors"}}


def test_every_file_format_has_a_sample():
    assert set(SAMPLES) == set(FILE_FORMATS)


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_each_sample_imports_one_document_without_an_error(fmt, tmp_path):
    path = tmp_path / f"sample.{SUFFIX[fmt]}"
    path.write_text(SAMPLES[fmt] + "\n", encoding="utf-8")
    params = {"format": fmt, "path": str(path), "strict": True}
    if fmt in ("csv_file", "jsonl_file"):
        params["mapping"] = MAPPING
    counts = run_import(params)
    assert (counts["read"], counts["failed"]) == (1, 0), counts
    assert Document.objects.count() == 1

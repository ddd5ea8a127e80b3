"""Records never screened stay in the export, as not_screened (issue 37)."""

from collections import Counter

from coding.export import rows
from coding.export.fields import wide_fields
from coding.labeling import queue
from coding.screening import progress
from tests.coding.screening.conftest import make_screening
from tests.coding.screening.test_ranked_queue import screen


def test_records_no_screener_read_are_exported_as_not_screened(people):
    study, relevant = make_screening(people, size=30, overlap=1)
    for _ in range(6):
        screen(study, people["cora"], relevant, retrain=False)
    progress.stop(study, people["olive"])
    codebook = study.codebooks.get()
    version = codebook.current_version()
    found = list(rows.wide(study, codebook, version))
    assert len(found) == 30  # every record, screened or not
    statuses = Counter(row["decision__status"] for row in found)
    assert statuses["not_screened"] == 24
    assert statuses["answered"] == 6
    screened = {a.item_id for a in queue.Assignment.objects.filter(study=study)}
    assert all((row["decision__status"] == "not_screened") == (row["item_id"] not in screened)
               for row in found)
    # Only the screening question has the word, and the data dictionary says what it means.
    assert {row["note__status"] for row in found} <= {"answered", "missing", "pending"}
    field = next(f for f in wide_fields(version, "decision") if f.name == "decision__status")
    assert "not_screened" in field.categories and "no screener read" in field.description
    other = next(f for f in wide_fields(version) if f.name == "decision__status")
    assert "not_screened" not in other.categories

"""A rater file that is not what it should be ends in located errors, never a crash
(issue 36, finding 6).

A Latin-1 byte, a UTF-16 file, random bytes, an 8 MB field, coded_at
2025-13-45T99:00:00Z and JSON nested 50,000 deep each ended the job "details in the server
log". Each is now an error naming the file, the line and the field; nothing is written.
"""

import json
import random

import pytest

from coding.models import RaterCoding
from coding.raters import imports
from coding.raters.imports import RaterImportError, import_file
from coding.raters.setup import add_rater
from tests import factories
from workbench import jobs
from workbench.models import Job

CODEBOOK = {"name": "Labels", "applies_to": "paper", "questions": [
    {"key": "label", "kind": "single", "text": "Main contribution?",
     "options": [{"value": "method"}, {"value": "analysis"}]}]}
HEADER = "item,rater,question,value,evidence,coded_at\n"


@pytest.fixture
def study(people):
    study = factories.study("Rater faults", owner=people["olive"])
    factories.member(study, people["olive"], people["names"]["olive"])
    codebook = factories.codebook(study, CODEBOOK)
    factories.paper_item(study, codebook, 1)
    add_rater(study, None, kind="model", name="model-a", model_version="v1")
    return study


def good_line(**extra):
    row = {"item": "2599.00001", "rater": "model-a", "question": "label", "value": "method",
           "evidence": "", "coded_at": ""}
    row.update(extra)
    return ",".join(str(row[c]) for c in ("item", "rater", "question", "value", "evidence",
                                          "coded_at")) + "\n"


CASES = {
    "latin1.csv": ((HEADER + good_line(evidence="caf\xe9")).encode("latin-1"), 2, "row",
                   "not UTF-8 text (byte 0xe9)"),
    "utf16.csv": ((HEADER + good_line()).encode("utf-16"), 1, "row", "the file is UTF-16"),
    "random.csv": (bytes(random.Random(7).randrange(128, 256) for _ in range(4000)), 1, "row",
                   "not UTF-8 text"),
    "huge.csv": ((HEADER + good_line(evidence="x" * 8_000_000)).encode(), 2, "row",
                 "line longer than 262,144 bytes"),
    "date.csv": ((HEADER + good_line(coded_at="2025-13-45T99:00:00Z")).encode(), 2, "coded_at",
                 "a date and time with a time zone"),
    "deep.jsonl": (("[" * 50_000 + "]" * 50_000 + "\n").encode(), 1, "row",
                   "malformed JSON: nested too deeply"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_bad_file_is_a_located_error_and_writes_nothing(study, tmp_path, name):
    data, line, field, words = CASES[name]
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(RaterImportError) as raised:
        import_file(study, str(path))
    [(got_line, got_field, message)] = raised.value.errors[:1]
    assert (got_line, got_field) == (line, field) and words in message, message
    assert not RaterCoding.objects.exists()


def test_the_job_names_the_file_line_and_field(study, tmp_path, people):
    path = tmp_path / "latin1.csv"
    path.write_bytes(CASES["latin1.csv"][0])
    job = imports.start_import(study, people["olive"], str(path))
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "server log" not in job.error
    [event] = job.events.filter(level="error")
    assert event.location == "latin1.csv line 2, row" and "0xe9" in event.message


def test_a_good_file_still_imports(study, tmp_path):
    path = tmp_path / "good.csv"
    path.write_bytes(("\ufeff" + HEADER + good_line()).encode())
    assert import_file(study, str(path)).new == 1
    path = tmp_path / "good.jsonl"
    path.write_text(json.dumps({"item": "2599.00001", "rater": "model-a", "question": "label",
                                "value": "analysis"}) + "\n")
    assert import_file(study, str(path)).changed == 1

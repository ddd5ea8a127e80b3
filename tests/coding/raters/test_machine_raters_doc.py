"""docs/machine-raters.md's worked example, run as written: every ```python block is
executed and every `$ python manage.py …` line of the ```console blocks is run, in order,
in an empty folder; the output a block shows must be what the command printed.

The example's numbers depend only on its own files: the sample is drawn from document
identifiers and a seed, never from database ids or row order, so other tests' data and
the order tests run in change nothing. The test also recomputes the headline numbers
from the files (scikit-learn's kappa, the planner's size) rather than trusting the text."""

import csv
import io
import json
import re
import shlex
from pathlib import Path

import pytest
from django.core.management import call_command
from sklearn.metrics import cohen_kappa_score

from coding.agreement.sample_size import units_needed
from tests import factories

DOC = Path(__file__).resolve().parents[3] / "docs" / "machine-raters.md"
BLOCK = re.compile(r"```(python|console)\n(.*?)```", re.S)


def example_blocks():
    text = DOC.read_text()
    section = text[text.index("## Worked example"):]
    section = section[:section.index("\n## ", 1)]
    return BLOCK.findall(section)


def commands(block):
    """(command line, the output shown after it) for each `$ ` line of a console block."""
    found = []
    for line in block.splitlines():
        if line.startswith("$ "):
            found.append([line[2:], []])
        else:
            found[-1][1].append(line)
    return [(command, "\n".join(shown).strip()) for command, shown in found]


def run(command_line):
    words = shlex.split(command_line)
    target = None
    if ">" in words:
        target = words[words.index(">") + 1]
        words = words[:words.index(">")]
    assert words[:2] == ["python", "manage.py"], command_line
    out, err = io.StringIO(), io.StringIO()
    call_command(*words[2:], stdout=out, stderr=err)
    if target:
        Path(target).write_text(out.getvalue())
        return ""
    return out.getvalue()


@pytest.mark.django_db(transaction=True)
def test_the_worked_example_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    factories.user("olive")
    printed = {}
    for kind, block in example_blocks():
        if kind == "python":
            exec(compile(block, str(DOC), "exec"), {"__name__": "example"})
            continue
        for command, shown in commands(block):
            output = "\n".join(line.rstrip() for line in run(command).strip().splitlines())
            printed[command.split()[2]] = output
            if shown:
                assert output == shown, command

    sample = Path("sample.txt").read_text().split()
    truth = json.loads(Path("truth.json").read_text())
    with open("model-labels.csv") as rows:
        model = {row["item"]: row["value"] for row in csv.DictReader(rows)}
    shares = [list(model.values()).count(label) / len(model) for label in set(model.values())]
    assert len(sample) == units_needed(0.8, min(shares))
    kappa = cohen_kappa_score([model[k] for k in sample], [truth[k] for k in sample])
    assert f"Cohen's kappa {kappa:.3f} [" in printed["compare_raters"]

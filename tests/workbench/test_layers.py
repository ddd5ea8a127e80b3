"""The declared layers (pyproject.toml, checked by `lint-imports` in `make test`) catch
what they promise: an upward import and an import circle each fail the check, naming
the modules and the line. Run on a copy of the tree, so the real one is untouched."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint(tree):
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT_IMPORTS), "--config", str(tree / "pyproject.toml"),
                           "--no-cache"], cwd=tree, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def tree(tmp_path):
    for name in ("coding", "workbench", "ingest"):
        shutil.copytree(ROOT / name, tmp_path / name,
                        ignore=shutil.ignore_patterns("__pycache__", "static", "templates",
                                                      "locale"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def add_line(path, line):
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_tree_as_it_is_keeps_every_contract(tree):
    checked = lint(tree)
    assert checked.returncode == 0, checked.stdout
    assert "BROKEN" not in checked.stdout


def test_a_part_importing_an_act_above_it_breaks_the_layers(tree):
    add_line(tree / "coding" / "labeling" / "queue.py", "from coding.actions import submit")
    checked = lint(tree)
    assert checked.returncode != 0
    assert "coding.labeling is not allowed to import coding.actions" in checked.stdout
    assert "coding.labeling.queue -> coding.actions.submit" in checked.stdout


def test_an_import_circle_between_two_packages_breaks_the_build(tree):
    add_line(tree / "coding" / "agreement" / "alpha.py", "from coding.raters import setup")
    add_line(tree / "coding" / "raters" / "setup.py", "from coding.agreement import alpha")
    checked = lint(tree)
    assert checked.returncode != 0
    assert "coding.agreement" in checked.stdout and "coding.raters" in checked.stdout


def test_workbench_may_not_import_the_coding_app(tree):
    add_line(tree / "workbench" / "jobs.py", "from coding.models import Study")
    checked = lint(tree)
    assert checked.returncode != 0
    assert "workbench is not allowed to import coding" in checked.stdout

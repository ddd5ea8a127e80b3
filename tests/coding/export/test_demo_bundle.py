"""The demo study's export bundle, byte for byte, against the code before the regrouping.

Regrouping `coding/` into packages (issue 34) promised the same export bytes. This test
loads the demo once into a throwaway SQLite database (the embedded mode, in a process of
its own), exports it in every format with this tree and with the tree of `BASELINE` (the
last commit before the regrouping, taken from git), and compares the zips. The demo
cannot be pinned by a checksum alone: its timestamps and queue seed change with every
load, so both trees export the same load.

A change that means to alter the bundle moves `BASELINE` to the commit whose bytes it
keeps, and says why in its message.
"""

import hashlib
import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BASELINE = "1ace364"
FORMATS = ("csv", "parquet", "jsonl")


def manage(tree, var, *args):
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(WORKBENCH_VAR_DIR=str(var), DJANGO_SECRET_KEY="tests-only-not-a-secret")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=900, check=True)


def baseline_tree(into):
    archive = subprocess.run(["git", "archive", "--format=tar", BASELINE, "manage.py",
                              "coding", "workbench", "ingest"],
                             cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def exported(tree, var, out):
    sums = {}
    for fmt in FORMATS:
        path = out / f"demo-{fmt}.zip"
        manage(tree, var, "export_dataset", "rl-inclusion-demo", "--format", fmt,
               "--include-mapping", "--out", str(path))
        sums[fmt] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def test_the_demo_bundle_is_byte_identical_to_the_code_before_the_regrouping(tmp_path):
    var = tmp_path / "var"
    manage(ROOT, var, "migrate", "--no-input", "-v", "0")
    manage(ROOT, var, "load_demo", "-v", "0")
    ours = exported(ROOT, var, tmp_path / "ours")
    before = exported(baseline_tree(tmp_path / "baseline"), var, tmp_path / "before")
    assert ours == before

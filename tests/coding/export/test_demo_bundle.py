"""The demo study's export bundle, pinned byte for byte.

Rule 6 says the same data gives the same bytes; this pins what those bytes are for the
demo, so a change that alters an export without meaning to fails here. The demo is
loaded into a throwaway SQLite database in a process of its own, with the clock stopped
at one instant (time-machine): its values come from a fixed seed, and with the clock
stopped its timestamps are fixed too, so every load exports the same bundle.

The digests below were taken with the tree before coding/ was regrouped into packages
(1ace364) and are unchanged by it (issue 34). CSV and JSON Lines bundles are pinned
whole. For Parquet, each table's schema and rows are pinned, not the file bytes, which
carry the writing library's version.

A change that means to alter the bundle updates these digests in the same commit and
says in its message what changed in the export.
"""

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[3]
PINNED = {
    "csv": "4a8e376ea0366c0e0003d6502f8acec3ec67821a16a52f6eeb7daaa3a83a33e1",
    "jsonl": "66d4904035cd2f7f31002da28cb39ba65e64c583b108f8d7428b74ed81398d6a",
    "parquet tables": "f4baf97c848148acd97feab583c9d3610275df4d062b7a94318e91bb15899409",
}
LOAD_FROZEN = """
import os, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
django.setup()
from datetime import UTC, datetime
import time_machine
from django.core.management import call_command
with time_machine.travel(datetime(2026, 1, 5, 9, 0, tzinfo=UTC), tick=False):
    call_command("load_demo", verbosity=0)
"""


def run(var, *args):
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(WORKBENCH_VAR_DIR=str(var), DJANGO_SECRET_KEY="tests-only-not-a-secret")
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900, check=True)


def parquet_tables(path):
    """One digest of every Parquet table's schema and rows in the bundle."""
    tables = {}
    with zipfile.ZipFile(path) as bundle:
        for name in sorted(bundle.namelist()):
            if name.endswith(".parquet"):
                table = pq.read_table(io.BytesIO(bundle.read(name)))
                tables[name] = {"schema": [str(field) for field in table.schema],
                                "rows": table.to_pylist()}
    text = json.dumps(tables, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def test_the_demo_bundle_is_the_pinned_bytes_in_every_format(tmp_path):
    var = tmp_path / "var"
    run(var, "manage.py", "migrate", "--no-input", "-v", "0")
    run(var, "-c", LOAD_FROZEN)
    got = {}
    for fmt in ("csv", "jsonl", "parquet"):
        path = tmp_path / f"demo-{fmt}.zip"
        run(var, "manage.py", "export_dataset", "rl-inclusion-demo", "--format", fmt,
            "--include-mapping", "--out", str(path))
        if fmt == "parquet":
            got["parquet tables"] = parquet_tables(path)
        else:
            got[fmt] = hashlib.sha256(path.read_bytes()).hexdigest()
    assert got == PINNED

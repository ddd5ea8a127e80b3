"""The demo study's export bundle, pinned byte for byte.

Rule 6 says the same data gives the same bytes; this pins what those bytes are for the
demo, so a change that alters an export without meaning to fails here. The demo is
loaded into a throwaway SQLite database in a process of its own, with the clock stopped
at one instant (time-machine): its values come from a fixed seed, and with the clock
stopped its timestamps are fixed too, so every load exports the same bundle.

The digests were first taken with the tree before coding/ was regrouped into packages
(1ace364) and were unchanged by it (issue 34); since then the bundle gained the evidence
and notes tables, the demo its quotes and notes, and the data dictionary the decisions'
consequences of conditions and the questions left to the coders, and the README a line
saying when the reliability table's figures were computed, and the reliability table an
`undefined` column and the drift points' values it had always left empty (issue 35), and
the CSV bundle's README and data dictionary a note on cells guarded against spreadsheet
formulas (issue 36; no demo cell needed the guard), and the wide tables' status pending
for items still being coded, apart from undecided (issue 35), and the text of four AReaL
threads whose Dr. GRPO option is now written as the value it is, `adv_norm.std_level: none`
(issue 40), and the inclusion table a source column saying where inclusion came from
(issue 40), and (issue 39) the bundle its own load.py, the README its loading lines, the
CSV its arXiv keys written arXiv:2599.00001 so plain pandas keeps them text (with the
data dictionary saying so), and the reliability table's drift flags the rule that flags
only a window whose interval lies below the question's alpha (the demo's coders agree:
its 20 flags are gone, no other cell moved); nothing else moved. Every member of the zip is pinned but
what names the installed libraries (the README's "Written by" line; Parquet files
stand in by their tables' schema and rows, whose bytes carry pyarrow's version).

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
    "csv": "b37a8a9949bf4b17d95e680edfad938a9a69dd92bddde8d023067bddc0066ae5",
    "jsonl": "bf118b9afa499dc165a5a2146b53b2cc2c417140105ded40db340b152dec07b4",
    "parquet": "07e23b7bae7af5cce44c7e0af25400cd2fb020b2589e119ea4ae97d4b0a54a51",
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


def digest(path):
    """The bundle's digest, member by member, leaving out only what names the installed
    libraries' versions: the README's "Written by" line, and Parquet file bytes (each
    table's schema and rows stand for them, in SHA256SUMS and datapackage.json too)."""
    parts = []
    with zipfile.ZipFile(path) as bundle:
        for name in sorted(bundle.namelist()):
            raw = bundle.read(name)
            if name.endswith(".parquet"):
                table = pq.read_table(io.BytesIO(raw))
                raw = json.dumps({"schema": [str(f) for f in table.schema],
                                  "rows": table.to_pylist()}, sort_keys=True, default=str)
            elif name == "README.md":
                raw = "\n".join(line for line in raw.decode().splitlines()
                                if not line.startswith("Written by coding-workbench"))
            elif name == "SHA256SUMS":
                raw = "\n".join(line for line in raw.decode().splitlines()
                                if not line.endswith(("README.md", ".parquet")))
            elif name == "datapackage.json":
                package = json.loads(raw)
                for resource in package["resources"]:
                    if resource["path"].endswith(".parquet"):
                        resource.pop("hash", None)
                raw = json.dumps(package, sort_keys=True)
            if isinstance(raw, str):
                raw = raw.encode()
            parts.append(f"{name} {hashlib.sha256(raw).hexdigest()}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def test_the_demo_bundle_is_the_pinned_bytes_in_every_format(tmp_path):
    var = tmp_path / "var"
    run(var, "manage.py", "migrate", "--no-input", "-v", "0")
    run(var, "-c", LOAD_FROZEN)
    got = {}
    for fmt in PINNED:
        path = tmp_path / f"demo-{fmt}.zip"
        run(var, "manage.py", "export_dataset", "rl-inclusion-demo", "--format", fmt,
            "--include-mapping", "--out", str(path))
        got[fmt] = digest(path)
    assert got == PINNED

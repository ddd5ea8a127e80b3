"""Issue 39, finding 7: the bundle's own loader and CSV ids that stay text.

Plain pandas.read_csv reads 2599.00001 as the number 2599.00001 (and 2501.90100 as
2501.901); the CSV writes such a key as arXiv:2599.00001. The bundle carries load.py,
which needs only pandas and pyarrow: run in a fresh interpreter without the workbench on
its path, it gives the same frames from CSV as from Parquet."""

import io
import subprocess
import sys
import zipfile

import pandas as pd
import pytest

from coding.export.bundle import build_bundle
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def coded(alpha, people):
    for paper in alpha.papers:
        factories.code(paper, people["cora"])
    return alpha


def test_plain_pandas_reads_the_csv_keys_as_text(coded, tmp_path):
    build_bundle(coded, tmp_path / "b.zip", shapes=["items"], fmt="csv")
    with zipfile.ZipFile(tmp_path / "b.zip") as bundle:
        items = pd.read_csv(io.BytesIO(bundle.read("items.csv")))
        readme = bundle.read("README.md").decode()
    assert not pd.api.types.is_numeric_dtype(items["document_key"])
    assert sorted(items["document_key"]) == [f"arXiv:2599.0000{n}" for n in range(3)]
    assert "arXiv:2501.90100" in readme and "from load import load" in readme


def test_the_bundles_loader_runs_without_the_workbench_and_formats_agree(coded, tmp_path):
    # The workbench and Django made unimportable: load.py must not need them.
    script = ("import sys, json; sys.path.insert(0, sys.argv[1])\n"
              "for name in ('coding', 'django', 'workbench', 'ingest'): sys.modules[name] = None\n"
              "from load import load\n"
              "frames = {fmt: load(sys.argv[1] + f'/{fmt}.zip') for fmt in ('csv', 'parquet')}\n"
              "a, b = frames['csv'], frames['parquet']\n"
              "assert set(a) == set(b)\n"
              "for name in a: __import__('pandas').testing.assert_frame_equal(a[name], b[name])\n"
              "print(json.dumps(sorted(a['items']['document_key'])))")
    for fmt in ("csv", "parquet"):
        build_bundle(coded, tmp_path / f"{fmt}.zip", shapes=["items", "long"], fmt=fmt)
    with zipfile.ZipFile(tmp_path / "csv.zip") as bundle:
        (tmp_path / "load.py").write_bytes(bundle.read("load.py"))
    done = subprocess.run([sys.executable, "-I", "-c", script, str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '["2599.00000", "2599.00001", "2599.00002"]'

"""What every web and worker process loads when it starts.

Each gunicorn worker and each Celery worker imports every app, the URLs and the tasks.
scikit-learn, the openai client, scipy.stats, pandas, pyarrow and statsmodels are needed
only by the screening model, the model rater, a few statistics, the dataset reader and the
Parquet writer: imported at start they made each process 290 MB and 2.2 s to start
instead of about 120 MB and 0.9 s (measured 2026-12-06), three gunicorn workers and the
Celery worker each paying it, and an import job's memory over its 150 MB target before
it read a record. They are imported where they are used.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ["sklearn", "openai", "scipy.stats", "pandas", "pyarrow", "statsmodels"]

STARTS = """
import json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
import django
django.setup()
import workbench.urls  # what a web worker loads on its first request
import workbench.celery  # and a worker, with every task
workbench.celery.app.loader.import_default_modules()
print(json.dumps(sorted(m for m in %r if m in sys.modules)))
"""


def test_a_process_starts_without_the_heavy_libraries(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", STARTS % HEAVY], cwd=ROOT, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SECRET_KEY": "startup-test-" + "x" * 40,
             "WORKBENCH_VAR_DIR": str(tmp_path)}, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [], (
        "imported at start; import it where it is used")


def test_the_libraries_still_load_where_they_are_used():
    from coding.export.writers import arrow_schema
    from coding.screening.model import features, ranker
    from coding.screening.stopping import random_estimate

    assert ranker().classifier().__class__.__module__.startswith("sklearn")
    assert features(["a reward model", "a critic"]).shape[0] == 2
    assert random_estimate(10, 100, 20, 2)["draws"] == 20
    assert arrow_schema([]).names == []

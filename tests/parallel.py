"""Each pytest-xdist worker gets its own Celery queues and var folder.

Loaded with `-p tests.parallel` (pyproject's addopts), so it runs before pytest-django
imports the settings, which read WORKBENCH_QUEUE and WORKBENCH_VAR_DIR once. pytest-django
already gives each worker its own test database (`test_<name>_gw0`); without this, the
workers would share one Redis queue (a job sent by gw0 could be run by gw1's Celery worker,
which reads another database) and one var folder (job 1's export in both databases).
Without xdist it changes nothing.
"""

import os
from pathlib import Path

worker = os.environ.get("PYTEST_XDIST_WORKER")
if worker:
    os.environ["WORKBENCH_QUEUE"] = f"{os.environ.get('WORKBENCH_QUEUE', 'workbench')}-{worker}"
    var = Path(os.environ.get("WORKBENCH_VAR_DIR", "var/test"))
    os.environ["WORKBENCH_VAR_DIR"] = str(var / worker)

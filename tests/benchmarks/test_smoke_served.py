"""The benchmarks that serve the workbench (gunicorn and a Celery worker, or the tests'
model server) or read no database, each run at its smallest size."""

import pytest

from tests.benchmarks.smoke import runs_to_its_end

NAMES = ["load", "model_rater", "pages", "scan", "screening"]


@pytest.mark.benchmark
@pytest.mark.parametrize("name", NAMES)
def test_the_benchmark_runs_at_its_smallest_size(name, tmp_path):
    runs_to_its_end(name, tmp_path)

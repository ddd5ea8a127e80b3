"""The benchmarks that build a study in a scratch database and time work on it in process,
each run at its smallest size (the served ones are in test_smoke_served.py: two files, so
two test workers share the few minutes these take)."""

import pytest

from benchmarks import suite
from tests.benchmarks import test_smoke_served
from tests.benchmarks.smoke import runs_to_its_end

NAMES = ["agreement", "agreement_report", "export", "export_study", "ingest", "qdpx", "queue",
         "raters_import", "screening_serve"]


@pytest.mark.benchmark
@pytest.mark.parametrize("name", NAMES)
def test_the_benchmark_runs_at_its_smallest_size(name, tmp_path):
    runs_to_its_end(name, tmp_path)


def test_every_benchmark_script_is_smoke_tested():
    on_disk = suite.scripts_on_disk()
    assert sorted(suite.SCRIPTS) == on_disk, "a script in benchmarks/ missing from suite.SCRIPTS"
    assert sorted(NAMES + test_smoke_served.NAMES) == on_disk


def test_a_script_that_needs_a_service_says_which():
    assert "PostgreSQL" in suite.cannot_run("pages", {})
    assert "REDIS_URL" in suite.cannot_run("load", {"DATABASE_URL": "postgres://h/d"})
    assert suite.cannot_run("ingest", {}) == ""

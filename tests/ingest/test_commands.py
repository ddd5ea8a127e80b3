"""The ingest management commands: thin doors onto the same import."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from ingest import imports
from ingest.models import Document
from workbench.models import Job

from .conftest import FIXTURES


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_ingest_arxiv_snapshot_prints_the_counts_and_each_error(db):
    out, err = run("ingest_arxiv", "snapshot", str(FIXTURES / "arxiv" / "snapshot_bad.jsonl"))
    assert out.splitlines()[0] == "9 read: 2 added, 0 updated, 0 unchanged, 0 excluded, 7 errors"
    assert "snapshot_bad.jsonl line 7: duplicate key 'id' in one JSON object" in err
    assert Document.objects.count() == 2


@pytest.mark.parametrize("what, name", [("atom", "atom_one.xml"), ("oai", "oai_arxiv_record.xml")])
def test_ingest_arxiv_reads_saved_api_and_oai_responses(db, what, name):
    run("ingest_arxiv", what, str(FIXTURES / "arxiv" / name))
    assert Document.objects.get().key == "2507.99917"


def test_ingest_arxiv_strict_stops_with_the_location(db):
    with pytest.raises(CommandError, match="snapshot_bad.jsonl line 2: malformed JSON"):
        run("ingest_arxiv", "snapshot", str(FIXTURES / "arxiv" / "snapshot_bad.jsonl"),
            "--strict")


def test_ingest_arxiv_api_passes_the_query_to_the_client(db, monkeypatch):
    asked = {}

    class Recorder:
        def search(self, **query):
            asked.update(query)
            return iter(())

    monkeypatch.setitem(imports.CLIENTS, "arxiv_api", Recorder)
    run("ingest_arxiv", "api", "--query", "cat:cs.LG", "--max-results", "50")
    assert (asked["search_query"], asked["max_results"]) == ("cat:cs.LG", 50)


def test_ingest_github_saved_imports_bundles(db):
    out, _ = run("ingest_github", "saved", str(FIXTURES / "github" / "threads.jsonl"))
    assert out.startswith("3 read: 3 added")


def test_async_enqueues_an_ingest_job_instead(db, django_capture_on_commit_callbacks):
    path = str(FIXTURES / "github" / "threads.jsonl")
    with django_capture_on_commit_callbacks(execute=False):
        out, _ = run("ingest_github", "saved", path, "--async")
    job = Job.objects.get()
    assert out == f"Enqueued ingest job #{job.pk}.\n"
    assert job.params == {"format": "github_file", "path": path, "strict": False}


def test_ingest_table_maps_columns(db, tmp_path):
    mapping = {"source": "openreview", "key": "id", "title": "title", "published": "date"}
    (tmp_path / "mapping.json").write_text(json.dumps(mapping))
    out, _ = run("ingest_table", str(FIXTURES / "table" / "papers.csv"),
                 "--mapping", f"@{tmp_path / 'mapping.json'}")
    assert out.startswith("7 read: 3 added")


def test_a_missing_file_is_a_command_error(db):
    with pytest.raises(CommandError, match="needs an existing 'path'"):
        run("ingest_arxiv", "snapshot", "/nowhere/snapshot.jsonl")


def test_a_failing_async_import_says_why_without_a_traceback_or_its_folder(
        transactional_db, tmp_path, monkeypatch, caplog, capfd):
    """Issue 40, finding 7: the embedded default runs the job in the command's process; its
    failure is the command's error, and neither the job nor the log quote the file's folder
    or a traceback."""
    from ingest import jobs as ingest_jobs
    from workbench.models import JobEvent

    # Only the file's own folder is hidden (the server's folders hold tmp_path too).
    monkeypatch.setattr(ingest_jobs, "server_folders", lambda: [])
    bad = tmp_path / "private-folder" / "snapshot_bad.jsonl"
    bad.parent.mkdir()
    bad.write_bytes((FIXTURES / "arxiv" / "snapshot_bad.jsonl").read_bytes())
    with pytest.raises(CommandError, match=r"Ingest job #\d+ failed: .*snapshot_bad.jsonl "
                                           r"line 2: malformed JSON"):
        run("ingest_arxiv", "snapshot", str(bad), "--async", "--strict")
    job = Job.objects.get()
    assert job.status == Job.Status.FAILED and "private-folder" not in job.error
    events = list(JobEvent.objects.filter(job=job).values_list("location", "message"))
    assert events and not any("private-folder" in f"{a} {b}" for a, b in events)
    assert "Traceback" not in capfd.readouterr().err
    assert not [r for r in caplog.records if r.exc_info]


def test_an_async_import_whose_file_went_names_the_file_not_its_folder(
        transactional_db, tmp_path, monkeypatch):
    from ingest import jobs as ingest_jobs
    from workbench import jobs

    monkeypatch.setattr(ingest_jobs, "server_folders", lambda: [])
    missing = tmp_path / "private-folder" / "gone.jsonl"
    # The command checks the path before enqueueing; the job checks again when it runs.
    queued = jobs.enqueue("ingest", {"format": "arxiv_snapshot_file", "path": str(missing)})
    queued.refresh_from_db()
    assert queued.status == Job.Status.FAILED and "gone.jsonl" in queued.error
    assert "private-folder" not in queued.error

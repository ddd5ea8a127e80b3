"""What a job shows (its page, /api/jobs/<id>/, the job list, the Job row) never carries a
server path or a data value: results name files and URLs, failures the kind of failure
and the job id, and the details go to the server log (issue 15, finding 6)."""

import logging

import pyarrow as pa
import pytest
from django.conf import settings

from coding.export import bundle
from tests import factories
from workbench import jobs
from workbench.models import Job

MARKER = "SECRET-VALUE-5b9e"


def shown(client, job):
    """Everything a person reads of the job: its page, its API answer and the job list."""
    return {"page": client.get(f"/jobs/{job.pk}/").content.decode(),
            "api": client.get(f"/api/jobs/{job.pk}/").content.decode(),
            "list": client.get("/jobs/").content.decode(),
            "api list": client.get("/api/jobs/").content.decode()}


def server_paths():
    return {str(settings.VAR_DIR), str(settings.VAR_DIR.resolve()), "/tmp", str(settings.BASE_DIR)}


def test_an_export_job_shows_no_server_path(alpha, people, client_for,
                                            django_capture_on_commit_callbacks):
    factories.code(alpha.papers[0], people["cora"])
    olive = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        started = olive.post(f"/api/studies/{alpha.slug}/exports/",
                             {"shapes": ["long", "items"], "format": "parquet"},
                             content_type="application/json")
    assert started.status_code == 202
    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == Job.Status.DONE, job.error
    assert "path" not in job.result
    assert job.result["filename"].endswith(".zip") and job.result["bytes"] > 0
    assert job.result["download"] == f"/studies/{alpha.slug}/exports/{job.pk}/download/"
    assert olive.get(job.result["download"]).status_code == 200
    for where, body in {**shown(olive, job),
                        "export page": olive.get(f"/studies/{alpha.slug}/export/").content.decode(),
                        "row": repr(job.result)}.items():
        found = [p for p in server_paths() if p in body]
        assert not found, f"{where} shows {found}"


def test_a_failure_quoting_a_value_shows_only_its_kind_and_the_job(db, people, client_for, caplog):
    @jobs.job_handler("leaky")
    def leaky(job, report):
        raise TypeError(f"could not convert {MARKER!r} to int64 in {settings.VAR_DIR}/x.parquet")

    job = Job.objects.create(kind="leaky", created_by=people["olive"])
    with caplog.at_level(logging.ERROR, logger="workbench.jobs"):
        jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == ("The leaky job failed on the server; the details are in the server log "
                         f"under job {job.pk}.")
    for where, body in shown(client_for(people["olive"]), job).items():
        assert MARKER not in body and str(settings.VAR_DIR) not in body, where
    assert f"job {job.pk}" in shown(client_for(people["olive"]), job)["page"]
    logged = [r for r in caplog.records if r.name == "workbench.jobs" and str(job.pk) in r.getMessage()]
    assert logged and any(MARKER in r.exc_text or MARKER in str(r.exc_info[1])
                          for r in logged if r.exc_info), "the details are in the server log"


def test_an_export_failing_on_a_blinded_value_keeps_it_in_the_server_log(
        alpha, people, client_for, caplog, monkeypatch, django_capture_on_commit_callbacks):
    """The finding: a Parquet type error quoted a blinded field's value on the job."""
    alpha.blinded_fields = ["state"]
    alpha.save()

    def type_error(path, fields, rows, on_batch=None):
        raise pa.ArrowTypeError(f"Could not convert '{MARKER}' with type str: tried to convert "
                                "to int64")

    monkeypatch.setitem(bundle.WRITERS, "parquet", (type_error, "parquet"))
    ada = client_for(people["ada"])
    with caplog.at_level(logging.ERROR, logger="workbench.jobs"), \
            django_capture_on_commit_callbacks(execute=True):
        started = ada.post(f"/api/studies/{alpha.slug}/exports/",
                           {"shapes": ["items"], "format": "parquet"},
                           content_type="application/json")
    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == Job.Status.FAILED
    assert job.error == (f"Export failed on the server; the details are in the server log "
                         f"under job {job.pk}.")
    for where, body in shown(ada, job).items():
        assert MARKER not in body, where
    assert MARKER not in job.error and MARKER not in job.message and MARKER not in repr(job.result)
    assert any(r.exc_info and MARKER in str(r.exc_info[1]) and str(job.pk) in r.getMessage()
               for r in caplog.records)


def test_an_error_the_handler_wrote_for_people_is_shown_as_written(db, people, client_for):
    @jobs.job_handler("says_why")
    def says_why(job, report):
        raise jobs.JobError("papers.jsonl line 3: field 'id' is missing")

    job = Job.objects.create(kind="says_why", created_by=people["olive"])
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.error == "papers.jsonl line 3: field 'id' is missing"
    assert "papers.jsonl line 3: field &#x27;id&#x27; is missing" in shown(
        client_for(people["olive"]), job)["page"]


def test_a_strict_import_still_says_which_record_stopped_it(db, tmp_path, people):
    path = tmp_path / "papers.jsonl"
    path.write_text('{"id": "2501.00001", "title": "Fine", "abstract": "A", "authors": "B", '
                    '"categories": "cs.LG", "versions": [{"version": "v1", "created": "Mon, 6 Jan 2025 00:00:00 GMT"}]}'
                    '\nnot json\n')
    job = Job.objects.create(kind="ingest", created_by=people["olive"], params={
        "format": "arxiv_snapshot_file", "path": str(path), "strict": True})
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error.startswith("Stopped at the first bad record: ")
    assert "line 2" in job.error


def test_a_result_naming_a_server_path_keeps_only_the_file_name(db, people, client_for, caplog):
    @jobs.job_handler("careless")
    def careless(job, report):
        return {"path": str(settings.VAR_DIR / "exports" / "s" / "bundle.zip"),
                "nested": [{"where": "/tmp/work/table.csv"}], "rows": 3, "url": "/jobs/"}

    job = Job.objects.create(kind="careless", created_by=people["olive"])
    with caplog.at_level(logging.WARNING, logger="workbench.jobs"):
        jobs.run(job.pk)
    job.refresh_from_db()
    assert job.result == {"path": "bundle.zip", "nested": [{"where": "table.csv"}], "rows": 3,
                          "url": "/jobs/"}
    assert any(str(job.pk) in r.getMessage() and "bundle.zip" in r.getMessage()
               for r in caplog.records)


def test_a_row_written_before_the_rule_shows_no_path_either(db, people, client_for):
    """Export jobs used to keep result.path; the API answers without it."""
    job = Job.objects.create(kind="export", created_by=people["olive"], status=Job.Status.DONE,
                             result={"path": str(settings.VAR_DIR / "exports" / "a" / "a-1.zip"),
                                     "filename": "a-1.zip", "rows": {"long": 2}})
    data = client_for(people["olive"]).get(f"/api/jobs/{job.pk}/").json()
    assert data["result"]["path"] == "a-1.zip"
    assert str(settings.VAR_DIR) not in client_for(people["olive"]).get(
        f"/api/jobs/{job.pk}/").content.decode()


def test_the_api_names_an_uploaded_file_by_its_name_only(db, people, client_for):
    upload = settings.VAR_DIR / "uploads" / "ab12" / "papers.jsonl"
    job = Job.objects.create(kind="import_to_study", created_by=people["olive"],
                             params={"study": 1, "source": {"format": "jsonl_file",
                                                            "path": str(upload)}})
    body = client_for(people["olive"]).get(f"/api/jobs/{job.pk}/")
    assert body.json()["params"]["source"]["path"] == "papers.jsonl"
    assert str(settings.VAR_DIR) not in body.content.decode()


@pytest.mark.parametrize("kind", ["export", "ingest", "import_to_study", "load_demo",
                                  "agreement", "scan_framework"])
def test_every_kind_fails_with_a_message_naming_it(db, kind):
    job = Job.objects.create(kind=kind)
    message = jobs.public_error(job, KeyError(MARKER))
    assert MARKER not in message and f"job {job.pk}" in message and "KeyError" not in message


def test_the_workbench_own_job_words_read_in_chinese_on_the_page():
    """Issue 39, finding 6: what the workbench itself writes on a job row (a cancel, a
    failure on the server) is kept in English for the API and read in Chinese on pages."""
    from django.utils import translation

    from workbench import jobs as workbench_jobs
    from workbench.templatetags.workbench_jobs import job_words

    stored = workbench_jobs.FAILED_ON_SERVER % {"what": "Export", "job": 7}
    with translation.override("zh-hans"):
        assert job_words(workbench_jobs.CANCELLED) != "Cancelled."
        shown = job_words(stored, "export")
    assert "7" in shown and "failed" not in shown and "Export" not in shown
    assert job_words(stored, "export") == stored  # English readers see it as stored

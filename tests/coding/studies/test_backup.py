"""A study's backup restores onto a fresh instance (a second database, a var folder of its
own) and yields a byte-identical export; what cannot be restored is refused whole."""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.core.files.base import ContentFile
from django.core.management import call_command
from django.db import connection

from coding.adjudication import decisions as adjudication
from coding.models import Coding, Study
from coding.studies.backup import BackupError, restore
from tests import factories
from workbench import storage
from workbench.models import Job

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fresh(tmp_path):
    """Run manage.py on a fresh instance: an empty second database (PostgreSQL when the
    suite runs on it, else SQLite) and a var folder of its own, migrated."""
    var = tmp_path / "fresh-var"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WORKBENCH_S3_", "REDIS_URL", "DATABASE_URL"))}
    env.update(WORKBENCH_VAR_DIR=str(var), DJANGO_SECRET_KEY="fresh-instance-for-tests-" + "x" * 40)
    name = None
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        name = f"{connection.settings_dict['NAME']}_fresh"
        admin_sql(f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}"')
        parts = urlsplit(os.environ["DATABASE_URL"])
        env["DATABASE_URL"] = urlunsplit(parts._replace(path="/" + name))
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"

    def manage(*arguments):
        return subprocess.run([sys.executable, "manage.py", *arguments], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)

    migrated = manage("migrate", "--no-input")
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    manage.var = var
    try:
        yield manage
    finally:
        if name:
            admin_sql(f'DROP DATABASE IF EXISTS "{name}"')


def admin_sql(*statements):
    import psycopg

    settings = connection.settings_dict
    with psycopg.connect(host=settings["HOST"] or None, port=settings["PORT"] or None,
                         user=settings["USER"], password=settings["PASSWORD"] or None,
                         dbname="postgres", autocommit=True) as admin:
        for statement in statements:
            admin.execute(statement)


def full_study(alpha, people):
    """Alpha with codings (a disagreement among them), a decision and stored files."""
    first, second, _ = alpha.papers
    factories.code(first, people["cora"])
    factories.code(first, people["cyril"], label="rl_method", scope="general")
    factories.code(second, people["cora"])
    factories.code(second, people["cyril"])
    adjudication.decide(first, "label", "analysis", people["ada"], "The abstract says so.")
    storage.save_upload(f"uploads/{alpha.slug}/f00d/papers.jsonl",
                        ContentFile(b'{"id": "2599.00001"}\n', name="papers.jsonl"))
    return alpha


def test_a_backup_restores_onto_a_fresh_instance_with_a_byte_identical_export(
        transactional_db, alpha, people, client_for, stored_files, fresh, tmp_path,
        django_capture_on_commit_callbacks):
    full_study(alpha, people)
    olive = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        started = olive.post(f"/api/studies/{alpha.slug}/backups/")
    assert started.status_code == 202
    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == Job.Status.DONE, job.error
    assert job.total and job.done == job.total  # progress was reported
    response = olive.get(job.result["download"])
    assert response.status_code == 200
    backup = tmp_path / "alpha-backup.zip"
    backup.write_bytes(b"".join(response.streaming_content))

    here = tmp_path / "here.zip"
    call_command("export_dataset", alpha.slug, "--format", "parquet", "--include-mapping",
                 "--out", str(here))

    restored = fresh("restore_study", str(backup))
    assert restored.returncode == 0, restored.stderr[-3000:]
    assert f"Restored study {alpha.slug}" in restored.stdout
    there = tmp_path / "there.zip"
    exported = fresh("export_dataset", alpha.slug, "--format", "parquet", "--include-mapping",
                     "--out", str(there))
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert there.read_bytes() == here.read_bytes()
    # The stored files came along, under the same keys.
    assert (fresh.var / f"uploads/{alpha.slug}/f00d/papers.jsonl").read_bytes() == (
        stored_files / f"uploads/{alpha.slug}/f00d/papers.jsonl").read_bytes()

    again = fresh("restore_study", str(backup))
    assert again.returncode != 0
    assert f"a study '{alpha.slug}' exists here already" in again.stderr


def backup_of(study, tmp_path):
    path = tmp_path / "backup.zip"
    call_command("backup_study", study.slug, "--out", str(path))
    return path


def test_a_backup_is_not_restored_where_its_study_exists_and_nothing_is_written(
        alpha, people, stored_files, tmp_path):
    full_study(alpha, people)
    path = backup_of(alpha, tmp_path)
    codings = Coding.objects.count()
    with pytest.raises(BackupError, match="exists here already"):
        restore(path)
    Study.objects.filter(pk=alpha.pk).update(slug="renamed")  # the slug is free, the ids not
    with pytest.raises(BackupError, match=r"exists here already: a backup restores onto a fresh"):
        restore(path)
    assert Coding.objects.count() == codings and Study.objects.count() == 1


def test_a_damaged_backup_is_refused_naming_the_member(alpha, people, stored_files, tmp_path):
    full_study(alpha, people)
    path = backup_of(alpha, tmp_path)
    damaged = tmp_path / "damaged.zip"
    with zipfile.ZipFile(path) as good, zipfile.ZipFile(damaged, "w") as bad:
        for name in good.namelist():
            data = good.read(name)
            if name.startswith("rows/") and "coding.coding" in name:
                data = data.replace(b'"analysis"', b'"rl_method"', 1)
            bad.writestr(name, data)
    with pytest.raises(BackupError, match=r"rows/\d+-coding.coding.jsonl in the backup is damaged"):
        restore(damaged)


def test_the_backup_names_no_password(alpha, people, stored_files, tmp_path):
    path = backup_of(alpha, tmp_path)
    with zipfile.ZipFile(path) as bundle:
        users = json.loads(bundle.read("users.json"))
        rows = b"".join(bundle.read(n) for n in bundle.namelist() if n.startswith("rows/"))
    assert {u["username"] for u in users} >= {"olive", "cora", "cyril", "ada", "vera"}
    assert "otto" not in {u["username"] for u in users}  # not in alpha
    assert b"password" not in rows and all("password" not in u for u in users)


def test_the_export_page_offers_owners_a_backup(alpha, people, client_for,
                                                django_capture_on_commit_callbacks, stored_files):
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/export/").content.decode()
    assert f'action="/studies/{alpha.slug}/backup/"' in page
    assert "Back up the study" not in client_for(people["ada"]).get(
        f"/studies/{alpha.slug}/export/").content.decode()
    olive = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        response = olive.post(f"/studies/{alpha.slug}/backup/")
    job = Job.objects.get(kind="backup_study")
    assert response["Location"] == f"/jobs/{job.pk}/"
    assert f'href="/studies/{alpha.slug}/backups/{job.pk}/download/"' in olive.get(
        f"/jobs/{job.pk}/").content.decode()
    download = olive.get(f"/studies/{alpha.slug}/backups/{job.pk}/download/")
    assert zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))).testzip() is None

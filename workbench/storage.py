"""The workbench's files, through Django's storage API (settings.STORAGES["default"]).

Uploads, import files, export bundles and backups are stored under keys, never
server paths, so a web process and a worker on different machines find the same
file. What lives where (keys use "/" whatever the backend):

    uploads/<study slug>/<random>/<name>   a file uploaded for an import
    imports/<study slug>/<name or folder>  files an administrator placed for a study
                                           (object store only: a study names keys
                                           under its own prefix and nothing else)
    exports/<study slug>/<bundle>.zip      a finished export job's bundle
    backups/<study slug>/<backup>.zip      a finished backup job's file

The default backend is the local folder VAR_DIR (one host: the embedded mode and
`make run`, with the files where they always were); with WORKBENCH_S3_BUCKET it is
an S3-compatible object store (django-storages and boto3). Cached HTTP responses
of the live sources are rows (ingest.CachedResponse), shared through the database.

Large files stream both ways: `put` hands the file to the backend, which for S3 is
boto3's managed transfer (multipart above 8 MB, parts in parallel); `download`
streams the object through Django in chunks, or, with WORKBENCH_DOWNLOADS=signed and
an object store, redirects to a URL signed for WORKBENCH_SIGNED_URL_SECONDS.
"""

import contextlib
import hashlib
import os
import posixpath
import re
import shutil
import tempfile
import uuid
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage
from django.http import FileResponse, HttpResponseRedirect
from django.utils.cache import add_never_cache_headers

CHUNK = 1024 * 1024


class StorageError(Exception):
    """A stored file is not what was written (a checksum differs) or cannot be used."""


def _storage():
    from django.core.files.storage import storages

    return storages["default"]  # read at call time: a test's settings override applies


def is_remote():
    """Whether files live in an object store rather than in this machine's folder."""
    return not isinstance(_storage(), FileSystemStorage)


# --- keys ----------------------------------------------------------------------

def export_key(slug, filename):
    return f"exports/{slug}/{filename}"


def backup_key(slug, filename):
    return f"backups/{slug}/{filename}"


def upload_key(slug, filename):
    """A fresh key for an upload: its own random folder, so two uploads never meet."""
    return f"uploads/{slug}/{uuid.uuid4().hex}/{filename}"


def import_key(slug, name):
    """The key a study's named import file stands for: inside imports/<slug>/, or
    ValueError. A study cannot reach another study's files, nor anything else stored."""
    if not isinstance(name, str) or not name.strip() or "\x00" in name or "\\" in name:
        raise ValueError("give the name of a file or folder in the study's import folder")
    clean = posixpath.normpath(name.strip().lstrip("/"))
    if clean in (".", "") or clean == ".." or clean.startswith("../"):
        raise ValueError(f"{name[:200]!r} is outside the study's import folder "
                         f"(imports/{slug}/ in the object store); upload the file instead")
    return f"imports/{slug}/{clean}"


def owned_by(key, slug):
    """Whether a stored key belongs to the study (what a job may read for it)."""
    return isinstance(key, str) and any(
        key.startswith(f"{area}/{slug}/") and ".." not in key.split("/")
        for area in ("uploads", "imports"))


# --- writing ---------------------------------------------------------------------

class _LocalFile(File):
    """A finished file on this machine. FileSystemStorage moves it into place by a
    rename (atomic on one file system: nobody sees half a file); an object store
    reads it and uploads it."""

    def temporary_file_path(self):
        return self.file.name


def put(key, path, sha256=None):
    """Store the finished file at `path` under `key`, replacing what was there; returns
    the key. The local file is consumed. With `sha256`, the stored object is read back
    and hashed: a mismatch removes it and raises StorageError (nothing half-stored stays)."""
    storage = _storage()
    with open(path, "rb") as handle:
        stored = storage.save(key, _LocalFile(handle, name=Path(path).name))
    if stored != key:  # a backend that renamed instead of replacing
        storage.delete(stored)
        raise StorageError(f"the storage kept {key} under another name")
    Path(path).unlink(missing_ok=True)
    if sha256 is not None:
        found = stored_sha256(key)
        if found != sha256:
            storage.delete(key)
            raise StorageError(f"{posixpath.basename(key)} was stored with checksum {found[:12]}…, "
                               f"not the {sha256[:12]}… written; nothing was kept")
    return key


def save_upload(key, upload):
    """Store an uploaded file (Django's UploadedFile) under key, in chunks."""
    return _storage().save(key, upload)


def stored_sha256(key):
    digest = hashlib.sha256()
    with open_stream(key) as stream:
        for chunk in iter(lambda: stream.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def delete_tree(prefix):
    """Remove every file under the prefix (an upload's folder, a study's exports)."""
    for key in walk(prefix):
        _storage().delete(key)


# --- reading ---------------------------------------------------------------------

def exists(key):
    return _storage().exists(key)


def walk(prefix):
    """Every key under the prefix, sorted; none if the prefix holds nothing."""
    prefix = prefix.rstrip("/")
    try:
        folders, files = _storage().listdir(prefix)
    except FileNotFoundError:
        return []
    keys = [f"{prefix}/{name}" for name in files]
    for folder in folders:
        keys += walk(f"{prefix}/{folder}")
    return sorted(keys)


@contextlib.contextmanager
def open_stream(key):
    """The stored file as a binary stream read in chunks, not buffered whole."""
    storage = _storage()
    if is_remote():
        obj = storage.bucket.Object(storage._normalize_name(key))
        try:
            body = obj.get()["Body"]
        except storage.connection.meta.client.exceptions.NoSuchKey:
            raise FileNotFoundError(key) from None
        try:
            yield body
        finally:
            body.close()
        return
    with storage.open(key, "rb") as handle:
        yield handle


@contextlib.contextmanager
def local_copy(key):
    """A path on this machine holding the stored file, or folder of files (a prefix),
    for readers that need a path. Locally that is the file itself; from an object
    store a temporary copy, removed afterwards."""
    storage = _storage()
    if not is_remote():
        yield storage.path(key)
        return
    folder = Path(tempfile.mkdtemp(prefix="stored-", dir=_scratch()))
    try:
        if storage.exists(key):
            target = folder / posixpath.basename(key)
            storage.bucket.download_file(storage._normalize_name(key), str(target))
        else:
            keys = walk(key)
            if not keys:
                raise FileNotFoundError(key)
            target = folder / posixpath.basename(key.rstrip("/"))
            for found in keys:
                place = target / found[len(key.rstrip("/")) + 1:]
                place.parent.mkdir(parents=True, exist_ok=True)
                storage.bucket.download_file(storage._normalize_name(found), str(place))
        yield str(target)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _scratch():
    folder = Path(settings.VAR_DIR) / "work"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def work_folder(name):
    """A fresh local folder for building a file before it is stored (cleared first, so
    whatever a killed run left is gone); on the storage's file system when that is local,
    so `put` moves the finished file by a rename."""
    folder = _scratch() / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def clear_work_folders(pattern):
    for folder in _scratch().glob(pattern):
        shutil.rmtree(folder, ignore_errors=True)


SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def private_file(path_or_handle, filename):
    """A private file's response (an export, a backup): an attachment no cache keeps."""
    response = FileResponse(path_or_handle, as_attachment=True, filename=filename)
    add_never_cache_headers(response)
    return response


def download(key, filename):
    """The response handing the stored file to the browser: streamed through this
    process, or (WORKBENCH_DOWNLOADS=signed, object store) a redirect to a short-lived
    signed URL; never kept by a cache. None when the file is gone."""
    response = _download(key, filename)
    if response is not None:
        add_never_cache_headers(response)
    return response


def _download(key, filename):
    storage = _storage()
    filename = SAFE_NAME.sub("_", filename)
    if settings.DOWNLOADS == "signed" and is_remote():
        if not storage.exists(key):
            return None
        return HttpResponseRedirect(storage.url(key, expire=settings.SIGNED_URL_SECONDS, parameters={
            "ResponseContentDisposition": f'attachment; filename="{filename}"'}))
    if is_remote():
        obj = storage.bucket.Object(storage._normalize_name(key))
        try:
            answer = obj.get()
        except storage.connection.meta.client.exceptions.NoSuchKey:
            return None
        response = private_file(answer["Body"], filename)
        response["Content-Length"] = answer["ContentLength"]
        return response
    try:
        handle = storage.open(key, "rb")
    except FileNotFoundError:
        return None
    return private_file(handle, filename)


def answers():
    """For /readyz: the bucket answers (one HEAD request), or the local folder is writable."""
    storage = _storage()
    if is_remote():
        storage.connection.meta.client.head_bucket(Bucket=storage.bucket_name)
        return True
    folder = Path(storage.location)
    folder.mkdir(parents=True, exist_ok=True)
    return os.access(folder, os.W_OK)

"""Backing up one study and restoring it onto another instance.

A backup is a zip that holds everything the study is, so a fresh instance (migrated,
empty) that restores it gives the same pages and a byte-identical export:

    manifest.json            format, study slug, the migrations applied, row counts,
                             the sha256 of every other member
    users.json               the accounts the rows name: username, names, email (no
                             password: a restored account signs in after a reset)
    rows/NNN-app.model.jsonl the rows, one JSON object a line (Django's serializer,
                             accounts by username)
    files/<key>              the study's stored files (workbench.storage): its uploads
                             and export bundles

Which rows: the study and every row of the coding app that hangs off it, found by
following the foreign keys that point at rows already taken (codebooks, their
versions, questions and options; items, assignments, codings; decisions,
memberships, raters, the audit trail …), so a model added later comes along by
itself. Rows they name outside the study (the documents, their posts and snapshots)
come too; on restore those already present are kept as they are. Jobs are not
kept: a restored import run names no job. Secrets are not kept: a model rater's stored
API key is left out (SECRETS).

Restoring keeps every id, so it refuses a target where any of the study's rows, or
a study of that slug, already exists, and a target that lacks a migration the
backup was made with. It writes in one transaction: nothing half-restored stays.
"""

import datetime
import hashlib
import json
import shutil
import zipfile
from collections import defaultdict
from pathlib import Path

from django.apps import apps
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Q
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from coding.accounts.languages import job_language
from coding.models import ModelSettings, Role, Study
from workbench import jobs, storage
from workbench.models import Job

FORMAT = "workbench-study-backup/1"
# Rows of these apps that point at the study's rows belong to it.
OWNED_APPS = {"coding"}
# Named by the study's rows but not kept: on restore the reference is cleared.
NOT_KEPT = {Job}
# Secrets a backup never carries: a model rater's stored API key (restored without one,
# the owner enters it again; it was encrypted under this install's key anyway).
SECRETS = {ModelSettings: ("api_key_encrypted",)}
BATCH = 2000


class BackupError(Exception):
    """A backup that cannot be restored here, and why (named for the operator)."""


def owned_querysets(study):
    """{model: queryset of its rows that belong to the study}, by following foreign keys
    from the study; querysets stay lazy (subqueries), so no id list grows with the study."""
    owned = {Study: Study.objects.filter(pk=study.pk)}
    changed = True
    while changed:
        changed = False
        for model in apps.get_models():
            if model._meta.app_label not in OWNED_APPS or model in owned:
                continue
            links = [field for field in model._meta.concrete_fields
                     if field.is_relation and field.related_model in owned
                     and field.related_model is not model]
            if links:
                owned[model] = model.objects.filter(
                    _any(Q(**{f"{f.name}__in": owned[f.related_model].values("pk")})
                         for f in links))
                changed = True
    return owned


def _any(conditions):
    combined = Q()
    for condition in conditions:
        combined |= condition
    return combined


def shared_querysets(owned):
    """Rows outside the study that its rows name (documents, snapshots, their posts)."""
    user = get_user_model()
    shared = {}
    pending = list(owned.items())
    while pending:
        model, rows = pending.pop()
        for field in model._meta.concrete_fields:
            target = field.related_model
            if (not field.is_relation or target in owned or target in NOT_KEPT
                    or target is user or target is model):
                continue
            wanted = target.objects.filter(pk__in=rows.values(field.attname))
            shared[target] = (shared[target] | wanted) if target in shared else wanted
            pending.append((target, wanted))
    # Parts of a shared row that go with it (a document's posts).
    for model in list(shared):
        for relation in model._meta.related_objects:
            part = relation.related_model
            if (relation.one_to_many and relation.on_delete is models.CASCADE
                    and part._meta.app_label == model._meta.app_label and part not in shared):
                shared[part] = part.objects.filter(
                    **{f"{relation.field.name}__in": shared[model].values("pk")})
    return shared


def users_named(querysets):
    user = get_user_model()
    ids = set()
    for model, rows in querysets.items():
        for field in model._meta.concrete_fields:
            if field.is_relation and field.related_model is user:
                ids.update(rows.exclude(**{f"{field.attname}__isnull": True})
                           .values_list(field.attname, flat=True).distinct())
    return user.objects.filter(pk__in=ids).order_by("username")


def in_order(querysets):
    """Models in a stable order (the file names of the backup)."""
    return sorted(querysets.items(), key=lambda pair: pair[0]._meta.label)


def stored_keys(study):
    return [key for area in ("uploads", "exports") for key in storage.walk(f"{area}/{study.slug}")]


def back_up(study, path, report=None):
    """Write the study's backup zip to `path`; returns its summary (counts, sha256)."""
    report = report or (lambda *args, **kwargs: None)
    owned = owned_querysets(study)
    shared = shared_querysets(owned)
    tables = in_order(shared) + in_order(owned)
    keys = stored_keys(study)
    total = sum(rows.count() for _, rows in tables) + len(keys)
    done, counts, sums = 0, {}, {}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        users = [{"username": u.username, "first_name": u.first_name, "last_name": u.last_name,
                  "email": u.email} for u in users_named(dict(tables))]
        sums["users.json"] = _write(bundle, "users.json", json.dumps(users, indent=1).encode())
        for number, (model, rows) in enumerate(tables):
            name = f"rows/{number:03d}-{model._meta.label_lower}.jsonl"
            with bundle.open(name, "w") as member:
                digest = hashlib.sha256()
                written = 0
                for batch in _batches(rows.order_by("pk")):
                    for row in batch:
                        for secret in SECRETS.get(model, ()):
                            setattr(row, secret, "")
                    text = serializers.serialize("jsonl", batch, use_natural_foreign_keys=True,
                                                 cls=ExactEncoder)
                    data = text.encode() + (b"\n" if text and not text.endswith("\n") else b"")
                    member.write(data)
                    digest.update(data)
                    written += len(batch)
                    done += len(batch)
                    report(done, total, f"{model._meta.verbose_name_plural}: {written:,} rows")
            counts[model._meta.label] = written
            sums[name] = digest.hexdigest()
        for key in keys:
            digest = hashlib.sha256()
            with storage.open_stream(key) as stream, bundle.open(f"files/{key}", "w") as member:
                for chunk in iter(lambda: stream.read(storage.CHUNK), b""):
                    member.write(chunk)
                    digest.update(chunk)
            sums[f"files/{key}"] = digest.hexdigest()
            done += 1
            report(done, total, f"files: {key.rsplit('/', 1)[-1]}")
        manifest = {"format": FORMAT, "study": study.slug, "name": study.name,
                    "migrations": sorted(_applied()), "rows": counts, "files": keys,
                    "sha256": sums}
        bundle.writestr("manifest.json", json.dumps(manifest, indent=1))
    return {"study": study.slug, "rows": counts, "files": len(keys),
            "bytes": Path(path).stat().st_size, "sha256": storage_sha256(path)}


class ExactEncoder(DjangoJSONEncoder):
    """Times to the microsecond: Django's encoder cuts them to milliseconds, and a restored
    row must be the row that was backed up (exports carry these times)."""

    def default(self, o):
        if isinstance(o, datetime.datetime):
            return o.isoformat()
        return super().default(o)


def _batches(rows):
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        batch.append(row)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _write(bundle, name, data):
    bundle.writestr(name, data)
    return hashlib.sha256(data).hexdigest()


def storage_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(storage.CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _applied():
    return {f"{app}.{name}" for app, name in MigrationRecorder(connection).applied_migrations()}


# --- restoring -----------------------------------------------------------------------

def read_manifest(bundle):
    try:
        manifest = json.loads(bundle.read("manifest.json"))
    except KeyError:
        raise BackupError(gettext("this zip has no manifest.json: it is not a study "
                                  "backup")) from None
    if manifest.get("format") != FORMAT:
        raise BackupError(gettext("unknown backup format %(format)s; this instance reads "
                                  "%(reads)s")
                          % {"format": f"{manifest.get('format')!r:.60}", "reads": FORMAT})
    for name, expected in manifest["sha256"].items():
        digest = hashlib.sha256()
        with bundle.open(name) as member:
            for chunk in iter(lambda: member.read(storage.CHUNK), b""):
                digest.update(chunk)
        if digest.hexdigest() != expected:
            raise BackupError(gettext("%(name)s in the backup is damaged (its checksum "
                                      "differs)") % {"name": name})
    return manifest


def restore(path, report=None):
    """Restore a backup zip onto this instance; returns the study. BackupError (nothing
    written) when it cannot be restored here."""
    report = report or (lambda *args, **kwargs: None)
    with zipfile.ZipFile(path) as bundle:
        manifest = read_manifest(bundle)
        check_target(manifest)
        present = check_free(bundle)
        total = sum(manifest["rows"].values()) + len(manifest["files"])
        with transaction.atomic():
            # Accounts first: the rows name them by username.
            _make_users(json.loads(bundle.read("users.json")))
            done = _save(bundle, present, report, total)
            for key in manifest["files"]:
                _restore_file(bundle, key)
                done += 1
                report(done, total, f"files: {key.rsplit('/', 1)[-1]}")
    return Study.objects.get(slug=manifest["study"])


def check_target(manifest):
    missing = sorted(set(manifest["migrations"]) - _applied())
    if missing:
        raise BackupError(gettext("this instance lacks %(count)s migration(s) the backup was "
                                  "made with (first: %(first)s); update it and run migrate "
                                  "first") % {"count": len(missing), "first": missing[0]})
    if Study.objects.filter(slug=manifest["study"]).exists():
        raise BackupError(gettext("a study %(slug)r exists here already; restore onto a "
                                  "fresh instance, or archive and rename that study first")
                          % {"slug": manifest["study"]})


def _lines(bundle):
    for name in sorted(n for n in bundle.namelist() if n.startswith("rows/")):
        with bundle.open(name) as member:
            for line in member:
                if line.strip():
                    yield line.decode()


def check_free(bundle):
    """Refuse when any of the study's own rows has an id taken here; returns the ids of
    the shared rows (documents …) present already, which are kept as they are."""
    ids = defaultdict(list)
    for line in _lines(bundle):
        row = json.loads(line)
        ids[row["model"]].append(row["pk"])
    present = {}
    for label, pks in ids.items():
        model = apps.get_model(label)
        found = set()
        for start in range(0, len(pks), BATCH):
            found.update(model.objects.filter(pk__in=pks[start:start + BATCH])
                         .values_list("pk", flat=True))
        if found and model._meta.app_label in OWNED_APPS:
            raise BackupError(gettext("%(model)s %(id)s exists here already: a backup "
                                      "restores onto a fresh instance")
                              % {"model": model._meta.verbose_name, "id": min(found)})
        present[model] = found
    return present


def _make_users(users):
    user = get_user_model()
    have = set(user.objects.filter(username__in=[u["username"] for u in users])
               .values_list("username", flat=True))
    for entry in users:
        if entry["username"] not in have:
            made = user(**entry)
            made.set_unusable_password()
            made.save()


def _save(bundle, present, report, total):
    """Write the rows, ids kept, constraints checked at the end (rows come in file order,
    not in the order their references need); returns how many were done."""
    touched, done = set(), 0
    with connection.constraint_checks_disabled():
        for line in _lines(bundle):
            (item,) = serializers.deserialize("jsonl", line)
            model = type(item.object)
            done += 1
            if item.object.pk in present.get(model, ()):
                continue  # a document this instance has already
            for field in model._meta.concrete_fields:
                if field.is_relation and field.related_model in NOT_KEPT:
                    setattr(item.object, field.attname, None)
            item.save()
            touched.add(model)
            if done % BATCH == 0:
                report(done, total, f"{done:,} of {total:,} rows")
    connection.check_constraints(table_names=[m._meta.db_table for m in touched])
    # Ids were kept: the sequences go on after the highest restored one.
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), list(touched)):
            cursor.execute(statement)
    return done


def _restore_file(bundle, key):
    work = storage.work_folder(f"restore-{hashlib.sha256(key.encode()).hexdigest()[:16]}")
    try:
        target = work / key.rsplit("/", 1)[-1]
        with bundle.open(f"files/{key}") as member, open(target, "wb") as out:
            shutil.copyfileobj(member, out, storage.CHUNK)
        storage.put(key, target, sha256=storage_sha256(target))
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- as jobs -----------------------------------------------------------------------

# A backup that cannot be restored here says why in words written for the operator.
jobs.user_facing(BackupError)


def start_backup(study, user):
    """Queue a backup of the study (owners); the job's page shows progress and the link."""
    # A refusal is written in the language its starter reads here: the page's, English from
    # the API (coding.accounts.languages.job_language).
    return jobs.enqueue("backup_study", {"study": study.pk, "study_slug": study.slug,
                                         "language": translation.get_language()}, user=user)


def backup_name(job):
    return f"{job.params['study_slug']}-backup-{job.pk}.zip"


def backup_key(job):
    return storage.backup_key(job.params["study_slug"], backup_name(job))


@jobs.job_handler("backup_study")
def run_backup(job, report):
    """Safe to run again: built in a work folder of this run's own, stored when complete
    (checksum verified), under a key of the job's own."""
    study = Study.objects.get(pk=job.params["study"])
    if Role.OWNER not in (study.roles_of(job.created_by) if job.created_by_id else ()):
        with translation.override(job_language(job)):
            raise jobs.JobError(gettext("Backup refused: whoever asked for job %(job)s is no "
                                        "longer an owner of this study.") % {"job": job.pk})
    storage.clear_work_folders(f"backup-{job.pk}-*")
    work = storage.work_folder(f"backup-{job.pk}-{job.attempts}")
    try:
        summary = back_up(study, work / backup_name(job), report)
        storage.put(backup_key(job), work / backup_name(job), sha256=summary["sha256"])
    finally:
        storage.clear_work_folders(f"backup-{job.pk}-*")
    return {**summary, "filename": backup_name(job),
            "download": reverse("backup-download", args=[study.slug, job.pk])}


@jobs.job_handler("restore_study")
def run_restore(job, report):
    """Restore the stored backup job.params["stored"] (put there by `manage.py
    restore_study`); all or nothing, so a rerun after a dead worker starts clean."""
    try:
        with storage.local_copy(job.params["stored"]) as path:
            study = restore(path, report)
    except zipfile.BadZipFile:
        raise BackupError(gettext("the file is not a zip: not a study backup")) from None
    return {"study": study.slug, "url": reverse("study-detail", args=[study.slug])}

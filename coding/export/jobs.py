"""Exports as jobs: the bundle is stored (workbench.storage, exports/<study>/) and linked
from the job.

The job exports what its requester may receive: their roles in the study when the
job starts (not when it was asked for) choose the blinding projection, so a person
removed or demoted meanwhile gets what they may have now, or nothing.
"""

from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from coding.access.blinding import withheld_names
from coding.accounts.languages import job_language
from coding.export.bundle import build_bundle, check_options, sha256
from coding.export.qdpx import SCOPES, build_qdpx
from coding.models import Role, Study
from workbench import jobs, storage

# "the bundle was stored with another checksum": written for people, naming no place.
jobs.user_facing(storage.StorageError)

# Who may export a study's dataset (coders never: they would see the others' work).
EXPORTERS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


def bundle_name(slug, shapes, fmt, day, job_id=None):
    """The name a bundle is stored and downloaded under: study, shapes, format, the day it
    was asked for and the export job if there is one, so exports are told apart
    (rl-study-wide-items-parquet-2026-12-06-41.zip)."""
    return "-".join([slug, *shapes, fmt, f"{day:%Y-%m-%d}",
                     *([str(job_id)] if job_id else [])]) + ".zip"


def qdpx_name(slug, scope, day, job_id=None):
    """The name a REFI-QDA project is stored and downloaded under
    (rl-study-sample-2026-12-07-41.qdpx)."""
    return "-".join([slug, scope, f"{day:%Y-%m-%d}", *([str(job_id)] if job_id else [])]) + \
        ".qdpx"


def export_name(job):
    """The job's bundle's name: the one its result gives once done (a bundle stored before
    names carried format and day keeps its own), else made by bundle_name (qdpx_name for a
    REFI-QDA project)."""
    if job.kind == "export_qdpx":
        return (job.result or {}).get("filename") or qdpx_name(
            job.params["study_slug"], job.params["scope"], job.created_at, job.pk)
    return (job.result or {}).get("filename") or bundle_name(
        job.params["study_slug"], job.params["shapes"], job.params["format"], job.created_at,
        job.pk)


def export_key(job):
    """Where the job's bundle is stored."""
    return storage.export_key(job.params["study_slug"], export_name(job))


def start_export(study, user, *, shapes, fmt, include_mapping=False):
    """Queue an export of the study; returns the job (its page shows progress and the link)."""
    check_options(shapes, fmt)
    return jobs.enqueue("export", {
        "study": study.pk, "study_slug": study.slug, "study_name": study.name, "shapes": list(shapes), "format": fmt,
        "include_mapping": include_mapping,
        # A refusal is written in the language its starter reads here: the page's, English
        # from the API (coding.accounts.languages.job_language).
        "language": translation.get_language(),
    }, user=user)


def start_qdpx_export(study, user, *, scope="study", names=False):
    """Queue an export of the study as a REFI-QDA project (coding.export.qdpx)."""
    if scope not in SCOPES:
        raise ValueError(gettext("scope must be one of %(scopes)s") % {
            "scopes": ", ".join(SCOPES)})
    return jobs.enqueue("export_qdpx", {
        "study": study.pk, "study_slug": study.slug, "study_name": study.name, "scope": scope,
        "include_mapping": bool(names), "language": translation.get_language()}, user=user)


def requester_roles(job, study):
    """The roles of whoever asked for the export, as they are now; refused if none may export."""
    roles = study.roles_of(job.created_by) if job.created_by_id else frozenset()
    with translation.override(job_language(job)):
        if not roles & EXPORTERS:
            raise jobs.JobError(gettext("Export refused: whoever asked for job %(job)s no "
                                        "longer holds a role in this study that may export.")
                                % {"job": job.pk})
        if job.params.get("include_mapping") and Role.OWNER not in roles:
            raise jobs.JobError(gettext("Export refused: only owners may export the coder "
                                        "mapping, and whoever asked for job %(job)s is no "
                                        "longer an owner.") % {"job": job.pk})
    return roles


@jobs.job_handler("export")
def run_export(job, report):
    """Safe to run again after a worker died mid-export (stored_export)."""
    return stored_export(job, lambda study, roles, path: build_bundle(
        study, path, shapes=job.params["shapes"], fmt=job.params["format"],
        include_mapping=job.params.get("include_mapping", False), report=report, roles=roles))


@jobs.job_handler("export_qdpx")
def run_qdpx_export(job, report):
    """As run_export, for a REFI-QDA project: names only for an owner who asked for them."""
    return stored_export(job, lambda study, roles, path: build_qdpx(
        study, path, scope=job.params["scope"], roles=roles,
        names=job.params.get("include_mapping", False), report=report))


def stored_export(job, build):
    """build(study, roles, path) run for the job's requester and its file stored.

    The file is built in a local work folder of this run's own (named by the
    attempt; a killed run's leftovers are cleared first) and stored under its key
    only once complete: locally by a rename, in an object store by an upload whose
    checksum is verified by reading it back. The download link is only offered once
    the job is done. The result names the file and its download URL, never a place.
    """
    study = Study.objects.get(pk=job.params["study"])
    roles = requester_roles(job, study)
    name = export_name(job)
    storage.clear_work_folders(f"export-{job.pk}-*")
    work = storage.work_folder(f"export-{job.pk}-{job.attempts}")
    try:
        summary = build(study, roles, work / name)
        summary.setdefault("sha256", sha256(work / name))
        summary.setdefault("withheld", withheld_names(study, roles))
        storage.put(export_key(job), work / name, sha256=summary["sha256"])
    finally:
        storage.clear_work_folders(f"export-{job.pk}-*")
    return {**summary, "filename": name,
            "download": reverse("export-download", args=[study.slug, job.pk])}

"""Exports as jobs: the bundle is written under VAR_DIR/exports and linked from the job.

The job exports what its requester may receive: their roles in the study when the
job starts (not when it was asked for) choose the blinding projection, so a person
removed or demoted meanwhile gets what they may have now, or nothing.
"""

import os
import shutil
from pathlib import Path

from django.conf import settings
from django.urls import reverse

from coding.models import Role, Study
from workbench import jobs

from .bundle import build_bundle, check_options

EXPORT_DIR = Path(settings.VAR_DIR) / "exports"
# Who may export a study's dataset (coders never: they would see the others' work).
EXPORTERS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


def export_path(job):
    study = job.params["study_slug"]
    return EXPORT_DIR / study / f"{study}-{job.pk}-{'-'.join(job.params['shapes'])}.zip"


def start_export(study, user, *, shapes, fmt, include_mapping=False):
    """Queue an export of the study; returns the job (its page shows progress and the link)."""
    check_options(shapes, fmt)
    return jobs.enqueue("export", {
        "study": study.pk, "study_slug": study.slug, "study_name": study.name, "shapes": list(shapes), "format": fmt,
        "include_mapping": include_mapping,
    }, user=user)


def work_dir(job):
    """Where a run of the job writes: a folder of its own beside the bundle, named by the
    attempt, so two runs never share one, and whatever a killed run left (temporary
    tables, a partial zip) is found and removed by the next."""
    return EXPORT_DIR / job.params["study_slug"] / f".job-{job.pk}-{job.attempts}"


def requester_roles(job, study):
    """The roles of whoever asked for the export, as they are now; refused if none may export."""
    roles = study.roles_of(job.created_by) if job.created_by_id else frozenset()
    if not roles & EXPORTERS:
        raise jobs.JobError(f"Export refused: whoever asked for job {job.pk} no longer holds a "
                            "role in this study that may export.")
    if job.params.get("include_mapping") and Role.OWNER not in roles:
        raise jobs.JobError("Export refused: only owners may export the coder mapping, and "
                            f"whoever asked for job {job.pk} is no longer an owner.")
    return roles


@jobs.job_handler("export")
def run_export(job, report):
    """Safe to run again after a worker died mid-export.

    The bundle is built in the job's own work folder (cleared first, so a killed
    run's leftovers go) and moved to its published name only once complete, by a
    rename on the same file system: the download never sees a partial file, and
    the download link is only offered once the job is done. The result names the
    file and its download URL, never its place on the server.
    """
    study = Study.objects.get(pk=job.params["study"])
    roles = requester_roles(job, study)
    path = export_path(job)
    work = work_dir(job)
    for earlier in work.parent.glob(f".job-{job.pk}-*"):
        shutil.rmtree(earlier, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        summary = build_bundle(study, work / path.name, shapes=job.params["shapes"],
                               fmt=job.params["format"],
                               include_mapping=job.params.get("include_mapping", False),
                               report=report, roles=roles)
        os.replace(work / path.name, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {**summary, "filename": path.name,
            "download": reverse("export-download", args=[study.slug, job.pk])}

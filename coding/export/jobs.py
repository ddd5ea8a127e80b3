"""Exports as jobs: the bundle is written under VAR_DIR/exports and linked from the job."""

from pathlib import Path

from django.conf import settings
from django.urls import reverse

from coding.models import Study
from workbench import jobs

from .bundle import build_bundle, check_options

EXPORT_DIR = Path(settings.VAR_DIR) / "exports"


def export_path(job):
    study = job.params["study_slug"]
    return EXPORT_DIR / study / f"{study}-{job.pk}-{'-'.join(job.params['shapes'])}.zip"


def start_export(study, user, *, shapes, fmt, include_mapping=False):
    """Queue an export of the study; returns the job (its page shows progress and the link)."""
    check_options(shapes, fmt)
    return jobs.enqueue("export", {
        "study": study.pk, "study_slug": study.slug, "shapes": list(shapes), "format": fmt,
        "include_mapping": include_mapping,
    }, user=user)


@jobs.job_handler("export")
def run_export(job, report):
    """Writes to a temporary file renamed when complete, so a re-run after a crash is harmless."""
    study = Study.objects.get(pk=job.params["study"])
    path = export_path(job)
    summary = build_bundle(study, path, shapes=job.params["shapes"], fmt=job.params["format"],
                           include_mapping=job.params.get("include_mapping", False),
                           report=report)
    return {**summary, "filename": path.name,
            "download": reverse("export-download", args=[study.slug, job.pk])}

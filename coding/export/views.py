"""Exporting the coded dataset from the browser: small exports at once, large ones as a job.

Either way the bundle is what the requester's roles may receive (coding.access.blinding):
blinded fields reach owners, and adjudicators and viewers only while the study lets
adjudicators see them.
"""

import tempfile
from pathlib import Path

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_http_methods, require_safe

from coding.access.blinding import withheld_names
from coding.access.roles import access_study
from coding.export.bundle import FORMATS, SHAPES, build_bundle, estimate_rows
from coding.export.jobs import (
    EXPORTERS, bundle_name, export_key, export_name, start_export, start_qdpx_export,
)
from coding.labeling.codings import record_reads
from coding.models import OthersWorkRead, Role
from workbench import storage
from workbench.models import Job

# Up to this many rows the browser gets the file in the same request.
AT_ONCE_ROWS = 50_000


class ExportForm(forms.Form):
    shapes = forms.MultipleChoiceField(choices=[(s, s) for s in SHAPES], initial=list(SHAPES),
                                       widget=forms.CheckboxSelectMultiple,
                                       label=gettext_lazy("Tables"))
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], initial="csv",
                               label=gettext_lazy("Format"))
    include_mapping = forms.BooleanField(required=False, label=gettext_lazy(
        "Include the coder name mapping (owners only)"))


class QdpxForm(forms.Form):
    scope = forms.ChoiceField(label=gettext_lazy("What"), initial="study", choices=[
        ("study", gettext_lazy("the whole study")), ("main", gettext_lazy("the main round")),
        ("calibration", gettext_lazy("the calibration round")),
        ("sample", gettext_lazy("the reliability sample"))])
    names = forms.BooleanField(required=False, label=gettext_lazy(
        "Coders by their user names instead of coder_1, coder_2 … (owners only)"))


@login_required
@require_http_methods(["POST"])
def export_qdpx(request, slug):
    """Start an export as a REFI-QDA project; its job page shows progress and the link."""
    study = access_study(request.user, slug, roles=EXPORTERS)
    form = QdpxForm(request.POST)
    if not form.is_valid():
        return render(request, "coding/export.html", {
            **page_context(study, request.user), "qdpx_form": form}, status=400)
    record_reads(study, request.user, OthersWorkRead.Kind.EXPORT)  # the whole study
    job = start_qdpx_export(study, request.user, scope=form.cleaned_data["scope"],
                            names=form.cleaned_data["names"] and Role.OWNER in study.my_roles)
    return redirect("job-detail", pk=job.pk)


def page_context(study, user, form=None):
    exports = Job.objects.filter(kind__in=("export", "export_qdpx"), params__study=study.pk,
                                 created_by=user)
    return {"study": study, "form": form or ExportForm(), "qdpx_form": QdpxForm(),
            "exports": exports[:20], "is_owner": Role.OWNER in study.my_roles,
            "at_once": AT_ONCE_ROWS}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def export_page(request, slug):
    study = access_study(request.user, slug, roles=EXPORTERS)
    form = ExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        shapes = [s for s in SHAPES if s in form.cleaned_data["shapes"]]
        record_reads(study, request.user, OthersWorkRead.Kind.EXPORT)  # the whole study
        options = {"shapes": shapes, "fmt": form.cleaned_data["format"],
                   "include_mapping": form.cleaned_data["include_mapping"]
                   and Role.OWNER in study.my_roles}
        if estimate_rows(study, shapes) <= AT_ONCE_ROWS:
            return download_now(study, options, study.my_roles)
        job = start_export(study, request.user, **options)
        return redirect("job-detail", pk=job.pk)
    return render(request, "coding/export.html", page_context(study, request.user, form))


def download_now(study, options, roles):
    folder = Path(tempfile.mkdtemp(prefix="export-"))
    path = folder / bundle_name(study.slug, options["shapes"], options["fmt"], timezone.now())
    build_bundle(study, path, **options, roles=roles)
    return storage.private_file(open(path, "rb"), path.name)


@login_required
@require_safe
def export_download(request, slug, job_id):
    study = access_study(request.user, slug, roles=EXPORTERS)
    job = Job.objects.filter(pk=job_id, kind__in=("export", "export_qdpx"),
                             params__study=study.pk, status=Job.Status.DONE).first()
    if job is None or not (job.created_by_id == request.user.pk or Role.OWNER in study.my_roles):
        raise Http404(gettext("No such export."))
    # A bundle written while its requester could see more than they may now (the study
    # blinded another field, or stopped showing adjudicators blinded fields) is not
    # handed out again to anyone but an owner.
    withheld_then = set((job.result or {}).get("withheld", ()))
    if not set(withheld_names(study, study.my_roles)) <= withheld_then:
        raise Http404(gettext("This export holds fields you may no longer see; export again."))
    response = storage.download(export_key(job), export_name(job))
    if response is None:
        raise Http404(gettext("This export's file is gone; export again."))
    return response

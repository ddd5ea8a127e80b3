"""Codebooks as files: JSON and YAML (one versioned schema) and REFI-QDA .qdc: pages.

Any member who may see a codebook downloads any of its published versions, owners its
drafts too (the rule of the codebook page); only owners import."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils.http import content_disposition_header
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_safe

from coding.access.roles import access_study
from coding.codebooks.files import (
    FILE_KINDS, FORMATS, MAX_FILE_BYTES, MEDIA_TYPES, InvalidSpec, dump, file_name, import_file,
    read_upload,
)
from coding.codebooks.versions import readable_versions
from coding.models import Role


def access_version(user, slug, codebook_id, number):
    """A codebook version the user may see: a published one for any member, a draft for
    owners only (404 for anyone else)."""
    study = access_study(user, slug)
    codebook = get_object_or_404(study.codebooks, pk=codebook_id)
    return get_object_or_404(readable_versions(codebook.versions.select_related("codebook"),
                                               study.my_roles), number=number)


def file_response(version, fmt):
    """The version as a download; 400 when the format cannot hold it (.qdc needs a code)."""
    try:
        data = dump(version, fmt)
    except ValueError as error:
        return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(data, content_type=f"{MEDIA_TYPES[fmt]}; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, file_name(version, fmt))
    return response


@login_required
@require_safe
def codebook_file(request, slug, codebook_id, number, fmt):
    if fmt not in FORMATS:
        raise Http404(_("No such format."))
    return file_response(access_version(request.user, slug, codebook_id, number), fmt)


class CodebookImportForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("Codebook file"))
    format = forms.ChoiceField(required=False, label=gettext_lazy("Format"), choices=[
        ("", gettext_lazy("Tell from the file name (.json, .yaml, .qdc)"))]
        + list(FILE_KINDS.items()))
    target = forms.ChoiceField(label=gettext_lazy("Import as"))
    name = forms.CharField(required=False, max_length=200, label=gettext_lazy("Name (optional)"),
                           help_text=gettext_lazy(
        "A new codebook takes the name in the file (a .qdc file has none: its file name); "
        "give one here to use another. An existing codebook keeps its name unless you give "
        "one."))
    applies_to = forms.ChoiceField(
        choices=[("paper", gettext_lazy("Papers")),
                 ("thread", gettext_lazy("Threads (issues and pull requests)"))],
        initial="paper", label=gettext_lazy("A new codebook from a .qdc file codes"),
        help_text=gettext_lazy("A .qdc file does not say; JSON and YAML files do."))
    # Set by the "Check only" button: everything is checked, nothing written.
    dry_run = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, study, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["file"].help_text = _(
            "JSON or YAML in the workbench's codebook format, or a REFI-QDA codebook (.qdc) "
            "exported from ATLAS.ti, MAXQDA or NVivo; at most %(megabytes)s MB."
        ) % {"megabytes": f"{MAX_FILE_BYTES / 1e6:g}"}
        choices = [("new", _("A new codebook (draft v1, published only when you publish it)"))]
        for codebook in study.codebooks.prefetch_related("versions").order_by("name"):
            latest = max(codebook.versions.all(), key=lambda v: v.number, default=None)
            if latest is not None and not latest.is_published:
                what = _("%(name)s: replace the questions of its draft v%(number)s") % {
                    "name": codebook.name, "number": latest.number}
            else:
                what = _("%(name)s: a new draft version v%(number)s") % {
                    "name": codebook.name, "number": latest.number + 1 if latest else 1}
            choices.append((str(codebook.pk), what))
        self.fields["target"].choices = choices
        self.codebooks = {str(c.pk): c for c in study.codebooks.all()}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def codebook_import(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    form = CodebookImportForm(study, request.POST or None, request.FILES or None)
    problems, result = [], None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            result = import_file(
                study, request.user, read_upload(data["file"]), filename=data["file"].name,
                fmt=data["format"] or None, codebook=form.codebooks.get(data["target"]),
                name=data["name"].strip(), applies_to=data["applies_to"],
                dry_run=data["dry_run"])
        except InvalidSpec as error:
            problems = error.errors
        else:
            if not result["dry_run"]:
                messages.success(request, _("Imported %(name)s v%(number)s as a draft: review "
                                            "it, then publish it.")
                                 % {"name": result["codebook"], "number": result["version"]})
                return redirect("codebook-version", study.slug, result["codebook_id"],
                                result["version"])
    return render(request, "coding/codebook_import.html", {
        "study": study, "form": form, "problems": problems, "result": result,
        "codebooks": study.codebooks.prefetch_related("versions").order_by("name"),
        "formats": FILE_KINDS,
    }, status=400 if problems else 200)


urlpatterns = [
    path("studies/<slug:slug>/codebooks/import/", codebook_import, name="codebook-import"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/v<int:number>/file/<str:fmt>/",
         codebook_file, name="codebook-file"),
]

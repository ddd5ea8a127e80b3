"""The method catalog and the per-framework pages. Inclusion is blinded: no coder sees these."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_safe

from coding.access.blinding import check_inclusion_visible
from coding.access.roles import access_study
from coding.catalog import edit as catalog_edit
from coding.catalog import landings
from coding.labeling.views.imports import in_import_folder
from coding.models import Role
from workbench import jobs

SEES_INCLUSION = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


def access_catalog(user, slug):
    study = access_study(user, slug, roles=SEES_INCLUSION)
    check_inclusion_visible(study, study.my_roles)
    return study


class ScanForm(forms.Form):
    repo = forms.CharField(label=gettext_lazy("Clone in the server's import folder"),
                           max_length=500, help_text=gettext_lazy(
                               "A folder name under WORKBENCH_IMPORT_DIR, where an "
                               "administrator cloned the framework."))
    branch = forms.CharField(max_length=100, required=False, label=gettext_lazy("Branch"),
                             help_text=gettext_lazy("Leave empty for the framework's default "
                                                    "branch."))

    def clean_branch(self):
        branch = self.cleaned_data["branch"]
        try:
            return catalog_edit.check_branch(branch) if branch else ""
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


@login_required
@require_safe
def catalog_page(request, slug):
    study = access_catalog(request.user, slug)
    return render(request, "coding/catalog.html", {
        "study": study, "rows": landings.catalog(study),
        "frameworks": study.frameworks.order_by("name"), "is_owner": Role.OWNER in study.my_roles,
    })


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def framework_page(request, slug, framework_id):
    study = access_catalog(request.user, slug)
    framework = get_object_or_404(study.frameworks, pk=framework_id)
    is_owner = Role.OWNER in study.my_roles
    if request.method == "POST" and not is_owner:
        raise PermissionDenied(_("Only the study's owners start history scans."))
    form = ScanForm(request.POST or None) if is_owner else None
    if request.method == "POST" and is_owner and form.is_valid():
        try:
            job = start_scan(framework, request.user, **form.cleaned_data)
            return redirect("job-detail", pk=job.pk)
        except ValueError as error:
            form.add_error("repo", str(error))
    report = landings.framework_report(framework)
    scan = report["scan"]
    options = list(framework.option_names.select_related("method", "hit")
                   .order_by("method__position", "method__name", "name"))
    return render(request, "coding/framework.html", {
        "study": study, **report, "form": form,
        "is_owner": is_owner, "option_names": options,
        # Names the next scan reads from the first commit (new, renamed, or never scanned).
        "unsearched": [o for o in options if not scan or o.name not in scan.searched_names],
    })


def start_scan(framework, user, repo, branch=""):
    """Queue a history scan of a clone in the import folder (ValueError if it is not)."""
    repo = in_import_folder(repo)
    return jobs.enqueue("scan_framework", {
        "framework": framework.pk, "study_slug": framework.study.slug, "repo": repo,
        "branch": branch or framework.main_branch}, user=user)

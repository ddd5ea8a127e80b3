"""The inclusion analysis page: included against not-included papers on every coded field,
with inclusion from the method tracker or from a list the team imported.

Inclusion is blinded from coders, so, as the agreement page, only owners, adjudicators
and viewers see it (a coder 403, a non-member 404, decided by coding.access.roles); only
owners import lists.
"""

from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from coding.access.blinding import check_inclusion_visible
from coding.access.roles import access_study
from coding.agreement.report import SEES_AGREEMENT
from coding.inclusion.analysis import analyse, parse_population
from coding.inclusion.lists import EXAMPLE, InclusionListError, import_list, lists_payload
from coding.inclusion.words import in_reader_language
from coding.labeling.codings import record_reads
from coding.models import OthersWorkRead, Role


class ListForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("List name"), max_length=100, help_text=gettext_lazy(
        "A list imported again under the same name replaces it."))
    file = forms.FileField(label=gettext_lazy("CSV file"), help_text=gettext_lazy(
        "Columns: paper (its arXiv identifier), framework, and optionally date (YYYY-MM-DD) "
        "and link (the commit, pull request or release)."))


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def inclusion_page(request, slug):
    study = access_study(request.user, slug, roles=SEES_AGREEMENT)
    check_inclusion_visible(study, study.my_roles)
    is_owner = Role.OWNER in study.my_roles
    form, list_errors = ListForm(), []
    if request.method == "POST":
        if not is_owner:
            raise PermissionDenied(_("Only the study's owners import inclusion lists."))
        form = ListForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                done = import_list(study, upload, form.cleaned_data["name"], request.user,
                                   file_name=upload.name)
            except InclusionListError as problem:
                list_errors = problem.errors
            else:
                messages.success(request, _(
                    "Inclusion list %(name)s imported: %(rows)s rows, %(papers)s papers.") % done)
                return redirect(f"{request.path}?{urlencode({'source': 'list:' + done['name']})}")
    record_reads(study, request.user, OthersWorkRead.Kind.INCLUSION)
    given = request.GET.get("population", "")
    source = request.GET.get("source", "")
    error = None
    try:
        analysis = analyse(study, parse_population(given), source or None)
    except ValueError as problem:
        error, analysis = str(problem), analyse(study)
    analysis = in_reader_language(study, analysis)
    for f in analysis.get("fields", []):  # the template reads one row per answer
        f["rows"] = list(zip(f["answers"], f["included"], f["included_share"],
                             f["not_included"], f["not_included_share"]))
        f["ratios"] = f["odds_ratios"] + ([f["odds_ratio"]] if f["odds_ratio"] else [])
    return render(request, "coding/inclusion.html", {
        "study": study, "analysis": analysis, "population": given, "error": error,
        "lists": lists_payload(study), "is_owner": is_owner, "form": form,
        "list_errors": list_errors, "example": EXAMPLE,
    }, status=400 if list_errors or form.errors else 200)

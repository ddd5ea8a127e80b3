"""The inclusion analysis page: included against not-included papers on every coded field.

Inclusion is blinded from coders, so, as the agreement page, only owners, adjudicators
and viewers see it (a coder 403, a non-member 404, decided by coding.access.roles).
"""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from coding.access.blinding import check_inclusion_visible
from coding.access.roles import access_study
from coding.agreement.report import SEES_AGREEMENT
from coding.inclusion.analysis import analyse, parse_population
from coding.labeling.codings import record_reads
from coding.models import OthersWorkRead


@login_required
@require_safe
def inclusion_page(request, slug):
    study = access_study(request.user, slug, roles=SEES_AGREEMENT)
    check_inclusion_visible(study, study.my_roles)
    record_reads(study, request.user, OthersWorkRead.Kind.INCLUSION)
    given = request.GET.get("population", "")
    error = None
    try:
        analysis = analyse(study, parse_population(given))
    except ValueError as problem:
        error, analysis = str(problem), analyse(study)
    for f in analysis.get("fields", []):  # the template reads one row per answer
        f["rows"] = list(zip(f["answers"], f["included"], f["not_included"]))
        f["ratios"] = f["odds_ratios"] + ([f["odds_ratio"]] if f["odds_ratio"] else [])
    return render(request, "coding/inclusion.html", {
        "study": study, "analysis": analysis, "population": given, "error": error})

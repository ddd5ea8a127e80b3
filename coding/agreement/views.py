"""The agreement page: reliability per question, over time, and a report for the paper.

Owners, adjudicators and viewers see it. A coder gets 403 (rule 1: no figure derived
from other coders' work), a non-member 404, both decided by coding.access.roles.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from coding.access.roles import access_study
from coding.agreement import snapshots
from coding.agreement.report import RECOMPUTES, SEES_AGREEMENT, PlanForm, dashboard


@login_required
@require_safe
def agreement_page(request, slug):
    study = access_study(request.user, slug, roles=SEES_AGREEMENT)
    form = PlanForm(request.GET or None)
    return render(request, "coding/agreement.html", {
        "study": study, "form": form, "can_recompute": bool(study.my_roles & RECOMPUTES),
        **dashboard(study, form.inputs()),
    })


@login_required
@require_POST
def agreement_recompute(request, slug):
    study = access_study(request.user, slug, roles=RECOMPUTES)
    job = snapshots.recompute(study, request.user)
    job.refresh_from_db()
    messages.success(request, _("Agreement recomputed (job %(job)s, %(status)s).")
                     % {"job": job.pk, "status": job.status} if job.finished
                     else _("Agreement is being recomputed (job %(job)s).") % {"job": job.pk})
    return redirect("agreement", slug=slug)

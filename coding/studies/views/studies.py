"""The study pages: your studies (home), a study at a glance, its settings. Thin: fetch
through coding.access.roles, call one function, render."""

import copy

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from coding.access.names import member_order, namer, sees_names
from coding.access.roles import access_study, may_create_study
from coding.codebooks.versions import readable_versions
from coding.models import CodebookVersion, Role, Study
from coding.studies import setup as study_setup
from coding.studies.forms import StudySettingsForm
from coding.studies.overview import study_overview


@login_required
@require_safe
def home(request):
    """Your live studies; archived ones only for their owners, to restore them."""
    studies = Study.objects.visible_to(request.user)
    cards = [study_overview(study, request.user) for study in study_setup.live(studies)]
    archived = study_setup.archived(studies).filter(
        memberships__user=request.user, memberships__role=Role.OWNER,
        memberships__deleted_at__isnull=True)
    return render(request, "coding/home.html", {
        "cards": cards, "archived": archived, "may_create": may_create_study(request.user),
    })


@login_required
@require_safe
def study_detail(request, slug):
    study = access_study(request.user, slug)
    # Drafts for owners only (codebooks.versions.readable_versions).
    codebooks = study.codebooks.prefetch_related(Prefetch("versions", queryset=readable_versions(
        CodebookVersion.objects.order_by("number"), study.my_roles)))
    names_hidden = not sees_names(study, study.my_roles)
    members = list(study.memberships.filter(deleted_at__isnull=True)
                   .select_related("user").order_by(*member_order(names_hidden)))
    checklist = study_setup.setup_checklist(study) if Role.OWNER in study.my_roles else None
    if names_hidden:
        name = namer(study, request.user, study.my_roles)
        for m in members:
            m.shown_name = name(m.user)
    return render(request, "coding/study_detail.html", {
        "names_hidden": names_hidden,
        "study": study, "card": study_overview(study, request.user),
        "codebooks": codebooks, "members": members,
        "is_owner": Role.OWNER in study.my_roles,
        "checklist": checklist,
        "setup_complete": checklist is not None and all(s.done for s in checklist if not s.optional),
    })


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def study_settings(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    # The form checks a copy: the study shown beside it (its name in the title) stays as saved.
    form = StudySettingsForm(request.POST or None, instance=copy.copy(study))
    if request.method == "POST" and form.is_valid():
        study_setup.update_study(study, request.user, form.cleaned_data)
        messages.success(request, _("Settings saved."))
        return redirect("study-detail", slug=study.slug)
    return render(request, "coding/study_settings.html", {"study": study, "form": form})

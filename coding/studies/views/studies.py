"""Browser pages. Thin: fetch through coding.access.roles, call one function, render."""

import copy

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from workbench.paging import after_token, bounded_count, make_token

from coding.codebooks import translations as codebook_translations
from coding.studies import setup as study_setup
from coding.access.roles import CAN_SEE_ALL_CODINGS, access_study, may_create_study
from coding.codebooks.editing import previous_version, version_diff
from coding.studies.forms import StudySettingsForm
from coding.models import Coding, Role, Study
from coding.access.names import namer, sees_names
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
    codebooks = study.codebooks.prefetch_related("versions")
    members = list(study.memberships.filter(deleted_at__isnull=True)
                   .select_related("user").order_by("role", "user__username"))
    names_hidden = not sees_names(study, study.my_roles)
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


@login_required
@require_safe
def codebook_detail(request, slug, codebook_id, number=None):
    study = access_study(request.user, slug)
    codebook = get_object_or_404(study.codebooks, pk=codebook_id)
    versions = codebook.versions.order_by("number")
    version = (get_object_or_404(versions, number=number) if number
               else codebook.current_version() or versions.last())
    questions = list(version.questions.prefetch_related("options"))
    # In the reader's language where the version has it, the original one click away.
    translated = codebook_translations.apply(version, questions, translation.get_language())
    previous = previous_version(version)
    return render(request, "coding/codebook_detail.html", {
        "study": study, "codebook": codebook, "version": version, "versions": versions,
        "questions": questions, "codebook_translated": translated,
        "previous": previous and previous.number,
        "diff": version_diff(version), "is_owner": Role.OWNER in study.my_roles,
    })


CODINGS_PER_PAGE = 50
CODINGS_ORDER = ("-id",)  # newest first: ids are given in the order codings are submitted


@login_required
@require_safe
def coding_list(request, slug):
    """Submitted codings, newest first: a coder's own, or everyone's for owners and
    adjudicators. Paged by keyset (?after=, as the review list), so a deep page costs what
    the first does; the count stops at 10,000 (workbench.paging.bounded_count)."""
    study = access_study(request.user, slug, roles={Role.CODER, *CAN_SEE_ALL_CODINGS})
    codings = Coding.objects.visible_to(request.user, study)
    count, count_exact = bounded_count(codings)
    rows = (codings.select_related("assignment__item__document", "assignment__coder",
                                   "codebook_version__codebook")
            .order_by(*CODINGS_ORDER))
    after = request.GET.get("after") or None
    if after:
        try:
            rows = rows.filter(after_token(CODINGS_ORDER, after, Coding))
        except ValueError:
            after = None  # not a token of this list (edited by hand): the first page
    page = list(rows[:CODINGS_PER_PAGE + 1])
    more = len(page) > CODINGS_PER_PAGE
    return render(request, "coding/coding_list.html", {
        "study": study, "codings": page[:CODINGS_PER_PAGE], "first_page": not after,
        "count": count, "count_exact": count_exact,
        # Counting stopped after the limit: "More than 10,000".
        "count_shown": f"{count if count_exact else count - 1:,}",
        "next_token": make_token(CODINGS_ORDER, page[CODINGS_PER_PAGE - 1]) if more else "",
        "sees_all": bool(study.my_roles & CAN_SEE_ALL_CODINGS),
    })

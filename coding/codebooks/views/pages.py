"""A codebook version as members read it: its questions (in the reader's language where the
version has them) and what changed from the previous version."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from coding.access.roles import access_study
from coding.codebooks import translations as codebook_translations
from coding.codebooks.editing import previous_version, version_diff
from coding.codebooks.versions import readable_versions
from coding.models import Role


@login_required
@require_safe
def codebook_detail(request, slug, codebook_id, number=None):
    study = access_study(request.user, slug)
    codebook = get_object_or_404(study.codebooks, pk=codebook_id)
    versions = readable_versions(codebook.versions.order_by("number"), study.my_roles)
    version = (get_object_or_404(versions, number=number) if number
               else codebook.current_version() or versions.last())
    if version is None:  # a codebook with a draft only, read by someone not an owner
        raise Http404(_("This codebook has no published version yet."))
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

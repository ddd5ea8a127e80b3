"""Creating, copying, renaming, archiving and restoring studies; the setup checklist and audit trail: pages.

`studies/new/` is routed in coding/urls.py ahead of `studies/<slug>/`, which would
otherwise take "new" for a study's slug."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from coding.access.roles import access_study, may_create_study
from coding.models import Role, Study
from coding.studies import setup as study_setup

BLANK, COPY = "blank", "copy"
AUDIT_PAGE_SIZE = 50


class NewStudyForm(forms.Form):
    name = forms.CharField(max_length=study_setup.NAME_MAX, label=gettext_lazy("Name"),
                           widget=forms.TextInput(attrs={"autofocus": True, "size": 60}))
    description = forms.CharField(
        required=False, max_length=20_000, widget=forms.Textarea(attrs={"rows": 3}),
        label=gettext_lazy("Description"),
        help_text=gettext_lazy("What the study asks, for its members' front page."))
    start = forms.ChoiceField(widget=forms.RadioSelect, initial=BLANK,
                              label=gettext_lazy("Start from"))
    copy_of = forms.CharField(required=False, label=gettext_lazy("Study to copy"),
                              widget=forms.Select(choices=[("", "—")]))

    def __init__(self, *args, owned=(), **kwargs):
        super().__init__(*args, **kwargs)
        choices = [(BLANK, _("A blank study: you write the codebook"))]
        choices += [(key, preset.label) for key, preset in study_setup.PRESETS.items()]
        # Always a valid answer, shown only to owners of a study: a copy of a study that is
        # not yours is refused as the API refuses it (404 or 403), not as a bad choice.
        choices.append((COPY, _("A copy of a study you own: its settings, published "
                                "codebooks and catalog, never its items, codings or members")))
        self.can_copy = bool(owned)
        self.fields["copy_of"].widget.choices = [("", "—")] + [(s.slug, s.name) for s in owned]
        self.fields["start"].choices = choices

    def clean(self):
        data = super().clean()
        if data.get("start") == COPY and not data.get("copy_of"):
            self.add_error("copy_of", _("Choose the study to copy."))
        return data


def owned_studies(user):
    return list(Study.objects.visible_to(user).filter(
        memberships__user=user, memberships__role=Role.OWNER,
        memberships__deleted_at__isnull=True).order_by("name", "pk"))


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def study_new(request):
    if not may_create_study(request.user):
        raise PermissionDenied(_("You may not create studies; ask an administrator to let you."))
    form = NewStudyForm(request.POST or None, owned=owned_studies(request.user))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        # Only a study you own: 404 for one you are not a member of, 403 for one you do
        # not own, whatever the form offered.
        source = (access_study(request.user, data["copy_of"], roles={Role.OWNER})
                  if data["start"] == COPY else None)
        preset = data["start"] if data["start"] in study_setup.PRESETS else None
        try:
            study = study_setup.create_study(request.user, data["name"], data["description"],
                                             preset=preset, copy_of=source)
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                form.add_error(field if field in form.fields else None, problems)
        else:
            messages.success(request, _("Study “%(name)s” created. You are its owner.")
                             % {"name": study.name})
            return redirect("study-detail", slug=study.slug)
    return render(request, "coding/study_new.html", {"form": form})


@login_required
@require_POST
def study_archive(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    if study_setup.archive_study(study, request.user):
        messages.success(request, _("Study archived: it takes no new work and has left the "
                                    "lists. Restore it from your home page or its settings."))
    return redirect("study-detail", slug=study.slug)


@login_required
@require_POST
def study_restore(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    if study_setup.restore_study(study, request.user):
        messages.success(request, _("Study restored: it is open to work again."))
    return redirect("study-detail", slug=study.slug)


@login_required
@require_safe
def study_audit(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    after = request.GET.get("after", "")
    try:
        rows = study_setup.audit_entries(study, after=after or None, limit=AUDIT_PAGE_SIZE + 1)
    except ValueError:
        return HttpResponseBadRequest(_("after: not a page token of this list; start from its "
                                        "first page."))
    page, more = rows[:AUDIT_PAGE_SIZE], len(rows) > AUDIT_PAGE_SIZE
    return render(request, "coding/study_audit.html", {
        "study": study, "entries": page, "first_page": not after,
        "next_after": page[-1].token if more else "",
    })


urlpatterns = [
    path("studies/<slug:slug>/archive/", study_archive, name="study-archive"),
    path("studies/<slug:slug>/restore/", study_restore, name="study-restore"),
    path("studies/<slug:slug>/audit/", study_audit, name="study-audit"),
]

"""Raters, their imported codings and named comparisons: pages.

Owners, adjudicators and viewers read them (as the agreement page); owners add raters,
import codings and name comparisons. Coders are refused (403): a model's labels and the
comparisons would tell them how others answered (design brief, rules 1 and 10)."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy
from django.views.decorators.http import require_http_methods

from coding.access.roles import access_study
from coding.labeling import suggestions
from coding.labeling.codings import record_reads
from coding.labeling.views.calibration import errors_of
from coding.labeling.views.imports import save_upload
from coding.models import Comparison, Item, OthersWorkRead, Rater, Role
from coding.raters import comparisons
from coding.raters import imports as raters_import
from coding.raters import qdpx as raters_qdpx
from coding.raters.setup import add_comparison, add_rater, raters_of

OWNERS = {Role.OWNER}
READERS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


class RaterForm(forms.Form):
    kind = forms.ChoiceField(label=gettext_lazy("Kind"), choices=[
        (Rater.Kind.PERSON, gettext_lazy("Person (a member of the study)")),
        (Rater.Kind.MODEL, gettext_lazy("Model")),
        (Rater.Kind.OUTSIDE, gettext_lazy("Outside source"))])
    name = forms.SlugField(label=gettext_lazy("Name"), max_length=64,
                           help_text=gettext_lazy("As the files name it, e.g. gpt-labeller."))
    model_version = forms.CharField(label=gettext_lazy("Model version"), required=False,
                                    max_length=200)
    config_hash = forms.CharField(required=False, max_length=128,
                                  label=gettext_lazy("Prompt or configuration hash"))
    provenance = forms.CharField(label=gettext_lazy("Provenance"), required=False,
                                 widget=forms.Textarea(attrs={"rows": 2}))
    member = forms.CharField(label=gettext_lazy("Member"), required=False,
                             help_text=gettext_lazy("For a person: the member's username."))


class UploadForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("File"), help_text=gettext_lazy(
        "CSV or JSON Lines: item, rater, question, value, evidence, coded_at."))
    dry_run = forms.BooleanField(required=False, initial=True,
                                 label=gettext_lazy("Dry run: only report what would change"))


class QdpxUploadForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("Project"), help_text=gettext_lazy(
        "A .qdpx from NVivo, ATLAS.ti, MAXQDA, QualCoder, Transana or this workbench."))
    dry_run = forms.BooleanField(required=False, initial=False,
                                 label=gettext_lazy("Dry run: only check the file and report"))


class ComparisonForm(forms.Form):
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200)
    first = forms.ChoiceField(label=pgettext_lazy("comparison table", "Rows"))
    second = forms.ChoiceField(label=pgettext_lazy("comparison table", "Columns"), required=False)
    question = forms.SlugField(label=gettext_lazy("Question"), max_length=64,
                               help_text=gettext_lazy("Question key, e.g. label."))
    weighting = forms.ChoiceField(label=gettext_lazy("Kappa weights"), initial="unweighted",
                                  required=False,
                                  choices=[("unweighted", gettext_lazy("unweighted")),
                                           ("linear", gettext_lazy("linear")),
                                           ("quadratic", gettext_lazy("quadratic")),
                                           ("custom", gettext_lazy("custom matrix"))])
    weights = forms.JSONField(label=gettext_lazy("Custom weight matrix"), required=False,
                              widget=forms.Textarea(attrs={"rows": 3}), help_text=gettext_lazy(
                                  'Agreement weights by option value, e.g. {"a": {"a": 1, '
                                  '"b": 0.5}, "b": {"a": 0.5, "b": 1}}: 1 on the diagonal, '
                                  "each cell between 0 and 1."))

    def __init__(self, *args, raters=(), **kwargs):
        super().__init__(*args, **kwargs)
        names = [(r.name, f"{r.name} ({r.kind})") for r in raters]
        self.fields["first"].choices = names
        self.fields["second"].choices = [("", _("the final decisions")), *names]


class AssistedForm(forms.Form):
    round = forms.ChoiceField(label=gettext_lazy("Round"), initial=Item.Round.MAIN, choices=[
        (Item.Round.MAIN, gettext_lazy("main")),
        (Item.Round.CALIBRATION, gettext_lazy("calibration"))])
    rater = forms.ChoiceField(label=gettext_lazy("Suggest the answers of"), required=False)

    def __init__(self, *args, raters=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["rater"].choices = [("", _("no one: the round is blind")), *[
            (r.name, r.name) for r in raters if r.kind == Rater.Kind.MODEL]]


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def raters_page(request, slug):
    study = access_study(request.user, slug, roles=READERS)
    raters = list(raters_of(study))
    forms_ = {"rater": RaterForm(), "import": UploadForm(), "qdpx": QdpxUploadForm(),
              "comparison": ComparisonForm(raters=raters), "assisted": AssistedForm(raters=raters)}
    errors = {}
    if request.method == "POST":
        if Role.OWNER not in study.my_roles:
            raise PermissionDenied(_("Only the study's owners change its raters."))
        action = request.POST.get("action", "")
        try:
            done = act(request, study, action, raters, forms_)
        except ValidationError as error:
            errors[action] = errors_of(error)
        else:
            if hasattr(done, "pk"):  # a job: its page shows progress and the report
                return redirect("job-detail", pk=done.pk)
            messages.success(request, done)
            return redirect("raters", slug=slug)
    found = Comparison.objects.filter(study=study).select_related("first", "second")
    return render(request, "coding/raters.html", {
        "study": study, "raters": raters, "comparisons": found, "forms": forms_,
        "errors": errors, "may_change": Role.OWNER in study.my_roles,
        "assisted_rounds": suggestions.assisted_rounds(study),
    }, status=400 if errors else 200)


def act(request, study, action, raters, forms_):
    if action == "rater":
        form = forms_["rater"] = RaterForm(request.POST)
        data = _valid(form)
        member = None
        if data["member"]:
            found = study.memberships.filter(user__username=data["member"]).first()
            if found is None:
                raise ValidationError({"member": _("no member %(name)r") % {"name": data["member"]}})
            member = found.user
        rater = add_rater(study, request.user, kind=data["kind"], name=data["name"],
                          model_version=data["model_version"], config_hash=data["config_hash"],
                          provenance=data["provenance"], member=member)
        return _("Rater %(name)s added.") % {"name": rater.name}
    if action == "import":
        form = forms_["import"] = UploadForm(request.POST, request.FILES)
        data = _valid(form)
        upload = save_upload(study, data["file"])
        return raters_import.start_import(study, request.user, upload, dry_run=data["dry_run"])
    if action == "qdpx":
        form = forms_["qdpx"] = QdpxUploadForm(request.POST, request.FILES)
        data = _valid(form)
        upload = save_upload(study, data["file"])
        return raters_qdpx.start_import(study, request.user, upload, dry_run=data["dry_run"])
    if action == "comparison":
        form = forms_["comparison"] = ComparisonForm(request.POST, raters=raters)
        data = _valid(form)
        comparison = add_comparison(study, request.user, name=data["name"], first=data["first"],
                                    second=data["second"] or None, question=data["question"],
                                    weighting=data["weighting"], weights=data["weights"])
        return _("Comparison %(name)s added.") % {"name": comparison.name}
    if action == "assisted":
        form = forms_["assisted"] = AssistedForm(request.POST, raters=raters)
        data = _valid(form)
        if not data["rater"]:
            suggestions.mark_blind(study, request.user, data["round"])
            return _("The %(round)s round is blind: no suggestions.") % {"round": data["round"]}
        suggestions.mark_assisted(study, request.user, data["round"], data["rater"])
        return _("The %(round)s round is assisted: coders see %(rater)s's answers as "
                 "suggestions outside the reliability sample.") % {
                     "round": data["round"], "rater": data["rater"]}
    raise ValidationError(_("Unknown action."))


def _valid(form):
    if not form.is_valid():
        raise ValidationError({name: list(errors) for name, errors in form.errors.items()})
    return form.cleaned_data


@login_required
@require_http_methods(["GET", "HEAD"])
def comparison_page(request, slug, comparison_id):
    study = access_study(request.user, slug, roles=READERS)
    comparison = (Comparison.objects.filter(study=study, pk=comparison_id)
                  .select_related("first", "second", "codebook").first())
    if comparison is None:
        raise Http404(_("No such comparison."))
    record_reads(study, request.user, OthersWorkRead.Kind.COMPARISONS)
    result = comparisons.compute(comparison)
    rows = [{"label": label, "counts": counts, "total": total} for label, counts, total in
            zip(result["labels"], result["table"], result["row_totals"])]
    return render(request, "coding/comparison.html", {
        "study": study, "comparison": comparison, "result": result, "rows": rows,
        "chart": comparisons.chart(result) if result["units"] else None,
        "weight_rows": list(zip(result["labels"], result["weights"] or [])),
    })


urlpatterns = [
    path("studies/<slug:slug>/raters/", raters_page, name="raters"),
    path("studies/<slug:slug>/comparisons/<int:comparison_id>/", comparison_page,
         name="comparison"),
]

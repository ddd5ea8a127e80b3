"""A model rater run from the workbench: its page (settings, the preview of one request,
runs with their progress) and its validation page.

Readers as on the other rater pages (owners, adjudicators, viewers); owners change the
settings, preview (the preview holds the item as the model receives it, which may include
blinded fields when the owner allows them) and start, pause, resume or cancel runs.
Coders are refused (403)."""

import json

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

from coding.access.names import name_by_id
from coding.access.roles import access_study
from coding.labeling.codings import record_reads
from coding.labeling.views.calibration import errors_of
from coding.model_raters import config, runs, validation
from coding.models import ModelRun, OthersWorkRead, Rater, Role

READERS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


class SettingsForm(forms.Form):
    base_url = forms.CharField(label=gettext_lazy("Base URL"), max_length=300, help_text=(
        gettext_lazy("The OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 for a "
                     "local llama.cpp server or vLLM.")))
    model = forms.CharField(label=pgettext_lazy("a language model", "Model"), max_length=200)
    temperature = forms.FloatField(label=gettext_lazy("Temperature"), initial=0.0)
    seed = forms.IntegerField(label=gettext_lazy("Seed"), required=False)
    max_tokens = forms.IntegerField(label=gettext_lazy("Token limit of an answer"),
                                    initial=1024)
    output = forms.ChoiceField(label=gettext_lazy("Answer format"), choices=[
        ("json_schema", gettext_lazy("Structured output with the codebook's JSON schema")),
        ("json_object", gettext_lazy("JSON mode, the schema in the prompt")),
        ("text", gettext_lazy("Plain text, the schema in the prompt"))])
    concurrency = forms.IntegerField(label=gettext_lazy("Requests at once"), initial=4)
    requests_per_minute = forms.IntegerField(label=gettext_lazy("Requests a minute (0: no "
                                                                "limit)"), initial=0)
    timeout_seconds = forms.FloatField(label=gettext_lazy("Seconds to wait for an answer"),
                                       initial=60)
    invalid_retries = forms.IntegerField(label=gettext_lazy("Times an invalid answer is "
                                                            "asked again"), initial=2)
    api_key_env = forms.CharField(label=gettext_lazy("API key from the environment variable"),
                                  required=False, help_text=gettext_lazy(
                                      "Its name, e.g. OPENAI_API_KEY, set where jobs run."))
    api_key = forms.CharField(label=gettext_lazy("Or store this API key (encrypted)"),
                              required=False, widget=forms.PasswordInput(render_value=False),
                              help_text=gettext_lazy("Never shown again; leave empty to keep "
                                                     "the current one."))
    send_blinded = forms.BooleanField(label=gettext_lazy("Send blinded fields to the model too"),
                                      required=False)
    instructions = forms.CharField(label=gettext_lazy("Instructions before the codebook"),
                                   required=False, widget=forms.Textarea(attrs={"rows": 3}))
    price_in = forms.FloatField(label=gettext_lazy("Price of a million tokens sent"),
                                required=False)
    price_out = forms.FloatField(label=gettext_lazy("Price of a million tokens received"),
                                 required=False)


class RunForm(forms.Form):
    set = forms.ChoiceField(label=gettext_lazy("Items"), choices=[
        (key, label) for key, (_scope, label) in runs.SETS.items()])
    kind = forms.ChoiceField(label=gettext_lazy("Only items of the kind"), required=False,
                             choices=[("", gettext_lazy("any")), ("paper", gettext_lazy("papers")),
                                      ("thread", gettext_lazy("threads"))])
    q = forms.CharField(label=gettext_lazy("Only items whose key or title contains"),
                        required=False, max_length=200)
    replicates = forms.IntegerField(label=gettext_lazy("Times each item is asked"), initial=1,
                                    min_value=1, max_value=runs.MAX_REPLICATES, help_text=(
                                        gettext_lazy("Above 1 measures prompt stability "
                                                     "(needs a temperature above 0).")))


def _model_rater(request, slug, name):
    study = access_study(request.user, slug, roles=READERS)
    rater = Rater.objects.filter(study=study, name=name, kind=Rater.Kind.MODEL).first()
    if rater is None:
        raise Http404(_("No model rater %(name)s in this study.") % {"name": name[:64]})
    return study, rater


def _initial(machine):
    if machine is None:
        return {field: value for field, value in config.DEFAULTS.items()}
    return {field: getattr(machine, field) for field in config.FIELDS}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def model_rater_page(request, slug, name):
    study, rater = _model_rater(request, slug, name)
    owner = Role.OWNER in study.my_roles
    machine = config.settings_of(rater)
    settings_form = SettingsForm(initial=_initial(machine))
    run_form = RunForm()
    errors = {}
    if request.method == "POST":
        if not owner:
            raise PermissionDenied(_("Only the study's owners run its model raters."))
        action = request.POST.get("action", "")
        try:
            done = _act(request, rater, action)
        except ValidationError as error:
            errors[action] = errors_of(error)
            if action == "settings":
                settings_form = SettingsForm(request.POST)
            elif action == "run":
                run_form = RunForm(request.POST)
        else:
            messages.success(request, done)
            return redirect("model-rater", slug=slug, name=name)
    preview = preview_error = None
    if owner and machine is not None:
        try:
            preview = runs.preview(rater, request.GET.get("item", ""))
            preview["text"] = json.dumps(preview["request"], indent=2, ensure_ascii=False)
            messages_ = preview["request"]["messages"]
            preview["system"], preview["user"] = messages_[0]["content"], messages_[1]["content"]
        except ValidationError as error:
            preview_error = errors_of(error)
    found = list(ModelRun.objects.filter(rater=rater).select_related("job")[:20])
    for run in found:
        run.words = runs.scope_words(run.scope)
        run.cost = runs.cost(run, machine)
        run.rate = run.done / run.seconds if run.seconds else None
    return render(request, "coding/model_rater.html", {
        "study": study, "rater": rater, "machine": machine, "owner": owner,
        "key_state": config.key_state(machine), "settings_form": settings_form,
        "run_form": run_form, "errors": errors, "preview": preview,
        "preview_error": preview_error, "runs": found,
        "active": any(r.status in ("queued", "running") for r in found),
    }, status=400 if errors else 200)


def _valid(form):
    if not form.is_valid():
        raise ValidationError({name: list(errors) for name, errors in form.errors.items()})
    return form.cleaned_data


def _act(request, rater, action):
    if action == "settings":
        data = _valid(SettingsForm(request.POST))
        key = data.pop("api_key") or None
        changes = {k: v for k, v in data.items()}
        config.configure(rater, request.user, changes, api_key=key)
        return _("Settings of %(name)s saved.") % {"name": rater.name}
    if action == "run":
        data = _valid(RunForm(request.POST))
        scope = {**runs.SETS[data["set"]][0],
                 **{k: data[k] for k in ("kind", "q") if data[k]}}
        run = runs.start_run(rater, request.user, scope, data["replicates"])
        return _("Run %(run)s started over %(set)s.") % {"run": run.pk,
                                                         "set": runs.scope_words(run.scope)}
    if action in ("pause", "resume", "cancel"):
        run = ModelRun.objects.filter(rater=rater, pk=request.POST.get("run") or 0).first()
        if run is None:
            raise ValidationError(_("No such run."))
        getattr(runs, action)(run, request.user)
        return {"pause": _("Run %(run)s pauses after its current batch."),
                "resume": _("Run %(run)s goes on; what was answered comes from the cache."),
                "cancel": _("Run %(run)s is cancelled.")}[action] % {"run": run.pk}
    raise ValidationError(_("Unknown action."))


@login_required
@require_http_methods(["GET", "HEAD"])
def validation_page(request, slug, name):
    study, rater = _model_rater(request, slug, name)
    try:
        epsilon = float(request.GET.get("epsilon") or validation.EPSILON)
    except ValueError:
        epsilon = validation.EPSILON
    if epsilon not in validation.EPSILONS:
        epsilon = validation.EPSILON
    record_reads(study, request.user, OthersWorkRead.Kind.COMPARISONS)
    result = validation.validate(rater, epsilon, name=name_by_id(study, study.my_roles))
    for question in result["questions"]:
        question["rows"] = [*question["against"], question["decisions"], question["majority"]]
    result["methods_text"] = validation.methods_text(rater, result, list(rater.runs.all()))
    return render(request, "coding/model_validation.html", {
        "study": study, "rater": rater, "result": result, "epsilons": validation.EPSILONS,
        "epsilon": epsilon, "machine": config.settings_of(rater)})


urlpatterns = [
    path("studies/<slug:slug>/raters/<slug:name>/model/", model_rater_page, name="model-rater"),
    path("studies/<slug:slug>/raters/<slug:name>/validation/", validation_page,
         name="model-validation"),
]

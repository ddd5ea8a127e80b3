"""Model raters run from the workbench: REST API.

Settings, runs and validation are read by owners, adjudicators and viewers (as the other
rater pages); only owners change settings, preview a request (it holds the item as the
model would receive it, blinded fields included when the owner lets the model see them)
or start, pause, resume and cancel runs. Coders get 403 everywhere: a model's answers
would tell them what others might answer (rules 1 and 10). The API key is write-only:
`key` says only where it comes from."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.names import name_by_id
from coding.access.roles import access_study
from coding.labeling.api.calibration import as_api_error
from coding.labeling.codings import record_reads
from coding.model_raters import config, runs, validation
from coding.models import ModelRun, OthersWorkRead, Rater, Role
from workbench.parsers import StrictJSONParser

OWNERS = {Role.OWNER}
READERS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


def model_rater(user, slug, name, roles):
    study = access_study(user, slug, roles=roles)
    rater = Rater.objects.filter(study=study, name=name, kind=Rater.Kind.MODEL).select_related(
        "study").first()
    if rater is None:
        raise NotFound(_("No model rater %(name)s in this study.") % {"name": name[:64]})
    rater.study.my_roles = study.my_roles
    return rater


class ModelSettingsSerializer(serializers.Serializer):
    base_url = serializers.CharField(help_text="The endpoint's base URL, e.g. "
                                     "http://127.0.0.1:8080/v1 (…/chat/completions is added).")
    model = serializers.CharField(help_text="The model's name as the endpoint knows it.")
    temperature = serializers.FloatField(required=False, help_text="0 to 2; default 0.")
    seed = serializers.IntegerField(required=False, allow_null=True)
    max_tokens = serializers.IntegerField(required=False)
    output = serializers.CharField(required=False, help_text=(
        "json_schema (structured output with the codebook's schema; default), json_object "
        "or text (the schema in the prompt, for servers without structured output)."))
    concurrency = serializers.IntegerField(required=False, help_text="Requests at once, 1-32.")
    requests_per_minute = serializers.IntegerField(required=False, help_text="0: no limit.")
    timeout_seconds = serializers.FloatField(required=False)
    invalid_retries = serializers.IntegerField(required=False, help_text=(
        "How many times an invalid answer is asked again (0-5) before the item fails."))
    api_key_env = serializers.CharField(required=False, allow_blank=True, help_text=(
        "The environment variable holding the API key where the job runs."))
    api_key = serializers.CharField(required=False, write_only=True, help_text=(
        "The API key itself, stored encrypted; never returned."))
    clear_key = serializers.BooleanField(required=False, write_only=True, default=False)
    send_blinded = serializers.BooleanField(required=False, help_text=(
        "Send the study's blinded fields to the model too (default false)."))
    instructions = serializers.CharField(required=False, allow_blank=True)
    price_in = serializers.FloatField(required=False, allow_null=True,
                                      help_text="Price of a million tokens sent.")
    price_out = serializers.FloatField(required=False, allow_null=True,
                                       help_text="Price of a million tokens received.")
    key = serializers.CharField(read_only=True, help_text="none, environment or stored.")


def settings_payload(machine):
    if machine is None:
        return None
    return {**{field: getattr(machine, field) for field in config.FIELDS},
            "key": config.key_state(machine)}


class ModelSettingsView(APIView):
    parser_classes = [StrictJSONParser]

    @extend_schema(responses={200: ModelSettingsSerializer})
    def get(self, request, slug, name):
        """The model rater's settings (the key only as none, environment or stored)."""
        rater = model_rater(request.user, slug, name, READERS)
        machine = config.settings_of(rater)
        if machine is None:
            raise NotFound(_("This model rater has no settings yet."))
        return Response(settings_payload(machine))

    @extend_schema(request=ModelSettingsSerializer, responses={
        200: ModelSettingsSerializer, 400: None})
    def put(self, request, slug, name):
        """Set the model rater's endpoint, model and parameters (owners). Fields left out
        keep their value; a bad one is refused (400) by name and nothing is saved."""
        rater = model_rater(request.user, slug, name, OWNERS)
        data = ModelSettingsSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        given = dict(data.validated_data)
        key, clear = given.pop("api_key", None), given.pop("clear_key", False)
        try:
            machine = config.configure(rater, request.user, given, api_key=key,
                                       clear_key=clear)
        except DjangoValidationError as error:
            raise as_api_error(error) from None
        return Response(settings_payload(machine))


class PreviewView(APIView):
    @extend_schema(parameters=[OpenApiParameter("item", str, description=(
        "An item's document key; default: the study's first item."))],
        responses={200: dict, 400: None})
    def get(self, request, slug, name):
        """The exact request one item would be sent as (owners): endpoint, body, the fields
        withheld from the model, the prompt's hash, and whether the cache already holds it."""
        rater = model_rater(request.user, slug, name, OWNERS)
        try:
            return Response(runs.preview(rater, request.query_params.get("item", "")))
        except DjangoValidationError as error:
            raise as_api_error(error) from None


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    scope = serializers.DictField(child=serializers.CharField(), required=False, help_text=(
        "Which items, by the item browser's filters: sample (yes/no: the reliability "
        "sample), round, state (e.g. pool: not yet coded or screened), kind, run (an "
        "import), q. Empty: every item."))
    replicates = serializers.IntegerField(required=False, default=1, help_text=(
        "How many times each item is asked (1-10; above 1 measures prompt stability and "
        "needs a temperature above 0)."))
    status = serializers.CharField(read_only=True)


def run_payload(run, machine=None):
    rate = run.done / run.seconds if run.seconds else None
    return {"id": run.pk, "status": run.status, "scope": run.scope,
            "scope_words": runs.scope_words(run.scope), "replicates": run.replicates,
            "settings": run.used, "total": run.total, "done": run.done,
            "answered": run.answered, "cached": run.cached, "failed": run.failed,
            "tokens_in": run.tokens_in, "tokens_out": run.tokens_out,
            "estimated_cost": runs.cost(run, machine), "seconds": run.seconds,
            "items_per_second": rate, "job": run.job_id,
            "job_url": reverse("api-job", args=[run.job_id]) if run.job_id else None,
            "created_at": run.created_at, "finished_at": run.finished_at}


class RunList(APIView):
    parser_classes = [StrictJSONParser]

    @extend_schema(operation_id="model_runs_list", responses={200: dict})
    def get(self, request, slug, name):
        """The rater's runs, newest first, with progress, tokens and estimated cost."""
        rater = model_rater(request.user, slug, name, READERS)
        machine = config.settings_of(rater)
        return Response([run_payload(run, machine) for run in rater.runs.all()[:100]])

    @extend_schema(operation_id="model_run_start", request=RunSerializer,
                   responses={202: dict, 400: None})
    def post(self, request, slug, name):
        """Start a run over a set of items (owners); poll it, or its job, for progress."""
        rater = model_rater(request.user, slug, name, OWNERS)
        data = RunSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = runs.start_run(rater, request.user, data.validated_data.get("scope") or {},
                                 data.validated_data["replicates"])
        except DjangoValidationError as error:
            raise as_api_error(error) from None
        run.refresh_from_db()
        return Response(run_payload(run, config.settings_of(rater)),
                        status=status.HTTP_202_ACCEPTED)


class RunDetail(APIView):
    @extend_schema(operation_id="model_run_detail", responses={200: dict})
    def get(self, request, slug, name, run_id):
        rater = model_rater(request.user, slug, name, READERS)
        run = get_object_or_404(ModelRun, rater=rater, pk=run_id)
        return Response(run_payload(run, config.settings_of(rater)))


ACTIONS = {"pause": runs.pause, "resume": runs.resume, "cancel": runs.cancel}


class RunAction(APIView):
    @extend_schema(operation_id="model_run_action", request=None,
                   responses={200: dict, 400: None, 404: None})
    def post(self, request, slug, name, run_id, action):
        """Pause a queued or running run (it stops between batches), resume a stopped one
        or one with items not answered (the answered come from the cache), or cancel it."""
        if action not in ACTIONS:
            raise NotFound(_("No such action: pause, resume or cancel."))
        rater = model_rater(request.user, slug, name, OWNERS)
        run = get_object_or_404(ModelRun, rater=rater, pk=run_id)
        try:
            run = ACTIONS[action](run, request.user)
        except DjangoValidationError as error:
            raise as_api_error(error) from None
        run.refresh_from_db()
        return Response(run_payload(run, config.settings_of(rater)))


def epsilon_of(params):
    raw = params.get("epsilon", "")
    if not raw:
        return validation.EPSILON
    try:
        value = float(raw)
    except ValueError:
        value = None
    if value not in validation.EPSILONS:
        raise DjangoValidationError({"epsilon": _("one of %(choices)s") % {
            "choices": ", ".join(f"{e:g}" for e in validation.EPSILONS)}})
    return value


class ValidationView(APIView):
    @extend_schema(parameters=[OpenApiParameter("epsilon", float, description=(
        "The alt-test's benefit for the model: 0.2 (expert coders, default), 0.15 (trained "
        "coders) or 0.1 (crowd workers)."))], responses={200: dict, 400: None})
    def get(self, request, slug, name):
        """The model against each coder, the final decisions and the coders' majority, the
        alternative annotator test and prompt stability, per question, with the rule that
        says whether it is usable for that question and a methods paragraph (English)."""
        rater = model_rater(request.user, slug, name, READERS)
        try:
            epsilon = epsilon_of(request.query_params)
        except DjangoValidationError as error:
            raise as_api_error(error) from None
        study = rater.study
        record_reads(study, request.user, OthersWorkRead.Kind.COMPARISONS)
        result = validation.validate(rater, epsilon, name=name_by_id(study, study.my_roles))
        result["methods_text"] = validation.methods_text(rater, result, list(rater.runs.all()))
        return Response(result)


urlpatterns = [
    path("studies/<slug:slug>/raters/<slug:name>/model/", ModelSettingsView.as_view(),
         name="api-model-rater"),
    path("studies/<slug:slug>/raters/<slug:name>/model/preview/", PreviewView.as_view(),
         name="api-model-rater-preview"),
    path("studies/<slug:slug>/raters/<slug:name>/model/runs/", RunList.as_view(),
         name="api-model-runs"),
    path("studies/<slug:slug>/raters/<slug:name>/model/runs/<int:run_id>/", RunDetail.as_view(),
         name="api-model-run"),
    path("studies/<slug:slug>/raters/<slug:name>/model/runs/<int:run_id>/<str:action>/",
         RunAction.as_view(), name="api-model-run-action"),
    path("studies/<slug:slug>/raters/<slug:name>/validation/", ValidationView.as_view(),
         name="api-model-validation"),
]

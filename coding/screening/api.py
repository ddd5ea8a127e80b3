"""Screening over the API: its settings, the progress with the stopping rule, the owner's
stop and resume. The page and `manage.py screening` use the same pieces
(coding.screening.setup, progress)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.names import name_for
from coding.access.roles import access_study
from coding.labeling.codings import record_reads
from coding.models import OthersWorkRead, Role
from coding.screening import model as screening_model
from coding.screening import priors, progress, setup
from workbench.api import JobSerializer


class SettingsSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="Key of the screening decision question.")
    include = serializers.ListField(child=serializers.CharField(), help_text=(
        "The answers that mean include (yes/no questions: \"yes\" or \"no\")."))
    model = serializers.ChoiceField(choices=sorted(screening_model.MODELS),
                                    default=screening_model.DEFAULT)
    random_share = serializers.FloatField(default=0.05)
    target_recall = serializers.FloatField(default=0.95)
    confidence = serializers.FloatField(default=0.95)
    prior_rater = serializers.CharField(default="", allow_blank=True)


def as_json(study, report, roles):
    """The progress as the API sends it: screeners by the name this reader may see."""
    named = name_for(study, roles)
    stopped = report["settings"].get("stopped")
    return {
        "settings": {k: v for k, v in report["settings"].items() if k != "stopped"},
        "stopped": stopped, "total": report["total"], "study": report["study"],
        "screeners": [{**{k: v for k, v in row.items() if k != "coder"},
                       "screener": named(row["coder"])} for row in report["screeners"]],
    }


PROGRESS = OpenApiResponse(OpenApiTypes.OBJECT, description=(
    "settings, stopped (who, when, the estimate then) or null, total records, study and "
    "screeners[]: screened, includes, excludes, not_screened, since_last_include, curve "
    "[[screened, includes found]], test {p, stop, window} (the hypergeometric stopping "
    "rule), random {draws, includes, recall, recall_low, left, left_high} or null."))


class Screening(APIView):
    @extend_schema(responses={200: PROGRESS})
    def get(self, request, slug):
        """How far screening has come, per screener and for the study (owners)."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        record_reads(study, request.user, OthersWorkRead.Kind.SCREENING)
        return Response(as_json(study, progress.progress(study), study.my_roles))

    @extend_schema(request=SettingsSerializer, responses={200: PROGRESS})
    def put(self, request, slug):
        """Turn screening on or change its settings (owners); 400 names the field."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        given = SettingsSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            setup.configure(study, user=request.user, **given.validated_data)
        except setup.SettingsError as problem:
            raise ValidationError({problem.field: [str(problem)]}) from problem
        record_reads(study, request.user, OthersWorkRead.Kind.SCREENING)
        return Response(as_json(study, progress.progress(study), study.my_roles))


class ScreeningStop(APIView):
    @extend_schema(request=None, responses={
        200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "The stop as recorded: at, by, estimate (the study's figures at that moment).")),
        400: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "{screening: [why]}: the study does not screen."))})
    def post(self, request, slug):
        """Stop screening (owners): the queue serves no more records; those never screened
        are exported as not screened."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        try:
            return Response(progress.stop(study, request.user))
        except ValueError as problem:
            raise ValidationError({"screening": [str(problem)]}) from problem


class ScreeningResume(APIView):
    @extend_schema(request=None, responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
        "The stop that was undone, or null."))})
    def post(self, request, slug):
        """Resume a stopped screening (owners)."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        return Response({"undone": progress.resume(study, request.user)})


class ReplaySerializer(serializers.Serializer):
    seeds = serializers.IntegerField(default=5, min_value=1, max_value=progress.MAX_SEEDS)
    model = serializers.ChoiceField(choices=sorted(screening_model.MODELS), required=False)


class ScreeningReplay(APIView):
    @extend_schema(request=ReplaySerializer, responses={202: JobSerializer, 400: OpenApiResponse(
        OpenApiTypes.OBJECT, description="{field: [why]}")})
    def post(self, request, slug):
        """Replay the study's decided records as a screener would, from one include and one
        exclude per seed, as a background job (owners): its result holds records to 95% and
        100% recall, WSS@95, RRF@10 and where the stopping rule would have stopped."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        given = ReplaySerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            job = progress.replay_study(study, request.user, **given.validated_data)
        except ValueError as problem:
            raise ValidationError({"screening": [str(problem)]}) from problem
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class PriorsUpload(serializers.Serializer):
    file = serializers.FileField(help_text=(
        "An ASReview-style CSV (title, optional doi and year, label_included 0/1, blank for "
        "unlabelled) whose records are in the study."))
    rater = serializers.SlugField(default=priors.NAME, help_text="The outside rater's name.")


class ScreeningPriors(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": PriorsUpload}, responses={
        200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "rows, new, changed, unchanged, errors: the labels imported as the rater's "
            "answers, now the study's prior labels.")),
        400: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "{file: [why, with the line]}; nothing stored."))})
    def post(self, request, slug):
        """Import a file's label_included as the study's prior labels (owners)."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        given = PriorsUpload(data=request.data)
        given.is_valid(raise_exception=True)
        upload = given.validated_data["file"]
        try:
            counts = priors.use_priors(study, upload.file, user=request.user,
                                       rater=given.validated_data["rater"], name=upload.name)
        except (ValueError, UnicodeDecodeError) as problem:
            raise ValidationError({"file": [str(problem)]}) from problem
        return Response(counts)

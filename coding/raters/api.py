"""Raters, their imported codings and named comparisons: REST API.

Reading is for owners, adjudicators and viewers, as the agreement report; changing is for
owners. Coders get 403 everywhere here: a model's labels and the comparisons would tell
them what others answered (design brief, rules 1 and 10)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.labeling import suggestions
from coding.labeling.api.calibration import as_api_error
from coding.labeling.codings import record_reads
from coding.labeling.views.imports import save_upload
from coding.models import Comparison, Item, OthersWorkRead, Rater, Role
from coding.raters import comparisons
from coding.raters import imports as raters_import
from coding.raters import qdpx as raters_qdpx
from coding.raters.setup import add_comparison, add_rater, raters_of
from workbench.api import JobSerializer
from workbench.parsers import StrictJSONParser

OWNERS = {Role.OWNER}
READERS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}


class RaterSerializer(serializers.ModelSerializer):
    member = serializers.CharField(source="member.username", allow_null=True, default=None,
                                   help_text="For a person rater: the member's username.")
    imported = serializers.IntegerField(read_only=True, help_text="Codings imported.")
    # Plain text, checked by coding.raters.setup.add_rater: a choice field here would make one
    # more enum named "Kind" in the schema.
    kind = serializers.CharField(help_text="person, model or outside.")

    class Meta:
        model = Rater
        fields = ["id", "kind", "name", "model_version", "config_hash", "provenance", "member",
                  "imported", "created_at"]
        read_only_fields = ["id", "created_at"]


class ComparisonSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(max_length=200)
    question = serializers.CharField(source="question_key")
    first = serializers.CharField(source="first.name", help_text="Rater of the table's rows.")
    second = serializers.CharField(source="second.name", allow_null=True, default=None,
                                   help_text="Rater of the columns; null: the final decisions.")
    # Plain text, checked by coding.raters.comparisons.checked_weights (no extra schema enum).
    weighting = serializers.CharField(required=False, default="", allow_blank=True, help_text=(
        "Cohen's kappa's weights: unweighted (default), linear, quadratic (by the position "
        "of the question's options) or custom (the matrix in `weights`; implied when "
        "`weights` is given). Only for a single-choice or yes/no question."))
    weights = serializers.DictField(
        child=serializers.DictField(child=serializers.FloatField()), required=False,
        allow_null=True, default=None, help_text=(
            "A custom matrix of agreement weights by option value, {row value: {column value: "
            "weight}}: every option as a row and a column, 1 on the diagonal, each cell within "
            "[0, 1]; it need not be symmetric. A wrong matrix is refused (400) naming the "
            "value or cell, and nothing is saved."))


class ComparisonResultSerializer(serializers.Serializer):
    name = serializers.CharField()
    question = serializers.CharField()
    first = serializers.CharField()
    second = serializers.CharField()
    units = serializers.IntegerField(help_text="Items both sides answered.")
    first_only = serializers.IntegerField()
    second_only = serializers.IntegerField()
    labels = serializers.ListField(child=serializers.CharField())
    table = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()),
                                  help_text="Rows: the first rater's values; columns: the second's.")
    row_totals = serializers.ListField(child=serializers.IntegerField())
    column_totals = serializers.ListField(child=serializers.IntegerField())
    percent_agreement = serializers.FloatField(allow_null=True)
    kappa = serializers.DictField(help_text="Cohen's kappa: value, low, high (percentile "
                                  "bootstrap), confidence, resamples, seed.")
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's alpha (nominal).")
    weighting = serializers.CharField(help_text="The weighting of kappa: unweighted, linear, "
                                      "quadratic or custom.")
    weights = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField()), allow_null=True,
        help_text="The agreement weights kappa used, over `labels` (rows: first, columns: "
        "second); null when unweighted.")
    categories = serializers.ListField(child=serializers.DictField())
    undefined = serializers.DictField(child=serializers.CharField())


class RaterList(APIView):
    parser_classes = [StrictJSONParser]

    @extend_schema(responses={200: RaterSerializer(many=True)})
    def get(self, request, slug):
        """The study's raters (owners, adjudicators, viewers)."""
        study = access_study(request.user, slug, roles=READERS)
        return Response(RaterSerializer(raters_of(study), many=True).data)

    @extend_schema(request=RaterSerializer, responses={201: RaterSerializer})
    def post(self, request, slug):
        """Add a rater (owners): a model, an outside source, or a member as a person."""
        study = access_study(request.user, slug, roles=OWNERS)
        data = RaterSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = {k: v for k, v in data.validated_data.items() if k != "member"}
        member = None
        username = (data.validated_data.get("member") or {}).get("username")
        if username:
            member = study.memberships.filter(user__username=username).select_related(
                "user").first()
            if member is None:
                raise ValidationError({"member": _("no member %(username)r")
                                       % {"username": username}})
            member = member.user
        try:
            rater = add_rater(study, request.user, member=member, **fields)
        except DjangoValidationError as error:
            raise as_api_error(error) from None
        rater.imported = 0
        return Response(RaterSerializer(rater).data, status=status.HTTP_201_CREATED)


class CodingUpload(serializers.Serializer):
    file = serializers.FileField(help_text="CSV or JSON Lines: item, rater, question, value, "
                                 "evidence, coded_at.")
    format = serializers.ChoiceField(choices=raters_import.FORMATS, required=False,
                                     help_text="Default: csv for a .csv name, else jsonl.")
    dry_run = serializers.BooleanField(default=False, help_text="Check and report what would "
                                       "change; write nothing.")


class RaterCodingImport(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": CodingUpload}, responses={202: JobSerializer})
    def post(self, request, slug):
        """Import raters' codings from a file (owners); poll the returned job, whose result
        counts new, changed and unchanged answers and lists bad rows by line and field."""
        study = access_study(request.user, slug, roles=OWNERS)
        data = CodingUpload(data=request.data)
        data.is_valid(raise_exception=True)
        upload = save_upload(study, data.validated_data["file"])
        try:
            job = raters_import.start_import(study, request.user, upload,
                                             data.validated_data.get("format", ""),
                                             dry_run=data.validated_data["dry_run"])
        except ValueError as error:
            raise ValidationError({"format": str(error)}) from None
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ProjectUpload(serializers.Serializer):
    file = serializers.FileField(help_text="A REFI-QDA project (.qdpx).")
    dry_run = serializers.BooleanField(default=False, help_text="Check the whole file and "
                                       "report; write nothing.")


class QdpxImport(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": ProjectUpload}, responses={202: JobSerializer})
    def post(self, request, slug):
        """Import a REFI-QDA project (owners): its sources as items, its codes as a draft
        codebook, each user's codings as an outside rater's. Poll the returned job; a file
        that cannot be imported fails it with where (entry, line, element), nothing stored."""
        study = access_study(request.user, slug, roles=OWNERS)
        data = ProjectUpload(data=request.data)
        data.is_valid(raise_exception=True)
        upload = save_upload(study, data.validated_data["file"])
        job = raters_qdpx.start_import(study, request.user, upload,
                                       dry_run=data.validated_data["dry_run"])
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ComparisonList(APIView):
    parser_classes = [StrictJSONParser]

    @extend_schema(responses={200: ComparisonSerializer(many=True)})
    def get(self, request, slug):
        """The study's named comparisons (owners, adjudicators, viewers)."""
        study = access_study(request.user, slug, roles=READERS)
        found = Comparison.objects.filter(study=study).select_related("first", "second")
        return Response(ComparisonSerializer(found, many=True).data)

    @extend_schema(request=ComparisonSerializer, responses={201: ComparisonSerializer})
    def post(self, request, slug):
        """Name a comparison (owners): rater `first` against rater `second`, or against the
        final decisions when `second` is null, on one question."""
        study = access_study(request.user, slug, roles=OWNERS)
        data = ComparisonSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        try:
            comparison = add_comparison(study, request.user, name=given["name"],
                                        first=given["first"]["name"],
                                        second=(given.get("second") or {}).get("name"),
                                        question=given["question_key"],
                                        weighting=given.get("weighting"),
                                        weights=given.get("weights"))
        except DjangoValidationError as error:
            raise as_api_error(error) from None
        return Response(ComparisonSerializer(comparison).data, status=status.HTTP_201_CREATED)


class ComparisonDetail(APIView):
    @extend_schema(responses={200: ComparisonResultSerializer})
    def get(self, request, slug, comparison_id):
        """A comparison's numbers: the same the comparison page shows."""
        study = access_study(request.user, slug, roles=READERS)
        comparison = (Comparison.objects.filter(study=study, pk=comparison_id)
                      .select_related("first", "second", "codebook").first())
        if comparison is None:
            raise NotFound(_("No such comparison."))
        record_reads(study, request.user, OthersWorkRead.Kind.COMPARISONS)
        return Response(comparisons.compute(comparison))


class AssistedRoundSerializer(serializers.Serializer):
    round = serializers.ChoiceField(choices=Item.Round.choices, help_text=(
        "main or calibration. The calibration round is always blind, and so is a main round "
        "whose every item is in the reliability sample: marking either is refused (400)."))
    rater = serializers.CharField(allow_null=True, allow_blank=True, required=False, default=None,
                                  help_text="The model rater whose answers are suggested; "
                                  "null or empty: the round is blind.")
    model_version = serializers.CharField(read_only=True)
    config_hash = serializers.CharField(read_only=True)


def assisted_payload(assisted):
    return {"round": assisted.round, "rater": assisted.rater.name,
            "model_version": assisted.rater.model_version,
            "config_hash": assisted.rater.config_hash}


class AssistedRoundList(APIView):
    parser_classes = [StrictJSONParser]

    @extend_schema(responses={200: AssistedRoundSerializer(many=True)})
    def get(self, request, slug):
        """The study's assisted rounds, each with the model rater whose answers its coders
        see as suggestions (owners, adjudicators, viewers). A round not listed is blind."""
        study = access_study(request.user, slug, roles=READERS)
        return Response([assisted_payload(a) for a in suggestions.assisted_rounds(study)])

    @extend_schema(request=AssistedRoundSerializer, responses={200: AssistedRoundSerializer,
                                                                204: None})
    def post(self, request, slug):
        """Make a round assisted with a model rater's suggestions, or blind again with a null
        rater (owners). Codings made while a suggestion was shown stay assisted."""
        study = access_study(request.user, slug, roles=OWNERS)
        data = AssistedRoundSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        round_, rater = data.validated_data["round"], data.validated_data.get("rater")
        if not rater:
            suggestions.mark_blind(study, request.user, round_)
            return Response(status=status.HTTP_204_NO_CONTENT)
        try:
            assisted = suggestions.mark_assisted(study, request.user, round_, rater)
        except DjangoValidationError as error:
            raise as_api_error(error) from None
        return Response(assisted_payload(assisted))


urlpatterns = [
    path("studies/<slug:slug>/raters/", RaterList.as_view(), name="api-raters"),
    path("studies/<slug:slug>/rater-codings/", RaterCodingImport.as_view(),
         name="api-rater-codings"),
    path("studies/<slug:slug>/qdpx-imports/", QdpxImport.as_view(), name="api-qdpx-import"),
    path("studies/<slug:slug>/comparisons/", ComparisonList.as_view(), name="api-comparisons"),
    path("studies/<slug:slug>/comparisons/<int:comparison_id>/", ComparisonDetail.as_view(),
         name="api-comparison"),
    path("studies/<slug:slug>/assisted-rounds/", AssistedRoundList.as_view(),
         name="api-assisted-rounds"),
]

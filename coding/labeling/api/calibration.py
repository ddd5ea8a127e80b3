"""Calibration items, reference answers, pass threshold, who passed: REST API (owners only).

The same operations as the calibration page, through coding.labeling.calibration. Every view
checks the owner's role before it reads the body; a refusal is a 400 keyed by what it is
about (a document key, a question key, `threshold`, `waived.<username>`)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.labeling import calibration
from coding.models import Role

OWNERS = {Role.OWNER}


def as_api_error(error):
    return ValidationError(error.message_dict if hasattr(error, "error_dict") else error.messages)


# --- shapes (for the schema) ----------------------------------------------------------------

class CalibrationItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    document_key = serializers.CharField(source="document.key")
    kind = serializers.CharField(source="document.kind")
    title = serializers.CharField(source="document.title")
    reference = serializers.JSONField(source="reference_values", allow_null=True,
                                      help_text="Question key to reference answer; null until entered.")
    finished = serializers.IntegerField(help_text="Coders who submitted or skipped it.")
    removable = serializers.SerializerMethodField(
        help_text="Whether it can go back to the main round (nobody has started it).")

    def get_removable(self, item) -> bool:
        return not item.started


class DifferenceSerializer(serializers.Serializer):
    item = serializers.IntegerField()
    document_key = serializers.CharField()
    answer = serializers.JSONField(allow_null=True)
    reference = serializers.JSONField()


class CoderResultSerializer(serializers.Serializer):
    username = serializers.CharField(source="coder.username")
    name = serializers.CharField(source="coder.get_full_name")
    waived = serializers.BooleanField()
    done = serializers.IntegerField(help_text="Calibration items submitted or skipped.")
    submitted = serializers.IntegerField()
    skipped = serializers.IntegerField()
    total = serializers.IntegerField(help_text="Calibration items in the study.")
    score = serializers.FloatField(allow_null=True, help_text=(
        "Share of compared answers matching the reference (0 to 1); null before any."))
    compared = serializers.IntegerField(help_text="Answers compared with a reference.")
    status = serializers.ChoiceField(choices=list(calibration.STATUSES), help_text="; ".join(
        f"{key}: {text}" for key, text in calibration.STATUSES.items()))
    differences = serializers.DictField(
        child=DifferenceSerializer(many=True),
        help_text="Per question key, the items on which the coder's answer differed.")


class CalibrationSerializer(serializers.Serializer):
    threshold = serializers.FloatField(help_text="Share of matching answers needed to pass, 0 to 1.")
    items = CalibrationItemSerializer(many=True)
    coders = CoderResultSerializer(many=True)


class ShareField(serializers.FloatField):
    """A share from 0 to 1; true and false are not numbers here."""

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class CalibrationChangeSerializer(serializers.Serializer):
    threshold = ShareField(required=False, min_value=0, max_value=1,
                                       help_text="0 to 1, e.g. 0.8 for 80%.")
    waived = serializers.DictField(
        child=serializers.BooleanField(), required=False,
        help_text='Coder username to whether calibration is waived for them: {"cora": true}. '
                  "A waived coder goes on to the main round after the calibration items, "
                  "whatever the score.")


class AddItemsSerializer(serializers.Serializer):
    items = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=2**62),
                                  required=False, default=list,
                                  max_length=calibration.MAX_ITEMS_PER_CHANGE,
                                  help_text="Item ids.")
    document_keys = serializers.ListField(child=serializers.CharField(max_length=300),
                                          required=False, default=list,
                                          max_length=calibration.MAX_ITEMS_PER_CHANGE,
                                          help_text="Document keys, e.g. 2501.01234.")


class AddedSerializer(serializers.Serializer):
    added = serializers.ListField(child=serializers.CharField(),
                                  help_text="Document keys moved into calibration.")
    already = serializers.ListField(child=serializers.CharField(),
                                    help_text="Document keys that were in calibration already.")


class ReferenceSerializer(serializers.Serializer):
    values = serializers.DictField(help_text=(
        "Question key to answer, complete and valid for the current version of the item's "
        "codebook, as a coder's submission would be."))


class ReferenceReadSerializer(ReferenceSerializer):
    item = serializers.IntegerField()
    document_key = serializers.CharField()
    codebook_version = serializers.IntegerField(allow_null=True)
    values = serializers.DictField(allow_null=True, help_text="Null until entered.")


# --- views ---------------------------------------------------------------------------

def overview(study):
    return {"threshold": study.calibration_threshold,
            "items": CalibrationItemSerializer(calibration.calibration_items(study), many=True).data,
            "coders": CoderResultSerializer(calibration.results(study), many=True).data}


class Calibration(APIView):
    @extend_schema(responses=CalibrationSerializer)
    def get(self, request, slug):
        """The calibration items with their reference answers, the pass threshold, and each
        coder's results (owners only: coders never see others' results or the reference)."""
        return Response(overview(access_study(request.user, slug, roles=OWNERS)))

    @extend_schema(request=CalibrationChangeSerializer, responses=CalibrationSerializer)
    def patch(self, request, slug):
        """Set the pass threshold and waive calibration per coder; all or nothing."""
        study = access_study(request.user, slug, roles=OWNERS)
        data = CalibrationChangeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            calibration.change(study, request.user, **data.validated_data)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        study.refresh_from_db()
        return Response(overview(study))


class CalibrationItems(APIView):
    @extend_schema(request=AddItemsSerializer, responses={200: AddedSerializer})
    def post(self, request, slug):
        """Move main-round items nobody has coded into calibration, by id or document key:
        all of them or none (400 naming each item refused and why)."""
        study = access_study(request.user, slug, roles=OWNERS)
        data = AddItemsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            added = calibration.add_items(study, request.user, ids=data.validated_data["items"],
                                          keys=data.validated_data["document_keys"])
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        return Response(added)


class CalibrationItem(APIView):
    @extend_schema(request=None, responses={
        204: OpenApiResponse(description="Back in the main round."),
        400: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "Refused: a coder has coded, skipped or holds the item; the body names it by its "
            "document key and says why."))})
    def delete(self, request, slug, item_id):
        """Move a calibration item back to the main round, its reference answer dropped;
        400 once a coder has coded, skipped or holds it."""
        study = access_study(request.user, slug, roles=OWNERS)
        item = calibration.access_calibration_item(study, item_id)
        try:
            calibration.remove_item(study, item, request.user)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        return Response(status=status.HTTP_204_NO_CONTENT)


class Reference(APIView):
    def payload(self, item):
        version = item.codebook.current_version()
        return {"item": item.pk, "document_key": item.document.key,
                "codebook_version": version and version.number, "values": item.reference_values}

    @extend_schema(responses=ReferenceReadSerializer)
    def get(self, request, slug, item_id):
        """A calibration item's reference answer."""
        study = access_study(request.user, slug, roles=OWNERS)
        return Response(self.payload(calibration.access_calibration_item(study, item_id)))

    @extend_schema(request=ReferenceSerializer, responses=ReferenceReadSerializer)
    def put(self, request, slug, item_id):
        """Set a calibration item's reference answer: checked as a complete coding (400
        keyed by question: unknown, required, wrong option or type, not applicable);
        nothing is saved unless all of it is valid."""
        study = access_study(request.user, slug, roles=OWNERS)
        item = calibration.access_calibration_item(study, item_id)
        data = ReferenceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            calibration.set_reference(item, data.validated_data["values"], request.user)
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        return Response(self.payload(item))


urlpatterns = [
    path("studies/<slug:slug>/calibration/", Calibration.as_view(), name="api-calibration"),
    path("studies/<slug:slug>/calibration/items/", CalibrationItems.as_view(),
         name="api-calibration-items"),
    path("studies/<slug:slug>/calibration/items/<int:item_id>/", CalibrationItem.as_view(),
         name="api-calibration-item"),
    path("studies/<slug:slug>/calibration/items/<int:item_id>/reference/", Reference.as_view(),
         name="api-calibration-reference"),
]

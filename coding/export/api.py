"""Exports over the API: start one (a job to poll at /api/jobs/{id}/), download the bundle."""

from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.export.bundle import FORMATS, SHAPES
from coding.export.jobs import start_export, start_qdpx_export
from coding.export.qdpx import SCOPES
from coding.export.views import EXPORTERS, export_download
from coding.labeling.codings import record_reads
from coding.models import OthersWorkRead, Role
from workbench.api import JobSerializer


class ExportRequest(serializers.Serializer):
    shapes = serializers.ListField(child=serializers.ChoiceField(choices=SHAPES),
                                   default=list(SHAPES), allow_empty=False)
    format = serializers.ChoiceField(choices=FORMATS, default="csv")
    include_mapping = serializers.BooleanField(default=False,
                                               help_text="Owners only: add coders.csv.")


class ExportStart(APIView):
    @extend_schema(request=ExportRequest, responses={202: JobSerializer})
    def post(self, request, slug):
        """Start an export; poll the returned job, then follow result.download."""
        study = access_study(request.user, slug, roles=EXPORTERS)
        data = ExportRequest(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data["include_mapping"] and Role.OWNER not in study.my_roles:
            raise ValidationError({"include_mapping": gettext(
                "Only owners may export the coder mapping.")})
        record_reads(study, request.user, OthersWorkRead.Kind.EXPORT)  # the whole study
        job = start_export(study, request.user, shapes=[s for s in SHAPES if s in data.validated_data["shapes"]],
                           fmt=data.validated_data["format"],
                           include_mapping=data.validated_data["include_mapping"])
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class QdpxRequest(serializers.Serializer):
    scope = serializers.ChoiceField(choices=SCOPES, default="study", help_text=(
        "study, main or calibration (a round), or sample (the reliability sample)."))
    include_names = serializers.BooleanField(default=False, help_text=(
        "Owners only: users by their user names instead of coder_1, coder_2 …"))


class QdpxExportStart(APIView):
    @extend_schema(request=QdpxRequest, responses={202: JobSerializer})
    def post(self, request, slug):
        """Start an export as a REFI-QDA project (.qdpx) for the QDA tools; poll the returned
        job, then follow result.download."""
        study = access_study(request.user, slug, roles=EXPORTERS)
        data = QdpxRequest(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data["include_names"] and Role.OWNER not in study.my_roles:
            raise ValidationError({"include_names": gettext(
                "Only owners may export the coders' names.")})
        record_reads(study, request.user, OthersWorkRead.Kind.EXPORT)  # the whole study
        job = start_qdpx_export(study, request.user, scope=data.validated_data["scope"],
                                names=data.validated_data["include_names"])
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class ExportDownload(APIView):
    @extend_schema(responses={(200, "application/zip"): OpenApiResponse(description="The bundle.")})
    def get(self, request, slug, job_id):
        """The finished export's zip."""
        return export_download(request._request, slug, job_id)

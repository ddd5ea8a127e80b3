"""The method catalog, framework landings and history scans over the API (never for coders)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from workbench.api import JobSerializer
from workbench.paging import paged_response

from .. import landings
from ..access import access_study
from ..models import Role
from ..views.catalog import SEES_INCLUSION, start_scan


def landing_payload(landing):
    return {"framework": landing.framework.name, "option_name": landing.option_name,
            "commit": landing.commit, "committed_at": landing.committed_at,
            "author": landing.author, "pull_request": landing.pull_request,
            "upper_bound": landing.upper_bound}


class Catalog(APIView):
    @extend_schema(parameters=[
        OpenApiParameter("limit", int, description="Rows per page (default 50, at most 500)."),
        OpenApiParameter("offset", int, description="Rows to skip."),
    ], responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
        "{count, next, previous, results: [{method, source_arxiv_id, first_public, "
        "frameworks, days_to_first_landing, landings[]}]}"))})
    def get(self, request, slug):
        """Each method: source, first public, landings per framework, days to first landing."""
        study = access_study(request.user, slug, roles=SEES_INCLUSION)
        return paged_response(self, landings.catalog(study), lambda row: {
            "method": row["method"].name, "source_arxiv_id": row["method"].source_arxiv_id,
            "first_public": row["method"].first_public, "frameworks": row["frameworks"],
            "days_to_first_landing": row["days_to_first"],
            "landings": [landing_payload(landing) for landing in row["landings"]],
        })


class ScanRequest(serializers.Serializer):
    repo = serializers.CharField(help_text="Path of a local clone on the server.")
    branch = serializers.CharField(required=False, allow_blank=True, default="")


class FrameworkDetail(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, slug, framework_id):
        """Methods landed with their delay; thread proposals with their coded outcome."""
        study = access_study(request.user, slug, roles=SEES_INCLUSION)
        report = landings.framework_report(get_object_or_404(study.frameworks, pk=framework_id))
        return Response({
            "framework": report["framework"].name, "median_days": report["median_days"],
            "landed": [{**landing_payload(row["landing"]), "method": row["landing"].method.name,
                        "days": row["days"]} for row in report["landed"]],
            "proposals": [{"document_key": row["link"].document.key,
                           "method": row["link"].method.name, "outcome": row["outcome"]}
                          for row in report["proposals"]],
        })

    @extend_schema(request=ScanRequest, responses={202: JobSerializer})
    def post(self, request, slug, framework_id):
        """Scan the framework's history (owners); poll the returned job."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        framework = get_object_or_404(study.frameworks, pk=framework_id)
        data = ScanRequest(data=request.data)
        data.is_valid(raise_exception=True)
        job = start_scan(framework, request.user, **data.validated_data)
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

"""Imports into the pool over the API, and the screening flow."""

import json

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from workbench.api import JobSerializer

from .. import pool
from ..access import access_study
from ..models import Role
from ..views.imports import save_upload, start_import


class ImportRequest(serializers.Serializer):
    source = serializers.JSONField(help_text='What to read, as ingest.imports.run_import takes it: '
                                   '{"format": "arxiv_api", "search_query": "cat:cs.LG"}; '
                                   "for an uploaded file, the path is filled in.")
    screening = serializers.JSONField(required=False, default=dict, help_text=
                                      "date_from, date_to, categories (list), query, regex")
    file = serializers.FileField(required=False)


class ImportStart(APIView):
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(request=ImportRequest, responses={202: JobSerializer})
    def post(self, request, slug):
        """Start an import into the pool (owners); poll the returned job."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        data = ImportRequest(data=request.data)
        data.is_valid(raise_exception=True)
        source, screening = (_as_object(data.validated_data[k]) for k in ("source", "screening"))
        if data.validated_data.get("file"):
            source["path"] = str(save_upload(study, data.validated_data["file"]))
        try:
            job = start_import(study, request.user, source, pool.Screening.from_dict(screening))
        except ValueError as error:
            raise ValidationError({"source": str(error)}) from error
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def _as_object(value):
    try:
        value = json.loads(value) if isinstance(value, str) else value
    except ValueError as error:  # a multipart field that is not JSON
        raise ValidationError(
            f"expected a JSON object, got text that is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ValidationError("expected a JSON object")
    return dict(value)


class ScreeningFlow(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, slug):
        """The study's screening flow: totals over every import, and each import's counts."""
        study = access_study(request.user, slug, roles={Role.OWNER, Role.VIEWER,
                                                        Role.ADJUDICATOR})
        flow = pool.screening_flow(study)
        return Response({"totals": flow["totals"], "imports": [{
            "id": run.pk, "job": run.job_id, "created_at": run.created_at,
            "source": run.params, "screening": run.screening, "counts": run.counts,
        } for run in flow["runs"]]})

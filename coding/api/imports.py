"""Imports into the pool over the API, and the screening flow."""

import json
from pathlib import Path

from django.conf import settings

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from workbench.api import JobSerializer
from workbench.parsers import StrictJSONParser

from .. import pool
from ..access import access_study
from ..codebooks import unstorable_text
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
    parser_classes = [StrictJSONParser, MultiPartParser, FormParser]

    @extend_schema(request=ImportRequest, responses={202: JobSerializer})
    def post(self, request, slug):
        """Start an import into the pool (owners); poll the returned job."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        data = ImportRequest(data=request.data)
        data.is_valid(raise_exception=True)
        source, screening = (_as_object(data.validated_data[k]) for k in ("source", "screening"))
        unstorable = {name: problem for name, value in (("source", source), ("screening", screening))
                      if (problem := unstorable_text(value))}
        if unstorable:  # both are kept on the job as JSON
            raise ValidationError(unstorable)
        try:
            screening = pool.Screening.from_dict(screening)
        except ValueError as error:
            raise ValidationError({"screening": str(error)}) from error
        if data.validated_data.get("file"):
            source["path"] = str(save_upload(study, data.validated_data["file"]))
        elif "path" in source:
            source["path"] = in_import_folder(source["path"])
        try:
            job = start_import(study, request.user, source, screening)
        except ValueError as error:
            raise ValidationError({"source": str(error)}) from error
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


def in_import_folder(path):
    """A path named over the API, taken inside the server's import folder and refused if it
    leads out of it: an owner may import what an administrator put there, not any file the
    server can read."""
    root = Path(settings.IMPORT_DIR).resolve()
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        raise ValidationError({"source": {"path": "give the name of a file in the import folder"}})
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ValidationError({"source": {"path": (
            f"{path!r} is outside the server's import folder; upload the file instead, or "
            "ask an administrator to place it in WORKBENCH_IMPORT_DIR")}})
    return str(target)


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

"""Imports into the pool over the API, and the screening flow."""

import json

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.labeling import pool
from coding.labeling.codings import check_storable
from coding.labeling.views.imports import named_import_file, save_upload, start_import
from coding.models import Item, Role
from coding.rest.serializers import ARCHIVED_RESPONSE
from workbench import storage
from workbench.api import JobSerializer
from workbench.parsers import StrictJSONParser


class ImportRequest(serializers.Serializer):
    source = serializers.JSONField(help_text='What to read, as ingest.imports.run_import takes it: '
                                   '{"format": "arxiv_api", "search_query": "cat:cs.LG"}; '
                                   "for an uploaded file, the path is filled in.")
    screening = serializers.JSONField(required=False, default=dict, help_text=
                                      "date_from, date_to, categories (list), query, regex")
    file = serializers.FileField(required=False)
    round = serializers.ChoiceField(choices=Item.Round.choices, default=Item.Round.MAIN,
                                    help_text="The round new documents join: main, or "
                                    "calibration (coded by every coder first); documents "
                                    "already in the pool keep theirs.")


class ImportStart(APIView):
    parser_classes = [StrictJSONParser, MultiPartParser, FormParser]

    @extend_schema(request=ImportRequest, responses={202: JobSerializer, 409: ARCHIVED_RESPONSE})
    def post(self, request, slug):
        """Start an import into the pool (owners); poll the returned job."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        data = ImportRequest(data=request.data)
        try:
            data.is_valid(raise_exception=True)
            source, screening = (_as_object(data.validated_data[k])
                                 for k in ("source", "screening"))
        except RecursionError:  # a form field's JSON nested past what json can read
            raise ValidationError(_("source or screening is nested too deeply")) from None
        refuse_server_only(source)
        try:
            check_storable({"source": source, "screening": screening})  # kept on the job
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from None
        try:
            screening = pool.Screening.from_dict(screening)
        except ValueError as error:
            raise ValidationError({"screening": str(error)}) from error
        upload = None
        if data.validated_data.get("file"):
            upload = save_upload(study, data.validated_data["file"])
            source.pop("path", None)
            source["stored"] = upload
        else:
            try:
                source = named_import_file(study, source)
            except ValueError as error:
                raise ValidationError({"source": {"path": str(error)}}) from None
        try:
            job = start_import(study, request.user, source, screening,
                               data.validated_data["round"])
        except ValueError as error:
            if upload:  # nothing will read it
                storage.delete_tree(upload.rsplit("/", 1)[0])
            raise ValidationError({"source": str(error)}) from error
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


# Source settings that write on the server: the commands (run by whoever has the shell)
# take them; over the API an owner, who is not an administrator, may not.
SERVER_ONLY = ("save_to",)
# Filled in by the server only: a stored key is where an upload or a named file was put.
SERVER_FILLED = ("stored",)


def refuse_server_only(source):
    named = [key for key in SERVER_ONLY if key in source]
    if named:
        raise ValidationError({"source": {key: _(
            "writes a file on the server; use the ingest_github command, run by an "
            "administrator") for key in named}})
    filled = [key for key in SERVER_FILLED if key in source]
    if filled:
        raise ValidationError({"source": {key: _(
            "is filled in by the server; upload a file, or name one with 'path'")
            for key in filled}})


def _as_object(value):
    try:
        value = json.loads(value) if isinstance(value, str) else value
    except RecursionError:
        raise ValidationError(_("nested too deeply")) from None
    except ValueError as error:  # a multipart field that is not JSON
        raise ValidationError(_("expected a JSON object, got text that is not JSON: "
                                "%(problem)s") % {"problem": error}) from None
    if not isinstance(value, dict):
        raise ValidationError(_("expected a JSON object"))
    return dict(value)


class ScreeningFlow(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, slug):
        """The study's screening flow: totals over every import (every record read counted
        once: `adds_up`), the document kinds the study has no codebook for, and each
        import with its file name, who started it, its status and its counts."""
        study = access_study(request.user, slug, roles={Role.OWNER, Role.VIEWER,
                                                        Role.ADJUDICATOR})
        flow = pool.screening_flow(study)
        return Response({
            "totals": flow["totals"], "missing_codebooks": pool.missing_kinds(study),
            "imports": [{
                "id": run.pk, "job": run.job_id, "created_at": run.created_at,
                "finished_at": run.finished_at, "status": run.shown_status,
                "error": run.error, "file_name": run.file_name,
                "started_by": run.started_by.username if run.started_by else None,
                "source": run.params, "screening": run.screening, "counts": run.counts,
                "parts": run.parts, "adds_up": run.adds_up,
            } for run in flow["runs"]]})

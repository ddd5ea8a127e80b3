"""Codebooks as files: JSON and YAML (one versioned schema) and REFI-QDA .qdc: REST API."""

from django.http import JsonResponse
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.codebooks.files import (
    FORMATS, MAX_FILE_BYTES, SCHEMA, BadFile, InvalidSpec, Parsed, check_structure,
    import_codebook, import_file, load_json, read_upload,
)
from coding.codebooks.views.files import access_version, file_response
from coding.models import Codebook, Role


class FileFormatNotRenderer(DefaultContentNegotiation):
    """`?format=` names the file to send, not a renderer: answers that are not the file
    (errors) are JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


FILE = OpenApiResponse(OpenApiTypes.BINARY, description=(
    "The version as a file (attachment): JSON or YAML in the `workbench-codebook` format "
    "version 1 (JSON Schema in coding/codebooks/schemas/codebook-v1.schema.json), or a REFI-QDA "
    "codebook (XML, namespace urn:QDA-XML:codebook:1.0). The same version gives the same "
    "bytes."))


class CodebookFile(APIView):
    content_negotiation_class = FileFormatNotRenderer

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=list(FORMATS), required=False,
                                     description="json (default), yaml or qdc")],
        responses={(200, "application/json"): FILE, (200, "application/yaml"): FILE,
                   (200, "application/xml"): FILE})
    def get(self, request, slug, codebook_id, number):
        """Download one version of a codebook as a file; any member may."""
        version = access_version(request.user, slug, codebook_id, number)
        fmt = request.query_params.get("format", "json")
        if fmt not in FORMATS:
            raise ValidationError({"format": [_("one of %(choices)s")
                                              % {"choices": ", ".join(FORMATS)}]})
        response = file_response(version, fmt)
        if response.status_code == 400:
            raise ValidationError({"format": [response.content.decode()]})
        return response


class CodebookFormat(APIView):
    @extend_schema(responses={(200, "application/schema+json"): OpenApiResponse(
        OpenApiTypes.OBJECT, description="The JSON Schema (draft 2020-12) of the codebook "
        "file format, version 1: what the file download sends and the import reads.")})
    def get(self, request):
        """The JSON Schema of codebook files (JSON and YAML), format version 1."""
        return JsonResponse(SCHEMA, content_type="application/schema+json",
                            json_dumps_params={"indent": 2})


class CodebookJSONParser(JSONParser):
    """A JSON body read as a codebook file is: duplicate keys and NaN refused, bounded."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = stream.read(MAX_FILE_BYTES + 65_536) if stream is not None else b""
        try:
            return load_json(data)
        except BadFile as error:
            raise ParseError(_("JSON parse error - %(problem)s") % {"problem": error}) from None


@extend_schema_field({"type": "string", "enum": list(FORMATS)}, component_name="CodebookFileFormat")
class FileFormatField(serializers.ChoiceField):
    """json, yaml or qdc: a schema component of its own, apart from the export's formats."""

    def __init__(self, **kwargs):
        super().__init__(FORMATS, **kwargs)


class CodebookImportRequest(serializers.Serializer):
    file = serializers.FileField(required=False, help_text=(
        "multipart: the file (.json, .yaml/.yml, .qdc); at most 1 MB"))
    document = serializers.JSONField(required=False, help_text=(
        'JSON body: the codebook object itself ({"format": "workbench-codebook", '
        '"format_version": 1, "name": …, "applies_to": …, "questions": […]}) instead of a file'))
    format = FileFormatField(required=False, help_text=(
        "the file's format; by default from its name, else from its first character"))
    codebook_id = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1,
                                           help_text=(
        "import as a new draft version of this codebook of the study (its newest version, "
        "if a draft, is replaced); without it a new codebook is made, as draft v1"))
    name = serializers.CharField(required=False, allow_blank=True, max_length=200, help_text=(
        "the codebook's name instead of the file's (a .qdc has none: default its file name)"))
    applies_to = serializers.ChoiceField(Codebook.AppliesTo.choices, required=False, help_text=(
        "what a new codebook from a .qdc codes (default paper); JSON and YAML say it"))
    dry_run = serializers.BooleanField(required=False, default=False, help_text=(
        "check everything and answer what would be written, writing nothing"))


class CodebookImportResult(serializers.Serializer):
    dry_run = serializers.BooleanField()
    codebook_id = serializers.IntegerField(allow_null=True, help_text="null on a dry run")
    codebook = serializers.CharField(help_text="its name")
    version = serializers.IntegerField()
    status = serializers.CharField(help_text="always draft: publish it to code with it")
    new_codebook = serializers.BooleanField()
    replaced_draft = serializers.BooleanField()
    questions = serializers.IntegerField()
    options = serializers.IntegerField()
    format = FileFormatField()


class CodebookImport(APIView):
    parser_classes = [CodebookJSONParser, MultiPartParser, FormParser]

    @extend_schema(request={"application/json": CodebookImportRequest,
                            "multipart/form-data": CodebookImportRequest},
                   responses={201: CodebookImportResult, 200: OpenApiResponse(
                       CodebookImportResult, description="dry_run: what would have been written")})
    def post(self, request, slug):
        """Import a codebook file (owners): a new codebook as draft v1, or a new draft version
        of `codebook_id`. A bad file writes nothing; the 400 names each problem by line or
        by path (`questions[2].options[0].value`)."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        if not isinstance(request.data, dict):
            raise ValidationError({"document": [_("send a JSON object or a multipart form")]})
        form = CodebookImportRequest(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        if ("file" in data) == ("document" in data):
            raise ValidationError({"file": [_("send either a file (multipart) or a document "
                                              "(JSON), not both or neither")]})
        codebook = None
        if "codebook_id" in data:
            codebook = study.codebooks.filter(pk=data["codebook_id"]).first()
            if codebook is None:
                raise ValidationError({"codebook_id": [_("no codebook %(id)s in this study")
                                                       % {"id": data["codebook_id"]}]})
        options = {"codebook": codebook, "name": data.get("name", "").strip(),
                   "dry_run": data["dry_run"]}
        try:
            if "file" in data:
                result = import_file(study, request.user, read_upload(data["file"]),
                                     filename=data["file"].name, fmt=data.get("format"),
                                     applies_to=data.get("applies_to", ""), **options)
            else:
                parsed = Parsed(check_structure(data["document"]), "json")
                result = import_codebook(study, request.user, parsed, **options)
        except InvalidSpec as error:
            raise ValidationError(error.as_dict()) from None
        return Response(result, status=status.HTTP_200_OK if result["dry_run"]
                        else status.HTTP_201_CREATED)


urlpatterns = [
    path("codebook-format/v1/", CodebookFormat.as_view(), name="api-codebook-format"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/versions/<int:number>/file/",
         CodebookFile.as_view(), name="api-codebook-file"),
    path("studies/<slug:slug>/codebooks/import/", CodebookImport.as_view(),
         name="api-codebook-import"),
]

"""The inclusion analysis and the inclusion lists over the API: the same numbers as the
page and the command.

Owners, adjudicators and viewers read them; owners import lists; coders get 403 and
non-members 404.
"""

from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.blinding import check_inclusion_visible
from coding.access.roles import access_study
from coding.agreement.report import SEES_AGREEMENT
from coding.inclusion.analysis import analyse, parse_population
from coding.inclusion.lists import InclusionListError, import_list, lists_payload
from coding.labeling.codings import record_reads
from coding.models import OthersWorkRead, Role


class InclusionAnalysis(APIView):
    @extend_schema(
        parameters=[OpenApiParameter(
            "population", str, description="Decided values every paper must have, as "
            "question=value pairs separated by commas (label=rl_method,scope=general)."),
            OpenApiParameter("source", str, description="Where inclusion comes from: "
                             "tracker, or list:NAME for an imported inclusion list; default "
                             "the tracker when it has source papers, else the first list.")],
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "available, reason (when not), population, papers, included, not_included, "
            "orientation, test_rule, adjustment, source (in words), source_key, sources[], "
            "confidence; comparisons[] (each other source against the one used: source, both, "
            "used_only, other_only, neither, agreement, kappa, differing, differing_papers[] "
            "(the first 50)); fields[]: name, "
            "question, kind (yes_no, single, option), answers[], included[], not_included[] "
            "(counts per answer), included_share[], not_included_share[] (each answer's share "
            "of its column), left_out, test (fisher, freeman_halton or null), p, p_method "
            "(exact, or 'monte carlo: 20000 tables, seed 0' beyond 1,000,000 tables with the "
            "observed margins), "
            "p_holm, p_bh, odds_ratio {answer, value, low, high} (2 x 2), odds_ratios[] "
            "(larger tables: each answer against the rest), note."))})
    def get(self, request, slug):
        """Included against not-included papers (the method tracker's inclusion)."""
        study = access_study(request.user, slug, roles=SEES_AGREEMENT)
        check_inclusion_visible(study, study.my_roles)
        record_reads(study, request.user, OthersWorkRead.Kind.INCLUSION)
        try:
            population = parse_population(request.query_params.get("population", ""))
        except ValueError as problem:
            raise ValidationError({"population": [str(problem)]}) from problem
        try:
            return Response(analyse(study, population,
                                    request.query_params.get("source") or None))
        except ValueError as problem:
            field = "source" if "inclusion source" in str(problem) else "population"
            raise ValidationError({field: [str(problem)]}) from problem


class ListUpload(serializers.Serializer):
    name = serializers.CharField(max_length=100, help_text="The list's name; importing under "
                                 "a name the study has replaces that list.")
    file = serializers.FileField(help_text="CSV: paper, framework, and optionally date "
                                 "(YYYY-MM-DD) and link (commit, pull request or release).")


class InclusionLists(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
        "lists[]: name, file_name, sha256, rows, imported_by, imported_at."))})
    def get(self, request, slug):
        """The study's inclusion lists with their provenance."""
        study = access_study(request.user, slug, roles=SEES_AGREEMENT)
        check_inclusion_visible(study, study.my_roles)
        return Response({"lists": lists_payload(study)})

    @extend_schema(request={"multipart/form-data": ListUpload}, responses={
        201: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "name, rows, papers, frameworks[], replaced (rows of the list it replaced), "
            "sha256.")),
        400: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "errors[]: line (0: the list as a whole), column, message; nothing stored."))})
    def post(self, request, slug):
        """Import an inclusion list from CSV (owners): all rows or none."""
        study = access_study(request.user, slug, roles=SEES_AGREEMENT)
        if Role.OWNER not in study.my_roles:
            raise PermissionDenied(gettext("Only the study's owners import inclusion lists."))
        data = ListUpload(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            done = import_list(study, upload, data.validated_data["name"], request.user,
                               file_name=upload.name)
        except InclusionListError as problem:
            return Response({"detail": str(problem), "errors": [
                {"line": line, "column": column, "message": message}
                for line, column, message in problem.errors]},
                status=status.HTTP_400_BAD_REQUEST)
        return Response(done, status=status.HTTP_201_CREATED)

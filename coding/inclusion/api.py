"""The inclusion analysis over the API: the same numbers as the page and the command.

Owners, adjudicators and viewers read it; coders get 403 and non-members 404.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.blinding import check_inclusion_visible
from coding.access.roles import access_study
from coding.agreement.report import SEES_AGREEMENT
from coding.inclusion.analysis import analyse, parse_population
from coding.labeling.codings import record_reads
from coding.models import OthersWorkRead


class InclusionAnalysis(APIView):
    @extend_schema(
        parameters=[OpenApiParameter(
            "population", str, description="Decided values every paper must have, as "
            "question=value pairs separated by commas (label=rl_method,scope=general).")],
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "available, reason (when not), population, papers, included, not_included, "
            "orientation, test_rule, adjustment, source, confidence; fields[]: name, "
            "question, kind (yes_no, single, option), answers[], included[], not_included[] "
            "(counts per answer), left_out, test (fisher, freeman_halton or null), p, p_method "
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
            return Response(analyse(study, parse_population(
                request.query_params.get("population", ""))))
        except ValueError as problem:
            raise ValidationError({"population": [str(problem)]}) from problem

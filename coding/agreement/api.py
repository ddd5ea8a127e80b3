"""Agreement over the API: the same document as the agreement page and the command.

Owners, adjudicators and viewers read it; coders get 403 and non-members 404
(coding.access.roles), exactly as on the page.
"""

from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.agreement import snapshots
from coding.agreement.report import (
    RECOMPUTES, SEES_AGREEMENT, TEXT_LANGUAGE, TEXT_LANGUAGES, PlanForm, current_document,
    text_language,
)
from workbench.api import JobSerializer

PLAN_PARAMETERS = [
    OpenApiParameter("alpha_min", float, description="Target alpha for the sample-size plan "
                     "(default 0.800)."),
    OpenApiParameter("significance", float, description="Significance level (default 0.05)."),
    OpenApiParameter("smallest_share", float, description="Smallest expected category share; "
                     "default: the study's categories taken as equally common."),
]
LANGUAGE_PARAMETER = OpenApiParameter(
    "language", str, enum=list(TEXT_LANGUAGES), default=TEXT_LANGUAGE, description=(
        "The language of `text`, the block for a paper: en (English, the default) or "
        "zh-hans (Simplified Chinese). Figures, keys and coefficient names are the same in "
        "both; question texts follow the codebook's translation where it has one. Any other "
        "value is refused (400, naming `language`)."))
REPORT = OpenApiResponse(OpenApiTypes.OBJECT, description=(
    "study, computed_at (null before the first snapshot), n_codings, thresholds (with the "
    "rule: verdicts read the interval's lower bound), sample, disagreements {found, decided, "
    "undecided} now, procedure, against_decisions_rule; rounds.main and rounds.calibration, "
    "each with codebooks[].questions[]: key, kind, level, metric (the alpha level used: masi "
    "for multiple choice), codings, not_applicable, missing, units (coded by two or more "
    "coders), coders, percent_agreement, kappa {name, value, low, high}, alpha {value, low, "
    "high, level (mixed: special answers counted), verdict (on low), point_verdict}, "
    "alpha_numbers (numeric answers only, or null) {value, low, high, units, left_out}, "
    "included (what alpha counts, in words), coefficients[] {key, name, weights, value, low, "
    "high}, two_coders {units, pabak, bias_index, prevalence_index, stuart_maxwell "
    "{statistic, df, p}} or null, categories[], confusion {labels, counts}, coder_pairs[], "
    "against_decisions[] (only items adjudicated by someone else), undefined {metric: "
    "reason}, drift (batches of codings) and drift_calendar (days, weeks or months: unit) "
    "{windows[], coders[] {coder, flagged, points[] {window, units, percent_agreement, alpha, "
    "low, high, flag}}, rule} or null; planning {units_needed, warnings[], questions[]}; language and text (the block for a "
    "paper, in that language)."))


class AgreementReport(APIView):
    @extend_schema(parameters=[*PLAN_PARAMETERS, LANGUAGE_PARAMETER], responses={200: REPORT})
    def get(self, request, slug):
        """The reliability report of the newest snapshot, per round, codebook and question."""
        study = access_study(request.user, slug, roles=SEES_AGREEMENT)
        form = PlanForm(request.query_params or None)
        errors = dict(form.errors) if form.is_bound and not form.is_valid() else {}
        asked = request.query_params.get("language")
        language = text_language(asked) if asked is not None else TEXT_LANGUAGE
        if language is None:
            errors["language"] = [gettext("unknown language %(code)r: one of %(codes)s")
                                  % {"code": asked, "codes": ", ".join(TEXT_LANGUAGES)}]
        if errors:
            raise ValidationError(errors)
        return Response(current_document(study, form.inputs(), language))


class AgreementHistory(APIView):
    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
        "{round: [{n_codings, created_at, alphas: {'<codebook id>:<key>': {value, low, high, "
        "units}}}]}, oldest first."))})
    def get(self, request, slug):
        """Alpha per question at every snapshot: the lines over time."""
        study = access_study(request.user, slug, roles=SEES_AGREEMENT)
        return Response({round: [{"n_codings": n, "created_at": at, "alphas": summary}
                                 for n, at, summary in snapshots.history(study, round)]
                         for round in ("main", "calibration")})


class AgreementRecompute(APIView):
    @extend_schema(request=None, responses={202: JobSerializer})
    def post(self, request, slug):
        """Take a snapshot now, as a background job; poll the job for its progress."""
        study = access_study(request.user, slug, roles=RECOMPUTES)
        job = snapshots.recompute(study, request.user)
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

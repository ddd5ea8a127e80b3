"""Disagreements and decisions over the API: the same functions as the review page."""

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import BasePagination
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from coding.access.names import name_for
from coding.access.roles import access_study
from coding.adjudication import decisions as adjudication
from coding.labeling.api.coder import as_api_error, groups_payload
from coding.labeling.codings import record_reads
from coding.models import Decision, OthersWorkRead, Role
from coding.rest.filters import DecisionFilter
from coding.rest.serializers import page_rows

REVIEWERS = {Role.ADJUDICATOR, Role.OWNER}


class DecisionSerializer(serializers.ModelSerializer):
    item = serializers.IntegerField(source="item_id", read_only=True)
    decided_by = serializers.SerializerMethodField(
        help_text="Who decided, as the reader is shown them (a pseudonym where the study "
                  "hides names from adjudicators); null for a decision made by the rules.")

    class Meta:
        model = Decision
        fields = ["item", "question_key", "revision", "value", "method", "decided_by",
                  "rationale", "decided_at"]


    def get_decided_by(self, decision) -> str | None:
        if decision.decided_by is None:
            return None
        name = self.context.get("shown_name")
        return name(decision.decided_by) if name else decision.decided_by.username


class DecideSerializer(serializers.Serializer):
    question = serializers.CharField()
    value = serializers.JSONField(help_text="The final value, in the form a coding answers it.")
    rationale = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="Required when the value matches no coder.")


class AnswerGroupSerializer(serializers.Serializer):
    value = serializers.JSONField()
    coders = serializers.ListField(child=serializers.CharField())


class DisagreementSerializer(serializers.Serializer):
    item = serializers.IntegerField(source="item.pk")
    document_key = serializers.CharField(source="item.document.key")
    question = serializers.CharField(source="question.key")
    answers = serializers.SerializerMethodField()
    in_discussion = serializers.BooleanField()
    decision = DecisionSerializer(allow_null=True, help_text="The current decision, if any.")

    @extend_schema_field(AnswerGroupSerializer(many=True))
    def get_answers(self, row):
        name = self.context.get("shown_name") or (lambda coder: coder.username)
        return groups_payload([(value, sorted(group, key=name)) for value, group in row.groups],
                              name)


class KeysetPaging(BasePagination):
    """?limit= and ?after=<token>: pages of a stored, indexed list by the last row's place in
    its order, so a deep page costs what the first does. `count` is the filtered total up to
    10,000 (`count_exact`); the view's `counted()` gives it."""

    default_limit, max_limit = 50, 500

    def paginate_queryset(self, queryset, request, view=None):
        try:
            limit = min(max(int(request.query_params.get("limit", self.default_limit)), 1),
                        self.max_limit)
        except ValueError:
            raise ValidationError({"limit": gettext("a whole number from 1 to 500")}) from None
        try:
            rows = queryset(after=request.query_params.get("after") or None, limit=limit + 1)
        except ValueError:
            raise ValidationError({"after": gettext("not a page token of this list")}) from None
        self.request = request
        # From the tallies, or counted up to 10,000 rows (workbench.paging.bounded_count).
        self.count, self.count_exact = view.counted()
        self.next = (replace_query_param(request.build_absolute_uri(), "after", rows[limit - 1].token)
                     if len(rows) > limit else None)
        return rows[:limit]

    def get_paginated_response(self, data):
        return Response({"count": self.count, "count_exact": self.count_exact,
                         "next": self.next, "results": data})

    def get_paginated_response_schema(self, schema):
        return {"type": "object", "required": ["count", "count_exact", "results"], "properties": {
            "count": {"type": "integer", "description": "Rows matching the filters, counted "
                      "up to 10,000; past that 10,001 and `count_exact` is false."},
            "count_exact": {"type": "boolean",
                            "description": "Whether `count` is the exact number of rows."},
            "next": {"type": "string", "nullable": True, "format": "uri",
                     "description": "The next page, or null on the last."},
            "results": schema}}

    def get_schema_operation_parameters(self, view):
        return [
            {"name": "limit", "in": "query", "required": False,
             "schema": {"type": "integer", "minimum": 1, "maximum": self.max_limit},
             "description": "Rows per page (50 unless given; at most 500)."},
            {"name": "after", "in": "query", "required": False, "schema": {"type": "string"},
             "description": "The page token from the previous page's `next` link."},
        ]


class DisagreementList(generics.ListAPIView):
    """Items and questions whose independent codings differ (open ones by default), from the
    stored disagreements, paged by keyset (`next` links carry the token)."""

    serializer_class = DisagreementSerializer
    filter_backends = []  # its own filters, shared with the review queue page
    pagination_class = KeysetPaging

    @extend_schema(parameters=[
        OpenApiParameter("question", str, description="A question key."),
        OpenApiParameter("coders", str, description="Comma-separated usernames: rows where "
                         "these coders took part."),
        OpenApiParameter("category", str, description="Rows where some coder chose this value."),
        OpenApiParameter("status", str, enum=["open", "decided", "all"]),
        OpenApiParameter("order", str, description="Sort order, as on the review queue page."),
    ])
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    def get_queryset(self):
        from coding.adjudication.views import queue_filters

        study = access_study(self.request.user, self.kwargs["slug"], roles=REVIEWERS)
        filters, _ = queue_filters(self.request, study)
        self.shown_name = name_for(study, study.my_roles)
        self.counted = lambda: adjudication.disagreement_count(study, **filters)
        # A page function, not rows: the paginator asks for the page it needs.
        return lambda after, limit: adjudication.disagreements(study, after=after, limit=limit,
                                                               **filters)


    def get_serializer_context(self):
        return {**super().get_serializer_context(),
                "shown_name": getattr(self, "shown_name", None)}


class ItemReview(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, slug, item_id):
        """Each coder's independent and latest coding of the item, and its current decisions."""
        study = access_study(request.user, slug, roles=REVIEWERS)
        item = get_object_or_404(study.items.alive(), pk=item_id)
        record_reads(study, request.user, OthersWorkRead.Kind.REVIEW, [item.pk])
        held = adjudication.gather([item])[item.pk]
        name = name_for(study, study.my_roles)

        def coding(c):
            return {"revision": c.revision, "phase": c.phase, "values": c.values,
                    "notes": c.notes, "evidence": c.evidence, "unsure": c.unsure,
                    "seconds_spent": c.seconds_spent, "submitted_at": c.submitted_at}

        return Response({
            "item": item.pk, "can_decide": adjudication.can_decide(item, request.user),
            "coders": {name(coder): {"independent": coding(c),
                                     "latest": coding(held.latest[coder])}
                       for coder, c in sorted(held.independent.items(),
                                              key=lambda pair: name(pair[0]))},
            "decisions": DecisionSerializer(item.decisions.current(), many=True,
                                            context={"shown_name": name}).data,
        })

    @extend_schema(request=DecideSerializer, responses={201: DecisionSerializer})
    def post(self, request, slug, item_id):
        """Decide one question; deciding it again adds a revision."""
        study = access_study(request.user, slug, roles=REVIEWERS)
        item = get_object_or_404(study.items.alive(), pk=item_id)
        data = DecideSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            decision = adjudication.decide(item, data.validated_data["question"],
                                           data.validated_data["value"], request.user,
                                           data.validated_data["rationale"])
        except DjangoValidationError as error:
            raise as_api_error(error) from error
        except PermissionDenied as error:
            return Response({"detail": str(error)}, status=status.HTTP_403_FORBIDDEN)
        return Response(DecisionSerializer(decision).data, status=status.HTTP_201_CREATED)


class DecisionList(generics.ListAPIView):
    """Current decisions (or every revision with ?history=1). Owners, adjudicators, viewers."""

    serializer_class = DecisionSerializer
    queryset = Decision.objects.none()
    filterset_class = DecisionFilter

    @extend_schema(parameters=[OpenApiParameter("history", bool, required=False)])
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        # Each item on the page was read (a coder who also reviews: its later revisions
        # are informed; coding.labeling.codings.record_reads).
        record_reads(self.study, request.user, OthersWorkRead.Kind.DECISIONS,
                     [row["item"] for row in page_rows(response.data)])
        return response

    def get_serializer_context(self):
        return {**super().get_serializer_context(),
                "shown_name": getattr(self, "shown_name", None)}

    def get_queryset(self):
        study = self.study = access_study(self.request.user, self.kwargs["slug"],
                                          roles={*REVIEWERS, Role.VIEWER})
        self.shown_name = name_for(study, study.my_roles)
        decisions = Decision.objects.filter(item__study=study)
        if self.request.query_params.get("history") not in ("1", "true"):
            decisions = decisions.current()
        return decisions.select_related("decided_by").order_by("item_id", "question_key",
                                                                "revision")


class FeedbackDecisionSerializer(serializers.Serializer):
    value = serializers.JSONField(allow_null=True)
    method = serializers.CharField()
    decided_at = serializers.DateTimeField()
    decided_by = serializers.CharField(
        required=False,
        help_text="Empty for automatic decisions. Only when the study shows reasons (feedback_shows_reasons); a pseudonym "
                  "unless the study shows coders names.")
    rationale = serializers.CharField(required=False, help_text="Only when the study shows reasons.")


class FeedbackSerializer(serializers.Serializer):
    item = serializers.IntegerField(source="item.pk")
    question = serializers.CharField(source="question.key")
    yours = serializers.JSONField(help_text="Your independent answer.")
    decision = FeedbackDecisionSerializer()


class Feedback(generics.ListAPIView):
    """Where your independent answers differ from final decisions. Empty unless the study
    shows coders feedback (its `show_feedback` setting)."""

    serializer_class = FeedbackSerializer
    filter_backends = []

    def get_queryset(self):
        self.study = access_study(self.request.user, self.kwargs["slug"], roles={Role.CODER})
        return adjudication.feedback_for(self.study, self.request.user)

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        return page if page is None else adjudication.feedback_shown(page)

    def list(self, request, *args, **kwargs):
        response = super().list(request, *args, **kwargs)
        # Tells "the study shows no feedback" apart from "no differences".
        response.data["enabled"] = self.study.show_feedback
        return response

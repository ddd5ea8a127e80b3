"""The item browser over the API: the items with their states and filters, one item's
history, and the owners' actions on items. The page and `manage.py items` use the same
pieces (coding.items.browse, history, curate)."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import CAN_SEE_ALL_CODINGS, access_study
from coding.items import browse, curate
from coding.items.history import history
from coding.labeling.codings import record_reads
from coding.models import Item, OthersWorkRead, Role
from coding.rest import filters
from coding.rest.serializers import ItemSerializer
from coding.studies.api.lists import StudyScopedList

BROWSE_PARAMETERS = [
    OpenApiParameter("q", str, description="Text in the document key or title."),
    OpenApiParameter("state", str, enum=list(browse.STATES), description=(
        "Items that have this state (an item in disagreement is also coded); excluded "
        "items are listed only with state=excluded.")),
    OpenApiParameter("coder", int, description="Items a coder (user id) holds, submitted or "
                     "skipped."),
    OpenApiParameter("run", int, description="Items added by this import run."),
]


class ItemList(StudyScopedList):
    """The study's items with their states, in id order, paged by keyset (follow `next`).
    Not for coders: they see items only one at a time, blinded, through their queue."""

    serializer_class = ItemSerializer
    queryset = Item.objects.none()
    needs_roles = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}
    filterset_class = filters.ItemFilter
    ordering_fields = ["added_at", "priority", "id"]

    def get_queryset(self):
        study = self.scoped = self.study()  # read once: the page's rows need it again
        try:
            given = browse.parse_filters(self.request.query_params)
        except browse.FilterError as problem:
            raise ValidationError({problem.field: [str(problem)]}) from problem
        # kind and round are ItemFilter's (the same fields).
        given = browse.Filters(q=given.q, state=given.state, coder=given.coder, run=given.run)
        return (browse.items_for(study, given).select_related("document", "snapshot")
                .defer("snapshot__content", "document__metadata"))

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        if page is not None:
            browse.row_states(self.scoped, page)
            record_reads(self.scoped, self.request.user, OthersWorkRead.Kind.ITEMS,
                         [i.pk for i in page])
        return page

    @extend_schema(parameters=BROWSE_PARAMETERS)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


def _person(user, name):
    return name(user) if user is not None else None


class ItemDetail(APIView):
    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
        "item (as in the list, with excluded_at and excluded_reason), assignments[] (coder, "
        "status, created_at, finished_at, skip_reason), codings[] (coder, revision, phase, "
        "codebook_version, values, notes, unsure, submitted_at), decisions[] (question, "
        "revision, value, method, decided_by, rationale, decided_at), changes[] (action, "
        "actor, reason, at)."))})
    def get(self, request, slug, item_id):
        """One item's whole history (owners and adjudicators)."""
        study = access_study(request.user, slug, roles=CAN_SEE_ALL_CODINGS)
        item = get_object_or_404(Item.objects.select_related("document", "codebook", "snapshot"),
                                 study=study, pk=item_id)
        record_reads(study, request.user, OthersWorkRead.Kind.ITEMS, [item.pk])
        found = history(study, item, request.user, study.my_roles)
        return Response({
            "item": {**ItemSerializer(item).data, "excluded_at": item.deleted_at},
            "assignments": [{"coder": a.coder_name, "status": a.status,
                             "created_at": a.created_at, "finished_at": a.finished_at,
                             "skip_reason": a.skip_reason} for a in found["assignments"]],
            "codings": [{"coder": c.coder_name, "revision": c.revision, "phase": c.phase,
                         "codebook_version": c.codebook_version.number, "values": c.values,
                         "notes": c.notes, "unsure": c.unsure, "submitted_at": c.submitted_at}
                        for c in found["codings"]],
            "decisions": [{"question": d.question_key, "revision": d.revision,
                           "value": d.value, "method": d.method, "decided_by": d.by_name or None,
                           "rationale": d.rationale, "decided_at": d.decided_at}
                          for d in found["decisions"]],
            "changes": [{"action": c.action, "actor": c.actor.username if c.actor else None,
                         "reason": c.reason, "at": c.at} for c in found["changes"]],
        })


class ActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=list(curate.ACTIONS))
    items = serializers.ListField(child=serializers.IntegerField(), max_length=curate.MAX_ITEMS,
                                  help_text="Item ids, at most 500.")
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000,
                                   help_text="Required to exclude.")


class ItemActions(APIView):
    @extend_schema(request=ActionSerializer, responses={200: OpenApiResponse(
        OpenApiTypes.OBJECT, description="action, changed[] (document keys). 400: "
        "{document key or field: [why]}; nothing changed.")})
    def post(self, request, slug):
        """Act on items (owners): exclude (with a reason), restore, release, return,
        calibration, sample. All the items or none."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        given = ActionSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            return Response(curate.apply(study, request.user, given.validated_data["action"],
                                         given.validated_data["items"],
                                         given.validated_data.get("reason", "")))
        except DjangoValidationError as problem:
            raise ValidationError(problem.message_dict) from problem

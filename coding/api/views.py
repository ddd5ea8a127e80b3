"""REST API. Same rules as the pages: every study comes through coding.access."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, mixins, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from ..access import CAN_SEE_ALL_CODINGS, access_study
from ..queue import sync_targets
from ..models import Assignment, Codebook, Coding, Item, Role, Study
from ..codebook_editing import new_codebook
from ..codebook_spec import InvalidSpec
from . import filters
from .codebook_edit import NewCodebookSerializer
from .serializers import (
    AssignmentSerializer, CodebookSerializer, CodingSerializer, ItemSerializer, StudySerializer,
)


class StudyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin,
                   mixins.UpdateModelMixin, viewsets.GenericViewSet):
    """Studies you are a member of. Only owners change a study's settings."""

    serializer_class = StudySerializer
    lookup_field = "slug"
    filterset_class = filters.StudyFilter
    ordering_fields = ["name", "created_at"]

    def get_queryset(self):
        return Study.objects.visible_to(self.request.user).order_by("name", "pk")

    def get_object(self):
        roles = {Role.OWNER} if self.request.method not in ("GET", "HEAD", "OPTIONS") else None
        study = access_study(self.request.user, self.kwargs["slug"], roles=roles)
        self.check_object_permissions(self.request, study)
        return study

    def perform_update(self, serializer):
        sync_targets(serializer.save())


class StudyScopedList(generics.ListAPIView):
    needs_roles = None

    def study(self):
        return access_study(self.request.user, self.kwargs["slug"], roles=self.needs_roles)


class CodebookList(StudyScopedList):
    """The study's codebooks with every version and its questions; owners make new ones."""

    serializer_class = CodebookSerializer
    queryset = Codebook.objects.none()  # the model, for the schema; rows come from the study
    filterset_class = filters.CodebookFilter

    def get_queryset(self):
        return (self.study().codebooks.prefetch_related("versions__questions__options")
                .order_by("pk"))

    @extend_schema(request=NewCodebookSerializer, responses={201: CodebookSerializer})
    def post(self, request, slug):
        """A new codebook with an empty draft v1 (owners): fill it with PUT …/draft/, then
        publish it. 400 with `{field: [messages]}`."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        data = request.data if isinstance(request.data, dict) else {}
        try:
            codebook = new_codebook(study, request.user, name=data.get("name", ""),
                                    applies_to=data.get("applies_to", ""),
                                    description=data.get("description", ""))
        except InvalidSpec as invalid:
            raise ValidationError(invalid.as_dict()) from None
        return Response(CodebookSerializer(codebook).data, status=status.HTTP_201_CREATED)


class ItemList(StudyScopedList):
    """The study's items with their queue state. Not for coders: they see items only
    one at a time, blinded, through their queue."""

    serializer_class = ItemSerializer
    queryset = Item.objects.none()
    needs_roles = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}
    filterset_class = filters.ItemFilter
    ordering_fields = ["added_at", "priority", "id"]

    def get_queryset(self):
        return (self.study().items.alive().select_related("document", "snapshot")
                .defer("snapshot__content", "document__metadata").order_by("id"))


class AssignmentList(StudyScopedList):
    """Assignments: your own as a coder; all of them as owner or adjudicator. Paged by
    keyset (follow `next`) in id order; ?offset= still works."""

    serializer_class = AssignmentSerializer
    queryset = Assignment.objects.none()
    needs_roles = {Role.CODER, *CAN_SEE_ALL_CODINGS}
    filterset_class = filters.AssignmentFilter
    ordering_fields = ["id", "created_at", "finished_at"]
    keyset_fields = ["created_at"]  # finished_at may be empty: that order pages by offset

    def get_queryset(self):
        return (Assignment.objects.visible_to(self.request.user, self.study())
                .select_related("item__document", "coder").order_by("id"))


class CodingList(StudyScopedList):
    """Submitted coding revisions: your own as a coder; all as owner or adjudicator.
    Paged by keyset (follow `next`: every page costs what the first does) in id order,
    which is the order they were submitted in; ?offset= still works."""

    serializer_class = CodingSerializer
    queryset = Coding.objects.none()
    needs_roles = {Role.CODER, *CAN_SEE_ALL_CODINGS}
    filterset_class = filters.CodingFilter
    ordering_fields = ["id", "submitted_at"]
    keyset_fields = ["submitted_at"]

    def get_queryset(self):
        return (Coding.objects.visible_to(self.request.user, self.study())
                .select_related("assignment__coder", "codebook_version").order_by("id"))


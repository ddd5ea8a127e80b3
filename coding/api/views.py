"""REST API. Same rules as the pages: every study comes through coding.access."""

from rest_framework import generics, mixins, viewsets

from ..access import CAN_SEE_ALL_CODINGS, access_study
from ..queue import sync_targets
from ..models import Assignment, Coding, Role, Study
from .serializers import (
    AssignmentSerializer, CodebookSerializer, CodingSerializer, StudySerializer,
)


class StudyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin,
                   mixins.UpdateModelMixin, viewsets.GenericViewSet):
    """Studies you are a member of. Only owners change a study's settings."""

    serializer_class = StudySerializer
    lookup_field = "slug"

    def get_queryset(self):
        return Study.objects.visible_to(self.request.user)

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
    """The study's codebooks with every version and its questions."""

    serializer_class = CodebookSerializer

    def get_queryset(self):
        return self.study().codebooks.prefetch_related("versions__questions__options")


class AssignmentList(StudyScopedList):
    """Assignments: your own as a coder; all of them as owner or adjudicator."""

    serializer_class = AssignmentSerializer
    needs_roles = {Role.CODER, *CAN_SEE_ALL_CODINGS}

    def get_queryset(self):
        return (Assignment.objects.visible_to(self.request.user, self.study())
                .select_related("item__document", "coder").order_by("id"))


class CodingList(StudyScopedList):
    """Submitted coding revisions: your own as a coder; all as owner or adjudicator."""

    serializer_class = CodingSerializer
    needs_roles = {Role.CODER, *CAN_SEE_ALL_CODINGS}

    def get_queryset(self):
        return (Coding.objects.visible_to(self.request.user, self.study())
                .select_related("assignment__coder", "codebook_version").order_by("id"))


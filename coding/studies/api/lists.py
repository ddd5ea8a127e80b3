"""REST API. Same rules as the pages: every study comes through coding.access.roles."""

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Prefetch
from django.utils.translation import gettext as _
from drf_spectacular.utils import (
    OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view,
)
from rest_framework import generics, mixins, serializers, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from coding.access.roles import CAN_SEE_ALL_CODINGS, access_study, may_create_study
from coding.codebooks.api.editor import NewCodebookSerializer
from coding.codebooks.editing import new_codebook
from coding.codebooks.spec import InvalidSpec
from coding.codebooks.versions import readable_versions
from coding.labeling.codings import record_reads
from coding.models import (
    Assignment, Codebook, CodebookVersion, Coding, OthersWorkRead, Role, Study,
)
from coding.rest import filters
from coding.rest.serializers import (
    AssignmentSerializer, CodebookSerializer, CodingSerializer, StudySerializer, page_rows,
)
from coding.studies import setup as study_setup
from coding.studies.api import setup as study_setup_api

ARCHIVED = OpenApiParameter(
    "archived", bool, description="true: only archived studies; false (the default): only "
    "live ones. Archived studies stay readable at their own address.")


@extend_schema_view(list=extend_schema(parameters=[ARCHIVED]))
class StudyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin,
                   mixins.UpdateModelMixin, viewsets.GenericViewSet):
    """Studies you are a member of. Only owners change a study's settings."""

    serializer_class = StudySerializer
    lookup_field = "slug"
    filterset_class = filters.StudyFilter
    ordering_fields = ["name", "created_at"]

    def get_queryset(self):
        studies = Study.objects.visible_to(self.request.user).order_by("name", "pk")
        if self.action != "list":
            return studies
        wanted = serializers.BooleanField(required=False, default=False)
        try:
            show_archived = wanted.run_validation(self.request.query_params.get("archived", False))
        except serializers.ValidationError as error:
            raise ValidationError({"archived": error.detail}) from None
        return (study_setup.archived if show_archived else study_setup.live)(studies)

    @extend_schema(request=study_setup_api.StudyCreateSerializer, responses={
        201: StudySerializer,
        403: OpenApiResponse(description="You may not create studies, or `copy_of` names a "
                                         "study you do not own."),
        404: OpenApiResponse(description="`copy_of` names no study you are a member of.")})
    def create(self, request):
        """Create a study, which you then own: blank, from a preset, or as a copy of a study
        you own. Needs the permission to create studies (staff have it; an administrator
        grants it with `manage.py grant_study_creation`); 403 without it."""
        if not may_create_study(request.user):  # before the body is read
            raise PermissionDenied(_("You may not create studies; ask an administrator."))
        data = study_setup_api.StudyCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        source = fields["copy_of"] and access_study(request.user, fields["copy_of"],
                                                    roles={Role.OWNER})
        try:
            study = study_setup.create_study(request.user, fields["name"], fields["description"],
                                             preset=fields["preset"], copy_of=source or None)
        except DjangoValidationError as error:
            raise ValidationError(error.message_dict) from error
        body = StudySerializer(study, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    def get_object(self):
        roles = {Role.OWNER} if self.request.method not in ("GET", "HEAD", "OPTIONS") else None
        study = access_study(self.request.user, self.kwargs["slug"], roles=roles)
        self.check_object_permissions(self.request, study)
        return study

    def perform_update(self, serializer):
        # One place writes an owner's changes and their audit entries (rename: from, to).
        study_setup.update_study(serializer.instance, self.request.user,
                                 serializer.validated_data)


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
        study = self.study()
        # Drafts for owners only (codebooks.versions.readable_versions).
        versions = readable_versions(CodebookVersion.objects.all(), study.my_roles)
        return (study.codebooks.prefetch_related(
            Prefetch("versions", queryset=versions.prefetch_related("questions__options")))
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

    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        # Others' codings on the page were read (coding.labeling.codings.record_reads).
        record_reads(self.study(), request.user, OthersWorkRead.Kind.CODINGS,
                     [row["item"] for row in page_rows(response.data)
                      if row.get("coder") != request.user.username])
        return response

    def get_queryset(self):
        return (Coding.objects.visible_to(self.request.user, self.study())
                .select_related("assignment__coder", "codebook_version").order_by("id"))


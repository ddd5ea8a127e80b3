"""Creating, copying, renaming, archiving and restoring studies; the setup checklist and audit trail: REST API.

Creating is `POST /api/studies/` (coding.studies.api.lists.StudyViewSet.create, with the
serializer below); renaming and describing are the study's PATCH."""

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.audit import TARGET_WORDS
from coding.access.roles import access_study
from coding.adjudication.api import KeysetPaging
from coding.models import AuditEntry, Role
from coding.rest.serializers import StudySerializer
from coding.studies import setup as study_setup
from workbench.paging import bounded_count


class StudyCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=study_setup.NAME_MAX)
    description = serializers.CharField(required=False, allow_blank=True, default="",
                                        max_length=20_000)
    preset = serializers.ChoiceField(
        choices=[(key, p.label) for key, p in study_setup.PRESETS.items()], required=False,
        allow_null=True, default=None,
        help_text="Start from a preset: `rl-inclusion` (paper and thread codebooks, frameworks, "
                  "method catalog, blinded fields) or `threads` (the thread codebook only).")
    copy_of = serializers.SlugField(
        required=False, allow_null=True, default=None, max_length=80,
        help_text="The slug of a study you own to copy: its settings, the latest published "
                  "version of each codebook (as version 1 of the copy) and its catalog; never "
                  "its items, codings, decisions or members. 404 for a study you are not a "
                  "member of, 403 for one you do not own.")


class StudyArchiveView(APIView):
    archive = True

    def post(self, request, slug):
        study = access_study(request.user, slug, roles={Role.OWNER})
        change = study_setup.archive_study if self.archive else study_setup.restore_study
        change(study, request.user)
        return Response(StudySerializer(study, context={"request": request}).data)


@extend_schema(request=None, responses={200: StudySerializer})
class ArchiveStudy(StudyArchiveView):
    """Archive the study (owners): it leaves everyone's lists and takes no new work (no
    items handed out, no codings, no imports: those answer 409 `code: archived`), and
    stays readable by its members. Archiving an archived study changes nothing."""


@extend_schema(request=None, responses={200: StudySerializer})
class RestoreStudy(StudyArchiveView):
    """Restore an archived study (owners): it is listed and open to work again."""

    archive = False



class AuditEntrySerializer(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField(help_text="Who made the change (null: a "
                                                        "command or a removed account).")
    action_words = serializers.CharField(help_text="The action in words.")
    details_words = serializers.CharField(help_text="The details in words.")
    target = serializers.CharField(help_text="What it was done to, in English words.")
    target_parts = serializers.JSONField(
        allow_null=True,
        help_text=f"The target as keys: `kind` (one of {', '.join(sorted(TARGET_WORDS))}) "
                  "and the names or ids it needs (`name`, `role`, `id`, `codebook`, `number`, "
                  "`method`, `framework`, `keys`); null on entries written before targets had "
                  "a kind.")

    class Meta:
        model = AuditEntry
        fields = ["id", "at", "actor", "action", "action_words", "target", "target_parts",
                  "details", "details_words"]

    def get_actor(self, entry) -> str | None:
        return entry.actor.username if entry.actor else None


class AuditTrail(generics.ListAPIView):
    """Who changed the study's setup, when, and what (owners), newest first, paged by
    keyset (`next` links carry the token)."""

    serializer_class = AuditEntrySerializer
    queryset = AuditEntry.objects.none()
    filter_backends = []
    pagination_class = KeysetPaging

    def get_queryset(self):
        study = access_study(self.request.user, self.kwargs["slug"], roles={Role.OWNER})
        self.counted = lambda: bounded_count(AuditEntry.objects.filter(study=study))
        return lambda after, limit: study_setup.audit_entries(study, after=after, limit=limit)


urlpatterns = [
    path("studies/<slug:slug>/archive/", ArchiveStudy.as_view(), name="api-study-archive"),
    path("studies/<slug:slug>/restore/", RestoreStudy.as_view(), name="api-study-restore"),
    path("studies/<slug:slug>/audit/", AuditTrail.as_view(), name="api-study-audit"),
]

"""The codebook editor: drafts, publishing, version diffs, live preview: REST API.

A codebook travels as its spec (coding.codebooks.spec): GET a draft, change it, PUT it
back. Every refusal of a spec is a 400 with `{path: [messages]}`, paths such as
`questions[2].options[0].value`; nothing is written then.
"""

from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.actions.publish import publish_draft
from coding.codebooks.editing import (
    OPEN_ASSIGNMENTS, Conflict, NothingToPublish, draft_of, previous_version, revision, save_spec,
    start_draft, version_diff,
)
from coding.codebooks.spec import InvalidSpec, spec_of
from coding.models import Codebook, Question, Role

# --- the spec, for the schema (the checking is coding.codebooks.spec's) -------------------

class OptionSpec(serializers.Serializer):
    value = serializers.CharField(help_text="The code stored in codings and exports.")
    label = serializers.CharField(required=False, help_text="What coders read; default the value.")
    definition = serializers.CharField(required=False, allow_blank=True)
    examples = serializers.CharField(required=False, allow_blank=True)
    counter_examples = serializers.CharField(required=False, allow_blank=True)
    shortcut = serializers.CharField(required=False, allow_blank=True,
                                     help_text="One letter or digit; blank: its position 1-9.")
    exclusive = serializers.BooleanField(required=False,
                                         help_text="Chosen alone (a 'none' option of a "
                                                   "multiple-choice question).")


class ConditionSpec(serializers.Serializer):
    question = serializers.CharField(help_text="The key of a question above this one.")
    # "in" is a Python keyword: the field is declared below.


ConditionSpec._declared_fields["in"] = serializers.ListField(
    child=serializers.CharField(), help_text="The answers of that question that show this one.")


class QuestionSpec(serializers.Serializer):
    key = serializers.CharField(help_text="Lower-case letters, digits and _; unique.")
    text = serializers.CharField()
    kind = serializers.ChoiceField(choices=Question.Kind.choices)
    definition = serializers.CharField(required=False, allow_blank=True)
    required = serializers.BooleanField(required=False, default=True)
    level = serializers.ChoiceField(choices=Question.Level.choices, required=False)
    unit = serializers.CharField(required=False, allow_blank=True)
    show_if = ConditionSpec(required=False, allow_null=True)
    min_value = serializers.FloatField(required=False, allow_null=True)
    max_value = serializers.FloatField(required=False, allow_null=True)
    options = OptionSpec(many=True, required=False,
                         help_text="Choices; for a number question, special answers such as "
                                   "not_reported.")


class CodebookSpec(serializers.Serializer):
    name = serializers.CharField()
    applies_to = serializers.ChoiceField(choices=Codebook.AppliesTo.choices)
    description = serializers.CharField(required=False, allow_blank=True)
    questions = QuestionSpec(many=True)
    translations = serializers.JSONField(required=False, help_text=(
        "Texts in other languages: {language: {\"questions\": {key: {text, definition, unit, "
        "options: {value: {label, definition, examples, counter_examples}}}}}} "
        "(docs/codebook-format.md). Left out of a PUT, the draft keeps its translations of "
        "the questions and options it still has; {} removes them."))


class NewCodebookSerializer(serializers.Serializer):
    """A new codebook (POST …/codebooks/): checked by coding.codebooks.spec, like every spec."""

    name = serializers.CharField(max_length=200)
    applies_to = serializers.ChoiceField(choices=Codebook.AppliesTo.choices)
    description = serializers.CharField(required=False, allow_blank=True)


class DraftSerializer(serializers.Serializer):
    version = serializers.IntegerField(help_text="The draft's version number.")
    revision = serializers.CharField(help_text="Send it back as `If-Match` with a PUT: a "
                                               "draft saved meanwhile is then not overwritten.")
    spec = CodebookSpec()


class FieldChange(serializers.Serializer):
    field = serializers.CharField()
    old = serializers.JSONField(allow_null=True)
    new = serializers.JSONField(allow_null=True)


class TranslationChange(serializers.Serializer):
    language = serializers.CharField()
    question = serializers.CharField(help_text="The question's key.")
    option = serializers.CharField(allow_null=True,
                                   help_text="The option's value; null for the question's own texts.")
    field = serializers.CharField(help_text="text, definition, unit; or an option's label, "
                                            "definition, examples, counter_examples.")
    old = serializers.CharField(allow_null=True)
    new = serializers.CharField(allow_null=True)


class DiffSerializer(serializers.Serializer):
    codebook = FieldChange(many=True, help_text="Name and description.")
    added = serializers.ListField(child=serializers.DictField())
    removed = serializers.ListField(child=serializers.DictField())
    changed = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per question: `fields` changed ({field, old, new}) and `options` "
                  "({added, removed, changed, order}).")
    order = serializers.DictField(allow_null=True,
                                  help_text="{old: [keys], new: [keys]} when reordered.")
    translations = TranslationChange(
        many=True, help_text="Each translated text added (old null), changed or removed (new "
                             "null), by language, question key and option value.")


class VersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    status = serializers.CharField()
    note = serializers.CharField(allow_blank=True)
    published_at = serializers.DateTimeField(allow_null=True)
    previous = serializers.IntegerField(allow_null=True, help_text="The version compared against.")
    spec = CodebookSpec()
    diff = DiffSerializer()


class PublishRequest(serializers.Serializer):
    note = serializers.CharField(max_length=5000, help_text="What changed and why; required.")
    open_assignments = serializers.ChoiceField(
        choices=list(OPEN_ASSIGNMENTS),
        help_text="What items coders hold now do: " + " ".join(
            f"`{k}`: {v}" for k, v in OPEN_ASSIGNMENTS.items()))
    version = serializers.IntegerField(
        required=False, min_value=1, max_value=2**31 - 1,
        help_text="The draft's number you mean to publish: a replay after someone started "
                  "the next draft then publishes nothing.")


class PublishedSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    note = serializers.CharField()
    published_at = serializers.DateTimeField()
    released = serializers.IntegerField(help_text="Open items sent back to the pool.")
    drafts_pruned = serializers.IntegerField(help_text="Coder drafts that lost answers.")


CONFLICT = OpenApiResponse(description="Nothing to publish: no draft (already published).")
PRECONDITION = OpenApiResponse(description="The draft changed since the revision in If-Match; "
                                           "nothing was written.")
IF_MATCH = OpenApiParameter("If-Match", str, OpenApiParameter.HEADER, required=False,
                            description="The `revision` of the draft you read.")


def draft_payload(version):
    spec = spec_of(version)
    return {"version": version.number, "revision": revision(spec), "spec": spec}


def version_payload(version):
    before = previous_version(version)
    return {"version": version.number, "status": version.status, "note": version.note,
            "published_at": version.published_at, "previous": before and before.number,
            "spec": spec_of(version), "diff": version_diff(version)}


def spec_error(invalid):
    return ValidationError(invalid.as_dict())


class CodebookView(APIView):
    roles = {Role.OWNER}

    def codebook(self):
        study = access_study(self.request.user, self.kwargs["slug"], roles=self.roles)
        return get_object_or_404(study.codebooks, pk=self.kwargs["codebook_id"])


class Draft(CodebookView):
    @extend_schema(responses={200: DraftSerializer})
    def get(self, request, slug, codebook_id):
        """The codebook's draft as a spec (owners); 404 when it has none."""
        draft = draft_of(self.codebook())
        if draft is None:
            return Response({"detail": _("No draft: POST here to start one from the newest "
                                         "version.")}, status=status.HTTP_404_NOT_FOUND)
        return Response(draft_payload(draft))

    @extend_schema(request=CodebookSpec, parameters=[IF_MATCH],
                   responses={200: DraftSerializer, 412: PRECONDITION})
    def put(self, request, slug, codebook_id):
        """Replace the draft with a spec: all of it is written, or nothing (400 with
        `{path: [messages]}`). With `If-Match: <revision>`, 412 if it changed meanwhile."""
        draft = draft_of(self.codebook())
        if draft is None:
            return Response({"detail": _("No draft: POST here to start one.")},
                            status=status.HTTP_404_NOT_FOUND)
        base = request.headers.get("If-Match", "").strip().strip('"') or None
        try:
            save_spec(draft, request.user, request.data, base=base)
        except InvalidSpec as invalid:
            raise spec_error(invalid) from None
        except Conflict as conflict:
            return Response({"detail": str(conflict)}, status=status.HTTP_412_PRECONDITION_FAILED)
        return Response(draft_payload(draft))

    @extend_schema(request=None, responses={200: DraftSerializer, 201: DraftSerializer})
    def post(self, request, slug, codebook_id):
        """Start a draft from the newest version (201), or the draft already open (200)."""
        draft, made = start_draft(self.codebook(), request.user)
        return Response(draft_payload(draft),
                        status=status.HTTP_201_CREATED if made else status.HTTP_200_OK)


class Publish(CodebookView):
    @extend_schema(request=PublishRequest, responses={201: PublishedSerializer, 409: CONFLICT})
    def post(self, request, slug, codebook_id):
        """Publish the draft as an immutable version with a note; say what open items do."""
        codebook = self.codebook()
        data = PublishRequest(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            version, counts = publish_draft(
                codebook, request.user, data.validated_data["note"],
                data.validated_data["open_assignments"], number=data.validated_data.get("version"))
        except InvalidSpec as invalid:
            raise spec_error(invalid) from None
        except NothingToPublish as gone:
            return Response({"detail": str(gone)}, status=status.HTTP_409_CONFLICT)
        return Response({"version": version.number, "note": version.note,
                         "published_at": version.published_at, **counts},
                        status=status.HTTP_201_CREATED)


class Version(CodebookView):
    roles = None  # every member reads a codebook's versions, as on the version page

    @extend_schema(responses={200: VersionSerializer})
    def get(self, request, slug, codebook_id, number):
        """One version: its spec, note and what changed from the version before."""
        version = get_object_or_404(self.codebook().versions, number=number)
        return Response(version_payload(version))


urlpatterns = [
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/draft/", Draft.as_view(),
         name="api-codebook-draft"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/publish/", Publish.as_view(),
         name="api-codebook-publish"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/versions/<int:number>/",
         Version.as_view(), name="api-codebook-version"),
]

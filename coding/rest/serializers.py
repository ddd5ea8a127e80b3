from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from coding.access import limits
from coding.models import (
    Assignment, Codebook, CodebookVersion, Coding, Item, Membership, Option, Question, Study,
)


class StudySerializer(serializers.ModelSerializer):
    my_roles = serializers.SerializerMethodField(help_text="Your roles in this study.")

    class Meta:
        model = Study
        fields = ["slug", "name", "description", "overlap", "lease_minutes", "blinded_fields",
                  "blind_authors", "adjudicators_see_blinded", "allow_self_adjudication",
                  "coders_hold_other_roles", "discussion_step", "show_feedback",
                  "feedback_shows_reasons", "coders_see_names", "adjudicators_see_names",
                  "calibration_threshold", "reliability_sample", "created_at", "archived_at", "my_roles"]
        read_only_fields = ["slug", "created_at", "reliability_sample", "archived_at"]
        extra_kwargs = {"archived_at": {"help_text": "When an owner archived the study (closed "
                                                     "to new work); null while it is live."}}

    def get_my_roles(self, study) -> list[str]:
        return sorted(study.roles_of(self.context["request"].user))


class ArchivedSerializer(serializers.Serializer):
    """The study is archived and takes no new work (coding.access.archive); nothing was recorded."""

    detail = serializers.CharField()
    code = serializers.ChoiceField(choices=["archived"])


# For the operations that do new work in a study (reserving, submitting, importing).
ARCHIVED_RESPONSE = OpenApiResponse(ArchivedSerializer, description=(
    "The study is archived: it takes no new work until an owner restores it "
    "(`code: archived`); nothing was recorded."))


class OptionSerializer(serializers.ModelSerializer):
    class Meta:
        model = Option
        fields = ["value", "label", "definition", "examples", "exclusive"]


class QuestionSerializer(serializers.ModelSerializer):
    options = OptionSerializer(many=True, read_only=True)

    class Meta:
        model = Question
        fields = ["key", "text", "definition", "kind", "required", "level", "show_if",
                  "min_value", "max_value", "options"]


class CodebookVersionSerializer(serializers.ModelSerializer):
    questions = QuestionSerializer(many=True, read_only=True)
    translations = serializers.JSONField(read_only=True, help_text=(
        "The questions' and options' texts in other languages: {language: {\"questions\": "
        "{key: {text, definition, unit, options: {value: {label, definition, examples, "
        "counter_examples}}}}}}; {} when there are none. Codings always store the keys "
        "and values, never a translated text (docs/codebook-format.md)."))

    class Meta:
        model = CodebookVersion
        fields = ["number", "status", "note", "created_at", "published_at", "questions",
                  "translations"]


class CodebookSerializer(serializers.ModelSerializer):
    versions = CodebookVersionSerializer(many=True, read_only=True)

    class Meta:
        model = Codebook
        fields = ["id", "name", "applies_to", "description", "versions"]


class MemberSerializer(serializers.ModelSerializer):
    username = serializers.SerializerMethodField(
        help_text="A pseudonym (coder_1 …) when a coder asks and the study hides names.")
    name = serializers.SerializerMethodField(help_text="Empty when names are hidden from you.")

    def get_username(self, membership) -> str:
        name = self.context.get("name")
        return name(membership.user) if name else membership.user.username

    def get_name(self, membership) -> str:
        return "" if self.context.get("name") else membership.user.get_full_name()

    class Meta:
        model = Membership
        fields = ["username", "name", "role", "calibration_waived", "created_at"]


class ItemSerializer(serializers.ModelSerializer):
    kind = serializers.CharField(source="document.kind", read_only=True)
    source = serializers.CharField(source="document.source", read_only=True)
    document_key = serializers.CharField(source="document.key", read_only=True)
    title = serializers.CharField(source="document.title", read_only=True)
    codebook = serializers.IntegerField(source="codebook_id", read_only=True)
    snapshot = serializers.IntegerField(source="snapshot.number", read_only=True)
    # Set on each item of the page by coding.items.browse.row_states.
    state = serializers.ChoiceField(read_only=True, choices=[
        "pool", "held", "coded", "disagreement", "decided", "skipped", "excluded"],
        help_text="The state the item browser shows: the first that holds of excluded, "
                  "disagreement (one open), decided, held, coded, skipped, pool.")
    state_words = serializers.CharField(read_only=True, help_text="The state in words, in "
                                        "the reader's language: 'coded 1 of 2'.")
    submitted = serializers.IntegerField(read_only=True, help_text="Coders who submitted it.")
    held = serializers.IntegerField(read_only=True, help_text="Coders holding it now.")
    skipped = serializers.IntegerField(read_only=True, help_text="Coders who skipped it.")
    open_disagreements = serializers.IntegerField(read_only=True)
    import_run = serializers.IntegerField(source="import_run_id", read_only=True, allow_null=True)

    class Meta:
        model = Item
        fields = ["id", "kind", "source", "document_key", "title", "codebook", "snapshot",
                  "round", "priority", "target", "taken", "in_reliability_sample", "added_at",
                  "import_run", "state", "state_words", "submitted", "held", "skipped",
                  "open_disagreements", "excluded_reason"]


class AssignmentSerializer(serializers.ModelSerializer):
    item = serializers.IntegerField(source="item_id", read_only=True)
    document_key = serializers.CharField(source="item.document.key", read_only=True)
    coder = serializers.CharField(source="coder.username", read_only=True)

    class Meta:
        model = Assignment
        fields = ["id", "item", "document_key", "coder", "status", "leased_until",
                  "created_at", "finished_at"]


class CodingSerializer(serializers.ModelSerializer):
    item = serializers.IntegerField(source="assignment.item_id", read_only=True)
    coder = serializers.CharField(source="assignment.coder.username", read_only=True)
    codebook_version = serializers.IntegerField(source="codebook_version.number", read_only=True)

    class Meta:
        model = Coding
        fields = ["id", "item", "coder", "revision", "phase", "codebook_version", "values",
                  "notes", "evidence", "unsure", "seconds_spent", "submitted_at"]


class WorkSerializer(serializers.Serializer):
    """A coder's answers, as submitted or kept as a draft."""

    values = serializers.DictField(help_text="Question key to answer.")
    notes = serializers.CharField(required=False, allow_blank=True, default="",
                                  max_length=limits.NOTES_MAX_CHARS)
    evidence = serializers.ListField(
        child=serializers.DictField(), required=False, default=list,
        max_length=limits.EVIDENCE_MAX_QUOTES,
        help_text='Quotes: [{"question": key, "field": "abstract" | "title" | "posts.N.body", "quote": text}]',
    )
    unsure = serializers.BooleanField(required=False, default=False)


class NotHeldSerializer(serializers.Serializer):
    """The item is no longer yours to code: nothing was recorded, the answers were kept."""

    detail = serializers.CharField()
    code = serializers.CharField(help_text="not_held")
    work = WorkSerializer(help_text="Your answers as sent, now the assignment's draft.")


class SkipSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500)


class SuggestionSerializer(serializers.Serializer):
    """A model rater's answer shown as a suggestion, in an assisted round only (issue 16)."""

    question = serializers.CharField(help_text="Question key.")
    value = serializers.JSONField(help_text="The model's answer, as imported.")
    shown = serializers.CharField(help_text="The answer as the coding page shows it.")
    rater = serializers.CharField(help_text="The model rater's name.")
    model_version = serializers.CharField()
    config_hash = serializers.CharField(help_text="Hash of the model's prompt or configuration.")


class CoderAssignmentSerializer(serializers.Serializer):
    """An assignment as its coder sees it: the blinded item, their draft, their latest coding."""

    id = serializers.IntegerField()
    status = serializers.CharField()
    leased_until = serializers.DateTimeField(allow_null=True)
    item = serializers.DictField(help_text="id, round, snapshot number and the blinded content.")
    codebook_version = serializers.IntegerField()
    draft = serializers.DictField(allow_null=True)
    latest = serializers.DictField(allow_null=True, help_text="Your latest submitted revision; "
                                   "`assisted` when it was made after a suggestion was shown.")
    suggestions = SuggestionSerializer(many=True, help_text=(
        "Only in a round the owner made assisted, on items outside the reliability sample: "
        "the model's answers, each marked as a suggestion with its provenance. Serving them "
        "is recorded; every coding of this item from then on is assisted and kept out of "
        "reliability. Empty otherwise, whatever the request asks."))


class SampleSerializer(serializers.Serializer):
    share = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1)
    count = serializers.IntegerField(required=False, allow_null=True, min_value=0)
    stratify_by = serializers.CharField(required=False, allow_blank=True, default="")
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=0)


def page_rows(data):
    """The rows of a list response, paged ({results: [...]}) or not ([...])."""
    return data["results"] if isinstance(data, dict) and "results" in data else data

"""Query filters for the API's lists (django-filter): ?name=value, documented in the schema."""

from datetime import UTC

import django_filters as filters
from django import forms
from django.utils.translation import gettext as _
from django_filters.fields import IsoDateTimeField
from drf_spectacular.utils import extend_schema_field

from coding.models import Assignment, Codebook, Coding, Decision, Item, Membership, Study

# Row ids are 64-bit (BigAutoField); a larger number cannot even be sent to the database.
MAX_ID = 2**63 - 1


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_ID})
class IdFilter(filters.NumberFilter):
    """A row id: a whole number from 1 to MAX_ID, else a 400 naming the parameter.

    NumberFilter takes any decimal (1e20, 2.5), which the query then cannot hold.
    """

    field_class = forms.IntegerField

    def __init__(self, *args, **kwargs):
        super().__init__(*args, min_value=1, max_value=MAX_ID, **kwargs)


class UtcDateTimeField(IsoDateTimeField):
    """An ISO 8601 date and time, given to the query in UTC.

    Python takes offsets up to ±23:59, PostgreSQL only to ±15:59; and near year 1 or
    9999 the instant may not exist in UTC at all: a 400 naming the parameter, then.
    """

    def to_python(self, value):
        value = super().to_python(value)
        if value is None:
            return None
        try:
            return value.astimezone(UTC)
        except OverflowError:
            raise forms.ValidationError(_("That moment is outside the years 1 to 9999 in UTC."),
                                        code="invalid") from None


class UtcDateTimeFilter(filters.IsoDateTimeFilter):
    field_class = UtcDateTimeField


class StudyFilter(filters.FilterSet):
    role = filters.CharFilter(method="with_role", help_text="Only studies where you hold this role.")

    class Meta:
        model = Study
        fields = ["role"]

    def with_role(self, queryset, name, value):
        return queryset.filter(memberships__user=self.request.user, memberships__role=value,
                               memberships__deleted_at__isnull=True).distinct()


class MemberFilter(filters.FilterSet):
    username = filters.CharFilter(field_name="user__username")

    class Meta:
        model = Membership
        fields = ["role", "username"]


class CodebookFilter(filters.FilterSet):
    class Meta:
        model = Codebook
        fields = ["applies_to"]


class ItemFilter(filters.FilterSet):
    kind = filters.ChoiceFilter(field_name="document__kind", choices=[("paper", "paper"),
                                                                       ("thread", "thread")])
    source = filters.CharFilter(field_name="document__source", help_text="arxiv, github, …")
    document_key = filters.CharFilter(field_name="document__key")
    codebook = IdFilter(field_name="codebook_id")
    added_after = UtcDateTimeFilter(field_name="added_at", lookup_expr="gte")

    class Meta:
        model = Item
        fields = ["round", "in_reliability_sample", "kind", "source", "document_key", "codebook",
                  "added_after"]


class AssignmentFilter(filters.FilterSet):
    coder = filters.CharFilter(field_name="coder__username", help_text="A coder's username.")
    item = IdFilter(field_name="item_id")

    class Meta:
        model = Assignment
        fields = ["status", "coder", "item"]


class CodingFilter(filters.FilterSet):
    coder = filters.CharFilter(field_name="assignment__coder__username")
    item = IdFilter(field_name="assignment__item_id")
    submitted_after = UtcDateTimeFilter(field_name="submitted_at", lookup_expr="gte")
    submitted_before = UtcDateTimeFilter(field_name="submitted_at", lookup_expr="lt")

    class Meta:
        model = Coding
        fields = ["coder", "item", "phase", "unsure", "submitted_after", "submitted_before"]


class DecisionFilter(filters.FilterSet):
    item = IdFilter(field_name="item_id")
    question = filters.CharFilter(field_name="question_key")
    decided_by = filters.CharFilter(field_name="decided_by__username")

    class Meta:
        model = Decision
        fields = ["item", "question", "method", "decided_by"]

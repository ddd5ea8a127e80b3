"""Query filters for the API's lists (django-filter): ?name=value, documented in the schema."""

import django_filters as filters

from ..models import Assignment, Codebook, Coding, Decision, Item, Membership, Study


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
    codebook = filters.NumberFilter(field_name="codebook_id")
    added_after = filters.IsoDateTimeFilter(field_name="added_at", lookup_expr="gte")

    class Meta:
        model = Item
        fields = ["round", "in_reliability_sample", "kind", "source", "document_key", "codebook",
                  "added_after"]


class AssignmentFilter(filters.FilterSet):
    coder = filters.CharFilter(field_name="coder__username", help_text="A coder's username.")
    item = filters.NumberFilter(field_name="item_id")

    class Meta:
        model = Assignment
        fields = ["status", "coder", "item"]


class CodingFilter(filters.FilterSet):
    coder = filters.CharFilter(field_name="assignment__coder__username")
    item = filters.NumberFilter(field_name="assignment__item_id")
    submitted_after = filters.IsoDateTimeFilter(field_name="submitted_at", lookup_expr="gte")
    submitted_before = filters.IsoDateTimeFilter(field_name="submitted_at", lookup_expr="lt")

    class Meta:
        model = Coding
        fields = ["coder", "item", "phase", "unsure", "submitted_after", "submitted_before"]


class DecisionFilter(filters.FilterSet):
    item = filters.NumberFilter(field_name="item_id")
    question = filters.CharFilter(field_name="question_key")
    decided_by = filters.CharFilter(field_name="decided_by__username")

    class Meta:
        model = Decision
        fields = ["item", "question", "method", "decided_by"]

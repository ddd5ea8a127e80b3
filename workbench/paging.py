"""One way to page every API list: ?limit=&offset=, with count, next and previous."""

from rest_framework.filters import OrderingFilter
from rest_framework.pagination import LimitOffsetPagination


class Paging(LimitOffsetPagination):
    default_limit = 50
    max_limit = 500


class StableOrdering(OrderingFilter):
    """?ordering=field, over the fields a view names in `ordering_fields` only (none if it
    names none), always ending in the primary key: rows that tie would otherwise come
    back in any order, and paging by offset would skip some and repeat others."""

    def get_valid_fields(self, queryset, view, context=None):
        if getattr(view, "ordering_fields", None) is None:
            return []
        return super().get_valid_fields(queryset, view, context or {})

    def get_ordering(self, request, queryset, view):
        ordering = super().get_ordering(request, queryset, view)
        if ordering and not {"pk", "-pk", "id", "-id"} & set(ordering):
            ordering = [*ordering, "pk"]
        return ordering

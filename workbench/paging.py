"""One way to page every API list: ?limit=&offset=, with count, next and previous.

Counting a long list to its end costs more than the page itself: at 100,000 items the
COUNT(*) of a study's codings took most of the request (issue 13). So the count stops
at `count_limit` rows. A list at most that long is counted exactly, and so is any list
whose end the page reaches; past it, `count` is a lower bound and `count_exact` says
so. `next` is always exact: the page is read with one row more than it shows.
"""

from rest_framework.filters import OrderingFilter
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response


class Paging(LimitOffsetPagination):
    default_limit = 50
    max_limit = 500
    # Counting stops after this many rows (a bounded scan); beyond it the count is a
    # lower bound. Lists of up to this many rows are always counted exactly.
    count_limit = 10_000

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit = self.get_limit(request)
        if self.limit is None:
            return None
        self.offset = self.get_offset(request)
        if isinstance(queryset, list):  # computed in Python: its length costs nothing
            self.count, self.count_exact = len(queryset), True
            page = queryset[self.offset:self.offset + self.limit]
        else:
            page = self._page_and_count(queryset)
        if self.count > self.limit and self.template is not None:
            self.display_page_controls = True
        return page

    def _page_and_count(self, queryset):
        """Two queries whatever the list's length (one for an empty list): a count that
        stops after count_limit + 1 rows, and the page with one row more (is there a next
        page?)."""
        counted = self._count_up_to(queryset, self.count_limit + 1)
        rows = list(queryset[self.offset:self.offset + self.limit + 1]) if counted else []
        if counted <= self.count_limit:
            self.count, self.count_exact = counted, True
        elif rows and len(rows) <= self.limit:
            # The list ends within this page, deep in a long list: its length is known.
            self.count, self.count_exact = self.offset + len(rows), True
        else:
            # Rows found at the offset prove the list is at least that long (none prove
            # nothing: the offset is past the end).
            seen = self.offset + len(rows) if rows else 0
            self.count, self.count_exact = max(counted, seen), False
        return rows[:self.limit]

    @staticmethod
    def _count_up_to(queryset, bound):
        """COUNT(*) over at most `bound` rows: SELECT COUNT(*) FROM (… LIMIT bound)."""
        if not queryset.query.distinct_fields:
            queryset = queryset.order_by()
        return queryset[:bound].count()

    def get_paginated_response(self, data):
        return Response({
            "count": self.count,
            "count_exact": self.count_exact,
            "next": self.get_next_link(),
            "previous": self.get_previous_link(),
            "results": data,
        })

    def get_paginated_response_schema(self, schema):
        response = super().get_paginated_response_schema(schema)
        properties = response["properties"]
        properties["count"]["description"] = (
            "How many results the list holds; a lower bound when `count_exact` is false.")
        properties["count_exact"] = {
            "type": "boolean",
            "description": f"False when the list is longer than {self.count_limit:,} rows and "
                           "this page is not its end: counting stopped there, and `count` is "
                           "how many rows are known to exist. Follow `next` to the end.",
        }
        response["properties"] = {key: properties[key] for key in
                                  ("count", "count_exact", "next", "previous", "results")}
        response["required"] = ["count", "count_exact", "results"]
        return response


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

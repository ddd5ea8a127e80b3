"""One way to page every API list: ?limit=&offset=, with count, next and previous; and,
for long lists that name their keyset order, ?after=<token> (keyset paging).

Counting a long list to its end costs more than the page itself: at 100,000 items the
COUNT(*) of a study's codings took most of the request (issue 13). So the count stops
at `count_limit` rows. A list at most that long is counted exactly, and so is any list
whose end the page reaches; past it, `count` is a lower bound and `count_exact` says
so. `next` is always exact: the page is read with one row more than it shows.

Skipping rows costs what was skipped: the last page of a study's 177,000 codings took
1.2 s by offset. A view that sets `keyset_fields` (fields it may be ordered by, all
non-null; the primary key always ends the order) is paged by keyset when the request
gives no ?offset=: its `next` link carries the last row's place in the order (`after`),
and every page costs what the first does, given an index in that order. ?offset= still
works there, as before. The page tokens are the ones the review list uses
(`make_token`, `after_token`); `bounded_count` is the count every list shows.
"""

import base64
import json

from django.db.models import Q
from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

# Counting stops after this many rows (a bounded scan); beyond it a count is a lower bound.
COUNT_LIMIT = 10_000


def bounded_count(queryset, bound=None):
    """(count, exact): COUNT(*) over at most bound + 1 rows (SELECT COUNT(*) FROM (…
    LIMIT bound + 1)); past `bound` (COUNT_LIMIT unless given) the count is `bound` + 1
    and not exact."""
    bound = COUNT_LIMIT if bound is None else bound
    if not queryset.query.distinct_fields:
        queryset = queryset.order_by()
    counted = queryset[:bound + 1].count()
    return counted, counted <= bound


def _token_value(row, field):
    name = field.lstrip("-")
    value = getattr(row, "pk" if name == "pk" else name)
    return value.isoformat() if hasattr(value, "isoformat") else value


def make_token(fields, row):
    """The page token after this row: its values of the order's fields, as URL-safe text."""
    raw = json.dumps([_token_value(row, f) for f in fields], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def after_token(fields, token, model):
    """Q for the rows of `model` after the token's row in the order of `fields` (keyset
    paging); ValueError for a token that is not one. Values are whole numbers, or ISO
    datetimes for the model's datetime fields."""
    try:
        values = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError("not a page token") from error
    if not isinstance(values, list) or len(values) != len(fields):
        raise ValueError("not a page token")
    parsed = []
    for field, value in zip(fields, values):
        name = field.lstrip("-")
        target = model._meta.pk if name == "pk" else model._meta.get_field(name)
        if target.get_internal_type() == "DateTimeField":
            value = parse_datetime(value) if isinstance(value, str) else None
            if value is None or value.tzinfo is None:
                raise ValueError("not a page token")
        elif isinstance(value, bool) or not isinstance(value, int) or \
                not -2**63 <= value < 2**63:  # what a database integer holds
            raise ValueError("not a page token")
        parsed.append((name, field.startswith("-"), value))
    after = None
    for n, (name, descending, value) in enumerate(parsed):
        step = Q(**{f"{name}__{'lt' if descending else 'gt'}": value})
        for earlier, _, earlier_value in parsed[:n]:
            step &= Q(**{earlier: earlier_value})
        after = step if after is None else after | step
    return after if after is not None else Q(pk__in=[])


class Paging(LimitOffsetPagination):
    default_limit = 50
    max_limit = 500
    # Lists of up to this many rows are always counted exactly.
    count_limit = COUNT_LIMIT
    after_query_param = "after"

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit = self.get_limit(request)
        if self.limit is None:
            return None
        self.keyset = None
        fields = self._keyset_order(queryset, request, view)
        if fields:
            return self._keyset_page(queryset, fields)
        self.offset = self.get_offset(request)
        if isinstance(queryset, list):  # computed in Python: its length costs nothing
            self.count, self.count_exact = len(queryset), True
            page = queryset[self.offset:self.offset + self.limit]
        else:
            page = self._page_and_count(queryset)
        if self.count > self.limit and self.template is not None:
            self.display_page_controls = True
        return page

    def _keyset_order(self, queryset, request, view):
        """The list's order as keyset fields, when the view pages by keyset and this
        request asks for no offset; None otherwise (offset paging)."""
        allowed = getattr(view, "keyset_fields", None)
        if not allowed or isinstance(queryset, list) or \
                self.offset_query_param in request.query_params:
            return None
        order = tuple(queryset.query.order_by)
        names = [f.lstrip("-") for f in order]
        if not order or names[-1] not in ("pk", "id") or \
                any(n not in allowed and n not in ("pk", "id") for n in names):
            return None
        return order

    def _keyset_page(self, queryset, fields):
        """Two queries whatever the page's depth: the bounded count of the whole list,
        and the rows after the token with one more (is there a next page?)."""
        after = self.request.query_params.get(self.after_query_param) or None
        rows = queryset
        if after:
            try:
                rows = rows.filter(after_token(fields, after, queryset.model))
            except ValueError:
                raise ValidationError(
                    {self.after_query_param: "not a page token of this list"}) from None
        self.count, self.count_exact = bounded_count(queryset, self.count_limit)
        page = list(rows[:self.limit + 1])
        self.keyset = make_token(fields, page[self.limit - 1]) if len(page) > self.limit else ""
        self.offset = 0
        return page[:self.limit]

    def get_next_link(self):
        if getattr(self, "keyset", None) is None:
            return super().get_next_link()
        if not self.keyset:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), self.offset_query_param)
        url = replace_query_param(url, self.limit_query_param, self.limit)
        return replace_query_param(url, self.after_query_param, self.keyset)

    def get_previous_link(self):
        if getattr(self, "keyset", None) is not None:
            return None  # keyset pages go forward; the first page is the list's own URL
        return super().get_previous_link()

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        if getattr(view, "keyset_fields", None):
            for parameter in parameters:
                if parameter["name"] == self.offset_query_param:
                    parameter["description"] = (
                        "Rows to skip. Without it the list is paged by keyset: follow "
                        "`next`, which costs the same at any depth; with it, rows before the "
                        "offset are read and skipped (slow deep in a long list).")
            parameters.append({
                "name": self.after_query_param, "required": False, "in": "query",
                "schema": {"type": "string"},
                "description": "The page token in the previous page's `next` link (keyset "
                               "paging; not with `offset`)."})
        return parameters

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
        return bounded_count(queryset, bound - 1)[0]

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

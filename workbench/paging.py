"""One way to page every API list: ?limit=&offset=, with count, next and previous."""

from rest_framework.pagination import LimitOffsetPagination


class Paging(LimitOffsetPagination):
    default_limit = 50
    max_limit = 500


def paged_response(view, rows, serialize):
    """Page a computed list (not a queryset) in an APIView the way generic lists are paged;
    only the rows on the page are serialized."""
    paginator = Paging()
    page = paginator.paginate_queryset(rows, view.request, view=view)
    return paginator.get_paginated_response([serialize(row) for row in page])

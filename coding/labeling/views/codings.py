"""The list of submitted codings: a coder's own, or everyone's for owners and adjudicators
(Coding.objects.visible_to)."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from coding.access.roles import CAN_SEE_ALL_CODINGS, access_study
from coding.labeling.codings import record_reads
from coding.models import Coding, OthersWorkRead, Role
from workbench.paging import after_token, bounded_count, make_token

CODINGS_PER_PAGE = 50
CODINGS_ORDER = ("-id",)  # newest first: ids are given in the order codings are submitted


@login_required
@require_safe
def coding_list(request, slug):
    """Submitted codings, newest first: a coder's own, or everyone's for owners and
    adjudicators. Paged by keyset (?after=, as the review list), so a deep page costs what
    the first does; the count stops at 10,000 (workbench.paging.bounded_count)."""
    study = access_study(request.user, slug, roles={Role.CODER, *CAN_SEE_ALL_CODINGS})
    codings = Coding.objects.visible_to(request.user, study)
    count, count_exact = bounded_count(codings)
    rows = (codings.select_related("assignment__item__document", "assignment__coder",
                                   "codebook_version__codebook")
            .order_by(*CODINGS_ORDER))
    after = request.GET.get("after") or None
    if after:
        try:
            rows = rows.filter(after_token(CODINGS_ORDER, after, Coding))
        except ValueError:
            after = None  # not a token of this list (edited by hand): the first page
    page = list(rows[:CODINGS_PER_PAGE + 1])
    more = len(page) > CODINGS_PER_PAGE
    record_reads(study, request.user, OthersWorkRead.Kind.CODINGS,
                 [c.assignment.item_id for c in page[:CODINGS_PER_PAGE]
                  if c.assignment.coder_id != request.user.pk])
    return render(request, "coding/coding_list.html", {
        "study": study, "codings": page[:CODINGS_PER_PAGE], "first_page": not after,
        "count": count, "count_exact": count_exact,
        # Counting stopped after the limit: "More than 10,000".
        "count_shown": f"{count if count_exact else count - 1:,}",
        "next_token": make_token(CODINGS_ORDER, page[CODINGS_PER_PAGE - 1]) if more else "",
        "sees_all": bool(study.my_roles & CAN_SEE_ALL_CODINGS),
    })

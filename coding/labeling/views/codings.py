"""The list of submitted codings: a coder's own, or everyone's for owners and adjudicators
(Coding.objects.visible_to)."""

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import QueryDict
from django.shortcuts import render
from django.views.decorators.http import require_safe

from coding.access.names import name_for
from coding.access.roles import CAN_SEE_ALL_CODINGS, access_study
from coding.items import browse
from coding.items.history import answers
from coding.labeling.codings import record_reads
from coding.models import CodebookVersion, Coding, OthersWorkRead, Role
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
    sees_all = bool(study.my_roles & CAN_SEE_ALL_CODINGS)
    shown_name = name_for(study, study.my_roles)
    codings = Coding.objects.visible_to(request.user, study)
    # Filters: text in the item's key or title; for owners and adjudicators, one coder.
    q = (request.GET.get("q") or "").replace("\x00", "").strip()[:200]
    coder = request.GET.get("coder") or ""
    coder = int(coder) if sees_all and coder.isdigit() and len(coder) < 19 else None
    if q:
        codings = codings.filter(Q(assignment__item__document__key__icontains=q)
                                 | Q(assignment__item__document__title__icontains=q))
    if coder is not None:
        codings = codings.filter(assignment__coder_id=coder)
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
    with_answers(page[:CODINGS_PER_PAGE])
    query = QueryDict(mutable=True)
    query.update({k: v for k, v in (("q", q), ("coder", coder)) if v not in ("", None)})
    record_reads(study, request.user, OthersWorkRead.Kind.CODINGS,
                 [c.assignment.item_id for c in page[:CODINGS_PER_PAGE]
                  if c.assignment.coder_id != request.user.pk])
    return render(request, "coding/coding_list.html", {
        "study": study, "codings": page[:CODINGS_PER_PAGE], "first_page": not after,
        "count": count, "count_exact": count_exact,
        # Counting stopped after the limit: "More than 10,000".
        "count_shown": f"{count if count_exact else count - 1:,}",
        "next_token": make_token(CODINGS_ORDER, page[CODINGS_PER_PAGE - 1]) if more else "",
        "sees_all": sees_all, "q": q, "coder": coder, "query": query.urlencode(),
        "coders": browse.filter_choices(study, shown_name)[0] if sees_all else [],
        "shown_name": shown_name,
    })


def with_answers(codings):
    """Set each coding's `answers` ([(question, answer)], labelled on the page): the
    questions of the versions on the page in one query with their options."""
    versions = {c.codebook_version_id for c in codings}
    questions = {v.pk: list(v.questions.all()) for v in CodebookVersion.objects.filter(
        pk__in=versions).prefetch_related("questions__options")}
    for coding in codings:
        coding.answers = answers(coding, questions.get(coding.codebook_version_id, []))

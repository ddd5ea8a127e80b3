"""The item browser's pages: the list with its filters and the owner's bulk actions, and
one item's page with its whole history.

Owners and adjudicators read them (a coder or viewer 403, a non-member 404); only owners
act on items. A person who also codes in the study has read others' work on the items
shown (coding.labeling.codings.record_reads), as on every page that shows it.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from coding.access.names import name_for
from coding.access.roles import CAN_SEE_ALL_CODINGS, access_study
from coding.items import browse, curate
from coding.items.history import history
from coding.labeling.codings import record_reads
from coding.models import Item, OthersWorkRead, Role


def _after(raw):
    return int(raw) if raw and raw.isdigit() and len(raw) < 19 else None


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def item_list(request, slug):
    study = access_study(request.user, slug, roles=CAN_SEE_ALL_CODINGS)
    is_owner = Role.OWNER in study.my_roles
    action_errors, status = {}, 200
    if request.method == "POST":
        if not is_owner:
            raise PermissionDenied(_("Only the study's owners act on items."))
        try:
            done = curate.apply(study, request.user, request.POST.get("action", ""),
                                request.POST.getlist("items"), request.POST.get("reason", ""))
        except ValidationError as problem:
            action_errors, status = problem.message_dict, 400
        else:
            messages.success(request, _("%(action)s: %(count)s items.") % {
                "action": curate.ACTIONS[done["action"]], "count": len(done["changed"])})
            return redirect(f"{request.path}?{request.POST.get('query', '')}")
    filter_error = None
    try:
        filters = browse.parse_filters(request.GET)
    except browse.FilterError as problem:
        filter_error, filters = f"{problem.field}: {problem}", browse.Filters()
    after = _after(request.GET.get("after"))
    rows, next_after = browse.page_of(study, filters, after)
    record_reads(study, request.user, OthersWorkRead.Kind.ITEMS, [i.pk for i in rows])
    coders, runs = browse.filter_choices(study, name_for(study, study.my_roles))
    query = QueryDict(mutable=True)
    query.update(filters.as_params())
    return render(request, "coding/item_list.html", {
        "study": study, "rows": rows, "filters": filters, "filter_error": filter_error,
        "states": browse.STATES, "rounds": browse.ROUNDS, "kinds": browse.KINDS,
        "samples": browse.SAMPLE, "coders": coders, "runs": runs, "is_owner": is_owner,
        "actions": curate.ACTIONS, "action_errors": action_errors,
        "chosen": {int(i) for i in request.POST.getlist("items") if i.isdigit()},
        "query": query.urlencode(), "first_page": after is None, "next_after": next_after,
        "max_items": curate.MAX_ITEMS,
    }, status=status)


@login_required
@require_safe
def item_page(request, slug, item_id):
    study = access_study(request.user, slug, roles=CAN_SEE_ALL_CODINGS)
    item = get_object_or_404(Item.objects.select_related("document", "codebook", "import_run"),
                             study=study, pk=item_id)
    record_reads(study, request.user, OthersWorkRead.Kind.ITEMS, [item.pk])
    return render(request, "coding/item_page.html", {
        "study": study, **history(study, item, request.user, study.my_roles),
        "is_owner": Role.OWNER in study.my_roles, "actions": curate.ACTIONS,
        "list_url": redirect("items", study.slug).url,
    })

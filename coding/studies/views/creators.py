"""The study creators page: staff let colleagues create studies without a command."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from coding.studies import creators


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def creators_page(request):
    if not request.user.is_staff:
        raise PermissionDenied(_("Only the workbench's administrators (staff) decide who may "
                                 "create studies."))
    if request.method == "POST":
        user = get_object_or_404(get_user_model(), pk=request.POST.get("user") or 0,
                                 is_active=True)
        revoke = request.POST.get("grant") != "yes"
        creators.grant(user, request.user, revoke=revoke)
        messages.success(request, (_("%(name)s may no longer create studies.") if revoke else
                                   _("%(name)s may now create studies.")) % {
            "name": user.username})
        return redirect(request.get_full_path())
    search, after = request.GET.get("q", "").strip()[:100], request.GET.get("after", "")[:150]
    rows, next_after = creators.accounts(after, search)
    return render(request, "coding/creators.html", {
        "rows": rows, "search": search, "next_after": next_after, "after": after})

"""A person's own account page, and the password reset page that says what to do when no
mail server is set up (the rest of the password views are Django's own, workbench/urls.py).
"""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods

from coding.accounts.profile import ProfileForm, mail_configured

FIELD_WORDS = {"display_name": gettext_lazy("display name"), "email": gettext_lazy("e-mail"),
               "language": gettext_lazy("language")}


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def account_page(request):
    form = ProfileForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        changed = form.save()
        if changed:
            messages.success(request, _("Saved: %(fields)s.") % {
                "fields": ", ".join(str(FIELD_WORDS[f]) for f in changed)})
        return redirect("account")
    return render(request, "coding/account.html", {
        "form": form, "mail_configured": mail_configured(),
        "may_create_studies": request.user.has_perm("coding.create_study")
        or request.user.is_staff,
    }, status=400 if form.errors else 200)


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset by mail; without a mail server the page says whom to ask instead of
    pretending to send."""

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "mail_configured": mail_configured()}

    def post(self, request, *args, **kwargs):
        if not mail_configured():
            return self.get(request, *args, **kwargs)
        return super().post(request, *args, **kwargs)

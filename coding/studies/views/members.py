"""Members and roles, and one-time invitation links: pages.

The members page is the owners': who holds which role, add, change or remove one, make
an invite (its link shown once, in the answer to the POST that made it), revoke pending
invites, and the history of these changes. The invite page is anyone's who holds a link.
"""

from axes.handlers.proxy import AxesProxyHandler
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from coding.access import audit
from coding.access.roles import access_study
from coding.accounts.profile import mail_configured
from coding.models import Role
from coding.studies import members as service

HISTORY = 50  # latest membership and invite changes shown on the page
# A freshly made account is logged in directly, through the accounts' backend (the last
# of settings.AUTHENTICATION_BACKENDS; Axes' comes first and checks passwords, not this).
BACKEND = settings.AUTHENTICATION_BACKENDS[-1]


def log_in(request, user):
    """Log a new account in from its invite page. django-axes writes the request's path to
    its access log (a table), and this path holds the invite's token: it gets the path
    without it."""
    AxesProxyHandler.update_request(request)
    request.axes_path_info = "/invite/<token>/"
    login(request, user, backend=BACKEND)


class AddMemberForm(forms.Form):
    person = forms.CharField(label=gettext_lazy("Username or e-mail"), max_length=254)
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=service.role_choices,
                             initial=Role.CODER)


class InviteForm(forms.Form):
    role = forms.ChoiceField(label=gettext_lazy("Role"), choices=service.role_choices,
                             initial=Role.CODER)
    note = forms.CharField(label=gettext_lazy("Who it is for (optional)"), max_length=200,
                           required=False, help_text=gettext_lazy(
                               "A name for your list of invites; the invitee never sees it."))
    email = forms.EmailField(label=gettext_lazy("E-mail (optional)"), required=False)
    days = forms.IntegerField(label=gettext_lazy("Expires after (days)"), min_value=1,
                              max_value=service.MAX_INVITE_DAYS, initial=service.INVITE_DAYS)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=service.role_choices)


def add_errors(form, error, fields=None):
    """A service's located ValidationError onto the form: its keys mapped to form fields
    (`fields`), or to the whole form when no field matches."""
    for key, messages_ in error.message_dict.items():
        field = (fields or {}).get(key, key)
        form.add_error(field if field in form.fields else None, messages_)


def page(request, study, *, add_form=None, invite_form=None, new_link=None, mailed=False,
         reset_link=None, reset_for=None, status=200):
    history = (audit.entries_for(study).filter(action__regex=r"^(member|invite)\.")
               [:HISTORY])
    people = list(service.live_members(study))
    owners = [m.pk for m in people if m.role == Role.OWNER]
    response = render(request, "coding/members.html", {
        "study": study, "members": people,
        "sole_owner": owners[0] if len(owners) == 1 else None,
        "add_form": add_form or AddMemberForm(),
        "invite_form": invite_form or InviteForm(),
        "role_choices": service.role_choices(),
        "invites": service.pending_invites(study).order_by("expires_at", "pk"),
        "history": history, "history_limit": HISTORY,
        "new_link": new_link, "mailed": mailed, "mail_configured": mail_configured(),
        "reset_link": reset_link, "reset_for": reset_for,
    }, status=status)
    if new_link or reset_link:
        response["Cache-Control"] = "no-store"  # the link is shown once: keep no copy
    return response


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def members_page(request, slug):
    """The list; POST adds an existing account with a role."""
    study = access_study(request.user, slug, roles={Role.OWNER})
    form = AddMemberForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        person, role = form.cleaned_data["person"], form.cleaned_data["role"]
        try:
            user = service.find_user(**({"email": person} if "@" in person
                                        else {"username": person}))
            service.add_member(study, user, role, request.user)
        except ValidationError as error:
            add_errors(form, error, {"username": "person", "email": "person"})
        else:
            messages.success(request, _("%(name)s is now %(role)s in this study.") % {
                "name": user.username, "role": service.role_words(role)})
            return redirect("members", slug=study.slug)
    return page(request, study, add_form=form, status=400 if form.errors else 200)


def owned_membership(request, slug, member_id):
    study = access_study(request.user, slug, roles={Role.OWNER})
    return get_object_or_404(study.memberships.select_related("user", "study"), pk=member_id,
                             deleted_at__isnull=True)


@login_required
@require_POST
def member_role(request, slug, member_id):
    membership = owned_membership(request, slug, member_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose a role."))
        return redirect("members", slug=slug)
    try:
        new = service.change_role(membership, form.cleaned_data["role"], request.user)
    except (ValidationError, service.Refused) as error:
        messages.error(request, " ".join(getattr(error, "messages", [str(error)])))
        return redirect("members", slug=slug)
    messages.success(request, _("%(name)s is now %(role)s instead of %(before)s.") % {
        "name": membership.user.username, "role": service.role_words(new.role),
        "before": service.role_words(membership.role)})
    return back(request, membership)


def back(request, membership):
    """To the members page; an owner who gave up their own ownership, to the study (or home
    when they hold no role there any more)."""
    if membership.user_id == request.user.pk and membership.role == Role.OWNER:
        if membership.study.roles_of(request.user):
            return redirect("study-detail", slug=membership.study.slug)
        return redirect("home")
    return redirect("members", slug=membership.study.slug)


@login_required
@require_POST
def member_remove(request, slug, member_id):
    membership = owned_membership(request, slug, member_id)
    try:
        service.remove_member(membership, request.user)
    except service.Refused as refused:
        messages.error(request, str(refused))
        return redirect("members", slug=slug)
    messages.success(request, _("%(name)s is no longer %(role)s in this study.") % {
        "name": membership.user.username, "role": service.role_words(membership.role)})
    return back(request, membership)


@login_required
@require_POST
def member_reset_link(request, slug, member_id):
    """A one-time password reset link for the member, shown in this answer only."""
    membership = owned_membership(request, slug, member_id)
    try:
        link = service.make_reset_link(membership, request.user, request)
    except service.Refused as refused:
        messages.error(request, str(refused))
        return redirect("members", slug=slug)
    return page(request, membership.study, reset_link=link, reset_for=membership.user,
                status=201)


@login_required
@require_POST
def invite_create(request, slug):
    """Makes an invite and answers with the page showing its link, this once."""
    study = access_study(request.user, slug, roles={Role.OWNER})
    form = InviteForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            invite, token = service.create_invite(study, data["role"], request.user,
                                                  note=data["note"], email=data["email"],
                                                  days=data["days"])
        except ValidationError as error:
            add_errors(form, error)
        else:
            link = service.invite_link(token, request)
            mailed = service.send_invite(invite, link)
            return page(request, study, new_link=link, mailed=mailed, status=201)
    return page(request, study, invite_form=form, status=400)


@login_required
@require_POST
def invite_revoke(request, slug, invite_id):
    study = access_study(request.user, slug, roles={Role.OWNER})
    invite = get_object_or_404(study.invites, pk=invite_id)
    try:
        service.revoke_invite(invite, request.user)
    except service.Refused as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, _("Invite revoked: its link no longer works."))
    return redirect("members", slug=slug)


# Where the invite page keeps the token once the link was opened.
INVITE_SESSION_KEY = "invite_token"


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def invite_page(request, invite_token=None):
    """Anyone holding the link: a new account (or, signed in, their own) joins the study.
    Opening the link moves its token into the session and redirects to /invite/, so the
    token leaves the address bar, the history and any Referer at once (and the server's
    own request log redacts the first line: workbench.logfilters). A refused token
    posted counts against the address, as the API's does."""
    if invite_token is not None and request.method in ("GET", "HEAD"):
        request.session[INVITE_SESSION_KEY] = invite_token
        return redirect("invite-pending")
    if invite_token is None:
        invite_token = request.session.get(INVITE_SESSION_KEY)
        if not invite_token:
            return render(request, "coding/invite_accept.html", {"unknown": True}, status=404)
    posted = request.method == "POST"
    if posted and service.INVITE_REFUSALS.blocked(request):
        return render(request, "coding/invite_accept.html", {"unknown": True}, status=429)
    try:
        invite = service.find_invite(invite_token)
        service.check_usable(invite)
    except Http404:
        if posted:
            service.INVITE_REFUSALS.note(request)
        return render(request, "coding/invite_accept.html", {"unknown": True}, status=404)
    except service.InviteGone as gone:
        if posted:
            service.INVITE_REFUSALS.note(request)
        return render(request, "coding/invite_accept.html",
                      {"invite": invite, "gone": str(gone)}, status=410)
    signed_in = request.user.is_authenticated
    form = None if signed_in else service.AccountForm(request.POST or None)
    error = None
    if request.method == "POST" and (signed_in or form.is_valid()):
        try:
            membership = service.accept_invite(invite_token, user=request.user if signed_in
                                               else None, account=form,
                                               confirm_mixed=bool(request.POST.get("confirm_mixed")))
        except service.InviteGone as gone:
            return render(request, "coding/invite_accept.html",
                          {"invite": invite, "gone": str(gone)}, status=410)
        except ValidationError as refused:
            if form is None:
                error = " ".join(refused.messages)
            else:
                add_errors(form, refused)
        else:
            request.session.pop(INVITE_SESSION_KEY, None)
            if not signed_in:
                log_in(request, membership.user)
            messages.success(request, _("Welcome to %(study)s: you are %(role)s here.") % {
                "study": invite.study.name, "role": service.role_words(membership.role)})
            return redirect("study-detail", slug=invite.study.slug)
    failed = request.method == "POST"
    # A coder joining as adjudicator or viewer is told first what that means, and why.
    mixed = signed_in and service.mixes_roles(invite.study, request.user, invite.role)
    return render(request, "coding/invite_accept.html", {
        "invite": invite, "form": form, "error": error, "mixed": mixed,
        "mixed_words": (service.mixed_roles_question() if invite.study.coders_hold_other_roles
                        else service.mixed_roles_words(request.user)) if mixed else "",
        "mixed_allowed": invite.study.coders_hold_other_roles,
    }, status=400 if failed else 200)


urlpatterns = [
    path("studies/<slug:slug>/members/", members_page, name="members"),
    path("studies/<slug:slug>/members/<int:member_id>/role/", member_role, name="member-role"),
    path("studies/<slug:slug>/members/<int:member_id>/remove/", member_remove,
         name="member-remove"),
    path("studies/<slug:slug>/members/<int:member_id>/reset-link/", member_reset_link,
         name="member-reset-link"),
    path("studies/<slug:slug>/invites/", invite_create, name="invite-create"),
    path("studies/<slug:slug>/invites/<int:invite_id>/revoke/", invite_revoke,
         name="invite-revoke"),
    path("invite/", invite_page, name="invite-pending"),
    path("invite/<str:invite_token>/", invite_page, name="invite"),
]

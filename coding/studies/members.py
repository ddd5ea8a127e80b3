"""Members and their roles, and one-time invitation links. Only owners change them.

A role is a `Membership` row (one per role); removing it sets `deleted_at`, and adding
the role again revives the row. Every change is written to the audit trail in its own
transaction. A study always keeps an owner: the live owner rows are locked, in id order,
before one of them is removed or demoted, so two owners removing each other at once
leave one. Removing a coder's role releases the item they hold.

An invite's token is shown once (and mailed when a mail server is configured); only its
SHA-256 is kept, and a link is found by hashing what was sent. Using it takes the
invite's row lock and marks it used by a conditional update, so two parallel uses
cannot both succeed.
"""

import hashlib
import logging
import secrets
import smtplib
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.http import Http404
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _

from coding.access import audit
from coding.access.archive import check_open
from coding.access.roles import role_label, role_words  # noqa: F401 (members' words)
from coding.accounts.languages import stored_language
from coding.accounts.profile import mail_configured
from coding.labeling.queue import release
from coding.models import Assignment, Invite, Membership, Role
from workbench.auth import Refusals

log = logging.getLogger(__name__)

INVITE_DAYS, MAX_INVITE_DAYS = 7, 30
PENDING, USED, REVOKED, EXPIRED = "pending", "used", "revoked", "expired"


class Refused(Exception):
    """A change the study's state does not allow (its last owner, a used invite)."""


class InviteGone(Exception):
    """The invite exists but can no longer be used: used, revoked, expired, or its study
    archived. The message says which, in words for the person holding the link."""


# --- members ------------------------------------------------------------------------------

def find_user(*, username="", email=""):
    """The account named by its username or its e-mail address; a located error otherwise."""
    users = get_user_model().objects
    if email:
        found = list(users.filter(email__iexact=email.strip())[:2])
        if len(found) > 1:
            raise ValidationError({"email": _("Several accounts use this address: give the "
                                               "username instead.")})
        field = "email"
    else:
        name = username.strip()
        found = list(users.filter(username=name)[:1]) or list(users.filter(username__iexact=name)[:2])
        field = "username"
    if len(found) != 1:
        raise ValidationError({field: _("No account by that name. To add someone without an "
                                        "account, invite them with a link.")})
    if not found[0].is_active:
        raise ValidationError({field: _("This account is disabled.")})
    return found[0]


def live_members(study):
    return (study.memberships.filter(deleted_at__isnull=True).select_related("user")
            .order_by("user__username", "role"))


def role_choices():
    """Role choices for a form, labelled in the reader's language."""
    return [(role, role_label(role)) for role in Role.values]


def check_role(role, field="role"):
    if role not in Role.values:
        raise ValidationError({field: _("Not a role: choose one of %(roles)s.")
                               % {"roles": ", ".join(Role.values)}})


def add_member(study, user, role, actor):
    """Give the user a role in the study (reviving a removed one); a located error if they
    hold it already."""
    check_role(role)
    with transaction.atomic():
        membership, revived = _grant(study, user, role)
        audit.record(actor, study, "member.add",
                     audit.target_of("member", role=role, name=user.username), role=role,
                     user=user.username, revived=revived)
    return membership


# Roles that see the other coders' work item by item.
SEES_OTHERS = {Role.ADJUDICATOR, Role.VIEWER}


def mixes_roles(study, user, role, leaving=None):
    """Whether giving `role` makes the person both a coder and someone who sees the other
    coders' work item by item (an adjudicator or viewer)."""
    held = set(Membership.objects.filter(study=study, user=user, deleted_at__isnull=True)
               .exclude(role=leaving).values_list("role", flat=True))
    return bool((role == Role.CODER and held & SEES_OTHERS)
                or (role in SEES_OTHERS and Role.CODER in held))


def check_combination(study, user, role, leaving=None):
    """Refuse to make a coder also an adjudicator or viewer, or the reverse, unless the
    study allows it (coders_hold_other_roles): such a person could read the others'
    codings and decisions, then code the item as if independently (issue 36). `leaving`:
    a role the person gives up in the same change."""
    if not study.coders_hold_other_roles and mixes_roles(study, user, role, leaving):
        raise ValidationError({"role": mixed_roles_words(user)})


def mixed_roles_words(user):
    return _("%(name)s would be both a coder and an adjudicator or viewer in this study, and "
             "could read the other coders' work before coding an item. An owner can allow "
             "coders to hold other roles in the study's settings; revisions made after such a "
             "read are then recorded as informed.") % {"name": user.username}


def mixed_roles_question():
    return _("You code in this study. With this role you can read the other coders' work and "
             "decisions; any revision you make after such a read is recorded as informed, "
             "never as independent coding. Confirm to join with both roles.")


def _grant(study, user, role, leaving=None):
    check_open(study)
    check_combination(study, user, role, leaving)
    row = Membership.objects.select_for_update().filter(study=study, user=user, role=role).first()
    if row is not None and row.deleted_at is None:
        raise ValidationError({"role": already_member(user, role)})
    if row is not None:
        row.deleted_at = None
        row.save(update_fields=["deleted_at"])
        return row, True
    try:
        with transaction.atomic():  # a parallel add of the same role breaks the unique index
            return Membership.objects.create(study=study, user=user, role=role), False
    except IntegrityError:
        raise ValidationError({"role": already_member(user, role)}) from None


def already_member(user, role):
    return _("%(name)s already is %(role)s in this study.") % {
        "name": user.username, "role": role_words(role)}


def change_role(membership, role, actor):
    """Move the person from the membership's role to `role`; returns the row of the new
    role (its own row, so its id may differ). The last owner cannot be demoted."""
    check_role(role)
    if role == membership.role:
        return membership
    study = membership.study
    with transaction.atomic():
        row = _lock_for_ending(membership)
        user = row.user
        new, revived = _grant(study, user, role, leaving=row.role)
        released = _end(row)
        audit.record(actor, study, "member.role", audit.target_of("account", name=user.username),
                     user=user.username,
                     **{"from": row.role, "to": role}, released=released)
    return new


def remove_member(membership, actor):
    """Remove one role (soft). The study's last owner cannot be removed."""
    check_open(membership.study)
    study = membership.study
    with transaction.atomic():
        row = _lock_for_ending(membership)
        released = _end(row)
        audit.record(actor, study, "member.remove",
                     audit.target_of("member", role=row.role, name=row.user.username),
                     role=row.role, user=row.user.username, released=released)
    return row


def _lock_for_ending(membership):
    """The membership's row, locked and live; the study's owner rows are locked first (in
    id order, whatever is removed), and the last owner refused."""
    owners = list(Membership.objects.select_for_update()
                  .filter(study_id=membership.study_id, role=Role.OWNER, deleted_at__isnull=True)
                  .order_by("pk").values_list("pk", flat=True))
    row = (Membership.objects.select_for_update().select_related("user")
           .filter(pk=membership.pk, deleted_at__isnull=True).first())
    if row is None:
        raise Http404(_("No such member."))
    if row.role == Role.OWNER and owners == [row.pk]:
        raise Refused(_("A study needs an owner: make someone else owner first."))
    return row


def _end(row):
    row.deleted_at = timezone.now()
    row.save(update_fields=["deleted_at"])
    if row.role == Role.CODER:
        return release_leases(row.study_id, row.user_id)
    return 0


def release_leases(study_id, coder_id):
    """Return the items a coder holds in a study to the pool (coding.labeling.queue.release). Drafts
    stay on the assignment, as when a lease lapses; submitted codings are untouched.
    Returns how many were held."""
    return release(Assignment.objects.filter(study_id=study_id, coder_id=coder_id,
                                             status=Assignment.Status.ACTIVE)
                   .values_list("pk", "item_id"))


# --- invites ------------------------------------------------------------------------------

# Guessing invite tokens is throttled as guessing passwords is (workbench.auth.Refusals):
# the accept page and API count each refused token against the address.
INVITE_REFUSALS = Refusals("invite")


def token_hash(token):
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def invite_state(invite, now=None):
    if invite.used_at:
        return USED
    if invite.revoked_at:
        return REVOKED
    if invite.expires_at <= (now or timezone.now()):
        return EXPIRED
    return PENDING


def pending_invites(study):
    return (study.invites.filter(used_at__isnull=True, revoked_at__isnull=True,
                                 expires_at__gt=timezone.now())
            .select_related("created_by"))


def create_invite(study, role, actor, *, note="", email="", days=INVITE_DAYS):
    """A new invite; returns (invite, token). The token is kept nowhere: show it now."""
    check_open(study)
    check_role(role)
    if not isinstance(days, int) or not 1 <= days <= MAX_INVITE_DAYS:
        raise ValidationError({"days": _("An invite lasts 1 to %(max)d days.")
                               % {"max": MAX_INVITE_DAYS}})
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invite = Invite.objects.create(
            study=study, role=role, token_hash=token_hash(token), note=note.strip()[:200],
            email=email.strip(), created_by=actor if getattr(actor, "pk", None) else None,
            expires_at=timezone.now() + timedelta(days=days))
        audit.record(actor, study, "invite.create",
                     audit.target_of("invite", id=invite.pk, role=role),
                     invite=invite.pk, role=role, note=invite.note, email=invite.email,
                     expires_at=invite.expires_at.isoformat(timespec="seconds"))
    return invite, token


def invite_path(token):
    return reverse("invite", args=[token])


def invite_link(token, request=None):
    """The link to give the person: on the host the request came to, or WORKBENCH_BASE_URL."""
    if request is not None:
        return request.build_absolute_uri(invite_path(token))
    return settings.WORKBENCH_BASE_URL.rstrip("/") + invite_path(token)


def send_invite(invite, link, language=None):
    """Mail the link when the invite has an address and a mail server is configured, in
    `language` when one is asked for, else as invite_language says.
    True if sent; a failure is logged (without the link) and the owner gives it by hand."""
    if not (invite.email and mail_configured()):
        return False
    context = {"study": invite.study, "invite": invite, "link": link}
    with translation.override(language or invite_language(invite)):
        subject = render_to_string("coding/email/invite_subject.txt", context).strip()
        body = render_to_string("coding/email/invite_body.txt", context)
    try:
        send_mail(subject, body, None, [invite.email])
    except (smtplib.SMTPException, OSError) as error:
        log.warning("invite %s: mail to its address failed: %s", invite.pk, type(error).__name__)
        return False
    return True


def invite_language(invite, maker_language=None):
    """The language an invitation is written in when none is asked for (the API's
    `language`): the one the invitee chose, when the address is that of an account that
    chose one (coding.accounts.languages); else the inviter's: `maker_language` (the API, which
    answers in English, gives the language they chose), else the page they read."""
    accounts = list(get_user_model().objects.filter(email__iexact=invite.email)[:2])
    chosen = stored_language(accounts[0]) if len(accounts) == 1 else None
    return chosen or maker_language or translation.get_language() or settings.LANGUAGE_CODE


# --- password reset links made by an owner --------------------------------------

def reset_link_refusal(membership, actor):
    """Why `actor`, an owner of the membership's study, may not make a password reset link
    for that member; None when they may. A reset link hands the account over, so it is
    made only for an account whose every role is in a study the actor owns: no owner can
    take over someone who works, or owns, elsewhere, nor an administrator."""
    target = membership.user
    if target.pk == actor.pk:
        return _("Change your own password on your account page.")
    if target.is_staff or target.is_superuser:
        return _("%(name)s administers this workbench: only another administrator may reset "
                 "that password.") % {"name": target.username}
    owned = Membership.objects.filter(user=actor, role=Role.OWNER,
                                      deleted_at__isnull=True).values("study_id")
    elsewhere = (Membership.objects.filter(user=target, deleted_at__isnull=True)
                 .exclude(study_id__in=owned).exists())
    if elsewhere:
        return _("%(name)s also has a role in a study you do not own: ask an administrator, "
                 "or ask them to reset it by mail.") % {"name": target.username}
    if membership.role == Role.OWNER:
        return _("%(name)s owns this study too: only an administrator may reset an owner's "
                 "password.") % {"name": target.username}
    return None


def make_reset_link(membership, actor, request=None):
    """A one-time link that lets the member set a new password: Django's reset token,
    which stops working once the password changes (or after PASSWORD_RESET_TIMEOUT).
    Refused (Refused, saying why) unless reset_link_refusal allows it; audited. The
    token is kept nowhere: show the link now."""
    check_open(membership.study)
    refusal = reset_link_refusal(membership, actor)
    if refusal:
        raise Refused(refusal)
    user = membership.user
    path = reverse("password_reset_confirm", args=[
        urlsafe_base64_encode(force_bytes(user.pk)), default_token_generator.make_token(user)])
    expires = timezone.now() + timedelta(seconds=settings.PASSWORD_RESET_TIMEOUT)
    audit.record(actor, membership.study, "member.reset_link",
                 audit.target_of("member", role=membership.role, name=user.username),
                 user=user.username, expires_at=expires.isoformat(timespec="seconds"))
    if request is not None:
        return request.build_absolute_uri(path)
    return settings.WORKBENCH_BASE_URL.rstrip("/") + path


def revoke_invite(invite, actor):
    """Revoke an unused invite; a used one cannot be (Refused). Revoking twice is harmless."""
    check_open(invite.study)
    with transaction.atomic():
        changed = Invite.objects.filter(pk=invite.pk, used_at__isnull=True,
                                        revoked_at__isnull=True).update(revoked_at=timezone.now())
        invite.refresh_from_db()
        if invite.used_at:
            raise Refused(_("This invite was already used; remove the member instead."))
        if changed:
            audit.record(actor, invite.study, "invite.revoke",
                         audit.target_of("invite", id=invite.pk, role=invite.role),
                         invite=invite.pk, role=invite.role)
    return invite


def find_invite(token):
    """The invite of a token, in whatever state; 404 for a token nobody was given (or one
    of a deleted study): that answer says nothing about any study."""
    if not isinstance(token, str) or not 20 <= len(token) <= 100:
        raise Http404(_("No such invitation."))
    invite = (Invite.objects.select_related("study")
              .filter(token_hash=token_hash(token), study__deleted_at__isnull=True).first())
    if invite is None:
        raise Http404(_("No such invitation."))
    return invite


def check_usable(invite):
    state = invite_state(invite)
    if state == USED:
        raise InviteGone(_("This invitation link was already used. Ask the study's owner for "
                           "a new one if you still need to join."))
    if state == REVOKED:
        raise InviteGone(_("This invitation was withdrawn by the study's owner."))
    if state == EXPIRED:
        raise InviteGone(_("This invitation link has expired. Ask the study's owner for a new "
                           "one."))
    if invite.study.archived_at:
        raise InviteGone(_("This study is archived: it takes no new members."))


class AccountForm(UserCreationForm):
    """A new account from an invite: username, password twice, Django's password rules."""


def account_form(username, password):
    """The account form for the API's one password (no repetition to compare)."""
    return AccountForm(data={"username": username, "password1": password, "password2": password})


def accept_invite(token, *, user=None, account=None, confirm_mixed=False):
    """Use an invite: for a signed-in `user`, or for a new account from a valid `account`
    form. One transaction makes the account, the membership and marks the invite used.
    A coder joining as adjudicator or viewer (where the study allows it) confirms first
    (`confirm_mixed`; else a ValidationError on confirm_mixed asks).

    Http404 for an unknown token, InviteGone when it can no longer be used, a located
    ValidationError (the invite stays usable) when the username was taken meanwhile or
    the user already holds the role."""
    with transaction.atomic():
        invite = find_invite(token)
        # The row lock makes a parallel use wait here, then find the invite used.
        invite = Invite.objects.select_for_update(of=("self",)).select_related("study").get(
            pk=invite.pk)
        check_usable(invite)
        study, new_account = invite.study, user is None
        if new_account:
            user = _create_account(account, invite)
        elif invite.role in study.roles_of(user):
            raise ValidationError({"token": _(
                "You already are %(role)s in %(study)s; this invite is left for someone "
                "else.") % {"role": role_words(invite.role), "study": study.name}})
        elif (study.coders_hold_other_roles and not confirm_mixed
              and mixes_roles(study, user, invite.role)):
            raise ValidationError({"confirm_mixed": mixed_roles_question()})
        membership, _revived = _grant(study, user, invite.role)
        used = Invite.objects.filter(pk=invite.pk, used_at__isnull=True, revoked_at__isnull=True)
        if not used.update(used_at=timezone.now(), used_by=user):
            raise InviteGone(_("This invitation link was already used."))
        audit.record(user, study, "invite.use",
                     audit.target_of("member", role=invite.role, name=user.username),
                     invite=invite.pk, role=invite.role, user=user.username,
                     new_account=new_account)
    return membership


def _create_account(account, invite):
    try:
        with transaction.atomic():
            user = account.save(commit=False)
            user.email = invite.email
            user.save()
    except IntegrityError:  # the username was taken between the form's check and now
        raise ValidationError({"username": _("A user with that username already exists.")}) \
            from None
    return user

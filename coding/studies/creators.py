"""Who may create studies: staff always (coding.access.roles.may_create_study), anyone else
once granted the coding.create_study permission, by a staff member on the study creators
page or with `manage.py grant_study_creation USER [--revoke]`. Each grant is audited as an
entry of the install (no study)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import transaction
from django.db.models import Q

from coding.access.audit import record, target_of

PER_PAGE = 100


def permission():
    return Permission.objects.get(codename="create_study", content_type__app_label="coding")


@transaction.atomic
def grant(user, actor, revoke=False):
    """Give `user` the right to create studies (or take it back); audited."""
    change = user.user_permissions.remove if revoke else user.user_permissions.add
    change(permission())
    record(actor, None, "permission.revoke" if revoke else "permission.grant",
           target_of("account", name=user.username), permission="create_study")


def accounts(after="", search=""):
    """A page of accounts by username (keyset: those after `after`), each with whether it
    may create studies: (rows, the username to go on after, or "" at the end)."""
    users = get_user_model().objects.filter(is_active=True, username__gt=after)
    if search:
        users = users.filter(Q(username__icontains=search) | Q(email__icontains=search)
                             | Q(first_name__icontains=search))
    found = list(users.order_by("username")[:PER_PAGE + 1])
    holders = set(permission().user_set.filter(pk__in=[u.pk for u in found])
                  .values_list("pk", flat=True))
    rows = [{"user": u, "granted": u.pk in holders, "staff": u.is_staff}
            for u in found[:PER_PAGE]]
    return rows, found[PER_PAGE - 1].username if len(found) > PER_PAGE else ""

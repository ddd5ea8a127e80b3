"""Permission-checked fetches. Every page and API view gets its study through here.

A study the user is not a member of does not exist for them: 404, exactly as
for a wrong address. A member lacking the role an action needs gets 403.
"""

from django.core.exceptions import PermissionDenied
from django.http import Http404

from .models import Assignment, Role, Study

CAN_SEE_ALL_CODINGS = {Role.OWNER, Role.ADJUDICATOR}


def access_study(user, slug, roles=None):
    """The study with `slug` if the user is a member (and holds one of `roles`, if given).

    The roles the user holds are attached as `study.my_roles`.
    """
    study = Study.objects.visible_to(user).filter(slug=slug).first()
    if study is None:
        raise Http404("No such study.")
    study.my_roles = study.roles_of(user)
    if roles and not study.my_roles & set(roles):
        raise PermissionDenied(f"This needs the role {' or '.join(sorted(roles))} in {study}.")
    return study


def access_assignment(user, study, pk):
    """The user's own assignment in the study; anyone else's is 404, as if it did not exist."""
    assignment = (Assignment.objects.filter(pk=pk, item__study=study, coder=user)
                  .select_related("item__snapshot", "item__codebook", "item__document",
                                  "item__study").first())
    if assignment is None:
        raise Http404("No such assignment.")
    return assignment


def may_create_study(user):
    """Staff, and anyone granted `coding.create_study` (manage.py grant_study_creation)."""
    return bool(user.is_authenticated and (user.is_staff or user.has_perm("coding.create_study")))

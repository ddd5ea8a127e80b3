"""Permission-checked fetches. Every page and API view gets its study through here.

A study the user is not a member of does not exist for them: 404, exactly as
for a wrong address. A member lacking the role an action needs gets 403.
"""

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.utils.translation import gettext as _

from coding.models import Assignment, Codebook, Item, Role, Study
from ingest.models import Document, Snapshot
from workbench.prepared import Slot, Statement, instance

CAN_SEE_ALL_CODINGS = {Role.OWNER, Role.ADJUDICATOR}


def access_study(user, slug, roles=None):
    """The study with `slug` if the user is a member (and holds one of `roles`, if given).

    The roles the user holds are attached as `study.my_roles`.
    """
    study = Study.objects.visible_to(user).filter(slug=slug).first()
    if study is None:
        raise Http404(_("No such study."))
    study.my_roles = study.roles_of(user)
    if roles and not study.my_roles & set(roles):
        raise PermissionDenied(_("This needs the role %(roles)s in %(study)s.") % {
            "roles": _(" or ").join(role_words(r) for r in sorted(roles)), "study": study})
    return study


def role_label(role):
    """A role's label in the reader's language ("Coder", 编码员); a key that is not a role
    (an old audit entry), as it is."""
    return _(Role(role).label) if role in Role.values else role


def role_words(role):
    """A role as a sentence names it: "coder" in English."""
    return role_label(role).lower()


def access_assignment(user, study, pk):
    """The user's own assignment in the study; anyone else's is 404, as if it did not exist.

    It comes with its item, the item's snapshot, codebook and document, read in one
    prepared statement (every submission goes through here: built by the ORM each time,
    this join cost more of a submit request's CPU than the submission itself, issue 13),
    and the item's study is the `study` given, which the caller has just read."""
    row = _ASSIGNMENT.first(pk=pk, study=study.pk, coder=user.pk)
    if row is None:
        raise Http404(_("No such assignment."))
    parts = iter(_PARTS)
    assignment = _part(row, next(parts))
    item = assignment.item = _part(row, next(parts))
    item.snapshot, item.codebook, item.document = (_part(row, part) for part in parts)
    item.study = study
    return assignment


def _row_layout():
    """[(model, its columns' place in the row)] and the columns: the related rows' columns
    named through the assignment's item, as select_related("item__snapshot", ...) joins."""
    parts, columns = [], []
    for model, path in ((Assignment, ""), (Item, "item__"), (Snapshot, "item__snapshot__"),
                        (Codebook, "item__codebook__"), (Document, "item__document__")):
        names = [path + field.name for field in model._meta.concrete_fields]
        parts.append((model, slice(len(columns), len(columns) + len(names))))
        columns += names
    return parts, columns


_PARTS, _COLUMNS = _row_layout()


def _part(row, part):
    model, columns = part
    return instance(model, row[columns])


_ASSIGNMENT = Statement(Assignment, lambda pk, study, coder: (
    Assignment.objects.filter(pk=pk, item__study=study, coder=coder).order_by()
    .values_list(*_COLUMNS)), Slot("pk"), Slot("study"), Slot("coder"))


def may_create_study(user):
    """Staff, and anyone granted `coding.create_study` (manage.py grant_study_creation)."""
    return bool(user.is_authenticated and (user.is_staff or user.has_perm("coding.create_study")))

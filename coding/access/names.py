"""How people are named to whom: coders see pseudonyms of the other members.

Owners and adjudicators see names. A coder sees themself as "you" and everyone else
by the study's pseudonym (coder_1, adjudicator_1 …, the same ones the export uses),
unless the owner turned on `Study.coders_see_names`.
"""

from coding.access.roles import CAN_SEE_ALL_CODINGS
from coding.models import Membership, Role


def sees_names(study, roles):
    return bool(roles & CAN_SEE_ALL_CODINGS) or study.coders_see_names or Role.CODER not in roles


def namer(study, viewer, roles=None):
    """A function user -> the name this viewer is shown for them."""
    roles = study.roles_of(viewer) if roles is None else roles
    if sees_names(study, roles):
        return lambda user: "you" if user.pk == viewer.pk else user.username
    hidden = pseudonyms(study)
    return lambda user: "you" if user.pk == viewer.pk else hidden.get(user.pk, "someone")


def member_order(names_hidden):
    """The order of a list of members: by username where names are shown; else by when
    each joined, the order pseudonyms are numbered in, so the list's order tells no more
    than the pseudonyms do (by username it gave identities away)."""
    return ("role", "created_at", "pk") if names_hidden else ("role", "user__username")


def named_groups(groups, name):
    """[(answer, [coders])] with each coder replaced by the name the viewer is shown."""
    return [(value, [name(coder) for coder in coders]) for value, coders in groups]


def pseudonyms(study):
    """{user id: pseudonym}, stable within a study since memberships are never deleted:
    coder_1, coder_2 … in the order coders joined; anyone else by their role
    (adjudicator_1, owner_1 …), for the decisions they recorded."""
    names, counts = {}, {}
    memberships = list(Membership.objects.filter(study=study).order_by("created_at", "pk"))
    # Coders first, so a person who both codes and adjudicates is known as a coder.
    for membership in sorted(memberships, key=lambda m: m.role != Role.CODER):
        if membership.user_id not in names:
            counts[membership.role] = counts.get(membership.role, 0) + 1
            names[membership.user_id] = f"{membership.role}_{counts[membership.role]}"
    return names

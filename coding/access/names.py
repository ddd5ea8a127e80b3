"""How people are named to whom: coders see pseudonyms of the other members.

Owners see names, and so do adjudicators unless the owner turned off
`Study.adjudicators_see_names` (blind adjudication: a decision that cannot lean on who
answered). A coder sees themself as "you" and everyone else by the study's pseudonym
(coder_1, adjudicator_1 …, the same ones the export uses), unless the owner turned on
`Study.coders_see_names`.
"""

from coding.models import Membership, Role


def sees_names(study, roles):
    if Role.OWNER in roles:
        return True
    if Role.ADJUDICATOR in roles and study.adjudicators_see_names:
        return True
    if Role.CODER in roles:
        return study.coders_see_names
    return Role.ADJUDICATOR not in roles


def namer(study, viewer, roles=None):
    """A function user -> the name this viewer is shown for them."""
    roles = study.roles_of(viewer) if roles is None else roles
    if sees_names(study, roles):
        return lambda user: "you" if user.pk == viewer.pk else user.username
    hidden = pseudonyms(study)
    return lambda user: "you" if user.pk == viewer.pk else hidden.get(user.pk, "someone")


def name_for(study, roles):
    """A function user -> the name a reader holding these roles is shown for them: the
    username, or the study's pseudonym where names are hidden from the reader. Never
    "you" (the review pages, lists and the API name everyone alike)."""
    if sees_names(study, roles):
        return lambda user: user.username
    hidden = pseudonyms(study)
    return lambda user: hidden.get(user.pk, "someone")


def name_by_id(study, roles):
    """name_for's names keyed by user id, for figures computed on ids (a model rater's
    validation): the study's members read once."""
    if not sees_names(study, roles):
        hidden = pseudonyms(study)
        return lambda user_id: hidden.get(user_id, "someone")
    usernames = dict(Membership.objects.filter(study=study).values_list(
        "user_id", "user__username"))
    return lambda user_id: usernames.get(user_id, "someone")


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


def members_named(study):
    """[(user, pseudonym)] of the study's members, in the order pseudonyms are numbered."""
    names = pseudonyms(study)
    users = {m.user_id: m.user for m in Membership.objects.filter(study=study)
             .select_related("user")}
    return [(users[pk], name) for pk, name in names.items()]

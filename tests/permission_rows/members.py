"""Permission rows: Members and roles, and one-time invitation links.

Owners only change who is in a study; every member reads the member list (coders by
pseudonym). An invite link is anyone's who holds it: the token is the credential, so
its page and the accept operation answer everyone alike (a used link: 410, still "Y").
`member_id` is coder A's coder membership, `invite_id` and `invite_token` a pending
coder invite to alpha made for each test.
"""

from coding.models import Role
from coding.studies import members

ANYONE = {"GET": "YYYYYYY", "POST": "YYYYYYY", "PUT": "MMMMMMM", "PATCH": "MMMMMMM",
          "DELETE": "MMMMMMM"}

ROWS = {
    "studies/<slug:slug>/members/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "studies/<slug:slug>/members/<int:member_id>/role/": {"POST": "LNFFFFY"},
    "studies/<slug:slug>/members/<int:member_id>/remove/": {"POST": "LNFFFFY"},
    "studies/<slug:slug>/members/<int:member_id>/reset-link/": {"POST": "LNFFFFY"},
    "studies/<slug:slug>/invites/": {"POST": "LNFFFFY"},
    "studies/<slug:slug>/invites/<int:invite_id>/revoke/": {"POST": "LNFFFFY"},
    "invite/<str:invite_token>/": ANYONE,
    # The invite page once the link moved its token into the session: without one (as
    # here), nothing to show anyone.
    "invite/": {"GET": "NNNNNNN", "POST": "NNNNNNN", "PUT": "MMMMMMM", "PATCH": "MMMMMMM",
                "DELETE": "MMMMMMM"},
    # Replaces the table's GET-only row: every member reads, owners add.
    "api/studies/<slug:slug>/members/": {"GET": "LNYYYYY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/members/<int:member_id>/": {"PATCH": "LNFFFFY",
                                                         "DELETE": "LNFFFFY"},
    "api/studies/<slug:slug>/members/<int:member_id>/reset-link/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/invites/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/invites/<int:invite_id>/": {"DELETE": "LNFFFFY"},
    "api/invites/accept/": {**ANYONE, "GET": "MMMMMMM"},
}


def values(world, alpha, people):
    invite, token = members.create_invite(alpha, Role.CODER, people["olive"], note="Nadia")
    coder = alpha.memberships.get(user=people["cora"], role=Role.CODER)
    return {"member_id": coder.pk, "invite_id": invite.pk, "invite_token": token}

"""A coder is not also an adjudicator or viewer unless the study allows it (issue 36, 2).

A coder who was made a viewer by the owner, or who accepted a viewer invite while signed
in (201, no warning), could read every coder's answers and decisions, then submit the
decided values as a new revision counted as independent.
"""

import pytest

from coding.models import Membership, Role
from coding.studies import members as service


def live_roles(study, user):
    return set(Membership.objects.filter(study=study, user=user, deleted_at__isnull=True)
               .values_list("role", flat=True))


def test_the_owner_cannot_make_a_coder_a_viewer_or_an_adjudicator(alpha, people, client_for):
    olive = client_for(people["olive"])
    for role in ("viewer", "adjudicator"):
        refused = olive.post(f"/api/studies/{alpha.slug}/members/",
                             {"username": "cora", "role": role}, content_type="application/json")
        assert refused.status_code == 400, refused.content
        assert "both a coder and an adjudicator or viewer" in str(refused.json())
    page = olive.post(f"/studies/{alpha.slug}/members/", {"person": "vera", "role": "coder"})
    assert "both a coder and an adjudicator or viewer" in page.content.decode()
    assert live_roles(alpha, people["cora"]) == {Role.CODER}
    assert live_roles(alpha, people["vera"]) == {Role.VIEWER}


def test_a_coder_cannot_take_a_viewer_invite_and_is_told_why(alpha, people, client_for):
    _, token = service.create_invite(alpha, Role.VIEWER, people["olive"])
    cora = client_for(people["cora"])
    page = cora.get(f"/invite/{token}/", follow=True).content.decode()
    assert 'id="mixed-roles"' in page and "Join as cora" not in page
    refused = cora.post("/api/invites/accept/", {"token": token},
                        content_type="application/json")
    assert refused.status_code == 400 and "both a coder" in str(refused.json())
    assert live_roles(alpha, people["cora"]) == {Role.CODER}


def test_where_the_study_allows_it_the_coder_confirms_first(alpha, people, client_for):
    alpha.coders_hold_other_roles = True
    alpha.save()
    _, token = service.create_invite(alpha, Role.VIEWER, people["olive"])
    cora = client_for(people["cora"])
    asked = cora.post("/api/invites/accept/", {"token": token}, content_type="application/json")
    assert asked.status_code == 400 and "confirm_mixed" in asked.json()
    assert "recorded as informed" in str(asked.json()["confirm_mixed"])
    joined = cora.post("/api/invites/accept/", {"token": token, "confirm_mixed": True},
                       content_type="application/json")
    assert joined.status_code == 201
    assert live_roles(alpha, people["cora"]) == {Role.CODER, Role.VIEWER}


def test_changing_a_coder_into_a_viewer_is_no_mix(alpha, people):
    membership = Membership.objects.get(study=alpha, user=people["cora"], role=Role.CODER)
    service.change_role(membership, Role.VIEWER, people["olive"])
    assert live_roles(alpha, people["cora"]) == {Role.VIEWER}


@pytest.mark.parametrize("role", ["viewer", "adjudicator"])
def test_the_setting_lets_the_owner_add_the_role(alpha, people, role):
    alpha.coders_hold_other_roles = True
    alpha.save()
    service.add_member(alpha, people["cora"], role, people["olive"])
    assert role in live_roles(alpha, people["cora"])

"""An archived study refuses every change but being restored, through every route
(issue 36, finding 7).

Skipping through the API succeeded while the form got 409, and owners could still invite,
add members, create drafts and change settings in an archived study.
"""

import pytest

from coding.models import Invite, Membership
from coding.studies.setup import archive_study, restore_study
from tests import factories


@pytest.fixture
def archived(alpha, people):
    archive_study(alpha, people["olive"])
    return alpha


def refused(response):
    return response.status_code == 409 and "archived" in response.content.decode()


def test_every_write_is_refused_with_409(archived, people, client_for):
    slug = archived.slug
    olive = client_for(people["olive"])
    assert refused(olive.post(f"/api/studies/{slug}/invites/", {"role": "coder"},
                              content_type="application/json"))
    assert refused(olive.post(f"/api/studies/{slug}/members/",
                              {"username": "otto", "role": "viewer"},
                              content_type="application/json"))
    assert refused(olive.patch(f"/api/studies/{slug}/", {"overlap": 3},
                               content_type="application/json"))
    assert refused(olive.post(f"/studies/{slug}/codebooks/{archived.paper_codebook.pk}/draft/"))
    ada = client_for(people["ada"])
    factories.code(archived.papers[0], people["cora"], label="rl_method", scope="general")
    factories.code(archived.papers[0], people["cyril"])
    assert refused(ada.post(f"/api/studies/{slug}/items/{archived.papers[0].pk}/review/",
                            {"question": "label", "value": "analysis"},
                            content_type="application/json"))
    assert not Invite.objects.filter(study=archived).exists()
    assert not Membership.objects.filter(study=archived, user=people["otto"]).exists()
    archived.refresh_from_db()
    assert archived.overlap == 2 and archived.codebooks.get().versions.count() == 1


def test_a_coder_cannot_skip_through_the_api(alpha, people, client_for):
    cora = client_for(people["cora"])
    held = cora.post(f"/api/studies/{alpha.slug}/next/").json()
    archive_study(alpha, people["olive"])
    answer = cora.post(f"/api/studies/{alpha.slug}/assignments/{held['id']}/skip/",
                       {"reason": "Off topic"}, content_type="application/json")
    assert refused(answer)


def test_restoring_opens_it_again(archived, people, client_for):
    assert restore_study(archived, people["olive"])
    assert client_for(people["olive"]).post(
        f"/api/studies/{archived.slug}/invites/", {"role": "coder"},
        content_type="application/json").status_code == 201

"""No laundering through a second role (issue 36, finding 2).

A coder who is also viewer read GET /api/studies/S/decisions/?item=… or exported long.csv,
every coder's answers included, then submitted the decided values: phase independent,
counted by reliability. The same as coder and adjudicator through the review page and API.
Every such read is now recorded, and the reader's later codings of those items are
informed, the first one included.
"""

import pytest

from coding.actions.submit import record_coding
from coding.adjudication.decisions import decide
from coding.labeling import queue
from coding.models import Membership, OthersWorkRead, Role
from tests import factories

ANSWERS = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}


@pytest.fixture
def mixed(alpha, people):
    """cora codes and, as the study allows, also views and adjudicates; cyril has coded and
    ada decided the first paper."""
    alpha.coders_hold_other_roles = True
    alpha.save()
    for role in (Role.VIEWER, Role.ADJUDICATOR):
        Membership.objects.create(study=alpha, user=people["cora"], role=role)
    factories.code(alpha.papers[0], people["cyril"])
    factories.code(alpha.papers[1], people["cyril"])
    decide(alpha.papers[0], "label", "rl_method", people["ada"], rationale="Read it.")
    return alpha


def first_coding(study, person, item):
    return record_coding(queue.assign(item, person), ANSWERS)


@pytest.mark.parametrize("read", [
    lambda s, item: f"/api/studies/{s.slug}/decisions/?item={item.pk}",
    lambda s, item: f"/api/studies/{s.slug}/codings/?item={item.pk}",
    lambda s, item: f"/api/studies/{s.slug}/items/{item.pk}/review/",
    lambda s, item: f"/studies/{s.slug}/review/{item.pk}/",
])
def test_a_coder_who_read_others_work_on_an_item_codes_it_informed(mixed, people, client_for,
                                                                  read):
    item = mixed.papers[0]
    assert client_for(people["cora"]).get(read(mixed, item)).status_code == 200
    assert first_coding(mixed, people["cora"], item).phase == "informed"
    # An item they did not read stays independent.
    assert first_coding(mixed, people["cora"], mixed.papers[2]).phase == "independent"


def test_an_export_exposes_every_item_there_was(mixed, people, client_for):
    response = client_for(people["cora"]).post(f"/studies/{mixed.slug}/export/",
                                               {"shapes": ["long"], "format": "csv"})
    assert response.status_code == 200
    assert OthersWorkRead.objects.filter(coder=people["cora"], item=None, kind="export").exists()
    assert first_coding(mixed, people["cora"], mixed.papers[1]).phase == "informed"
    later = factories.paper_item(mixed, mixed.paper_codebook, 9)  # added after the export
    assert first_coding(mixed, people["cora"], later).phase == "independent"


def test_a_coder_with_no_other_role_leaves_no_record(alpha, people, client_for):
    cyril = client_for(people["cyril"])
    factories.code(alpha.papers[0], people["cyril"])
    assert cyril.get(f"/api/studies/{alpha.slug}/codings/").status_code == 200
    assert not OthersWorkRead.objects.exists()

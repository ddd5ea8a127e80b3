"""Blinded inclusion stays blinded in the inclusion report and the export (issue 36, 3).

With included_in blinded and adjudicators_see_blinded off, the catalog refused
adjudicators and viewers, but the inclusion API answered them (its population filter
narrowed to one paper: papers 1, included 1) and their exports carried inclusion.csv.
"""

import csv
import io
import zipfile

import pytest

from coding.catalog import landings
from coding.export.bundle import build_bundle
from coding.models import Role

READERS = ("ada", "vera")  # the adjudicator and the viewer


@pytest.fixture
def blinded(alpha):
    landings.blind_inclusion(alpha)
    alpha.refresh_from_db()
    assert "included_in" in alpha.blinded_fields and not alpha.adjudicators_see_blinded
    return alpha


def test_adjudicators_and_viewers_are_refused_the_inclusion_report(blinded, people,
                                                                   client_for):
    for name in READERS:
        client = client_for(people[name])
        api = client.get(f"/api/studies/{blinded.slug}/inclusion/?population=label=rl_method")
        assert api.status_code == 403 and "hides framework inclusion" in api.json()["detail"]
        assert client.get(f"/studies/{blinded.slug}/inclusion/").status_code == 403
        assert client.get(f"/studies/{blinded.slug}/catalog/").status_code == 403
    assert client_for(people["olive"]).get(
        f"/api/studies/{blinded.slug}/inclusion/").status_code == 200


def test_their_exports_carry_an_empty_inclusion_table(blinded, people, tmp_path):
    for roles in ({Role.ADJUDICATOR}, {Role.VIEWER}, {Role.CODER}):
        path = tmp_path / "bundle.zip"
        build_bundle(blinded, path, shapes=["inclusion"], fmt="csv", roles=roles)
        with zipfile.ZipFile(path) as bundle:
            rows = list(csv.reader(io.StringIO(bundle.read("inclusion.csv").decode())))
        assert len(rows) == 1, roles  # the header alone


def test_with_blinded_fields_shown_to_them_they_read_it(blinded, people, client_for):
    blinded.adjudicators_see_blinded = True
    blinded.save()
    for name in READERS:
        assert client_for(people[name]).get(
            f"/api/studies/{blinded.slug}/inclusion/").status_code == 200

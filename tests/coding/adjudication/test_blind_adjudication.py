"""Blind adjudication (issue 39, finding 5): with the study's "adjudicators see names" off,
an adjudicator meets coders by pseudonym on the review list and page, the codings list, the
item browser and the API, and filters by the pseudonyms they are shown. Owners see names."""

import pytest

from coding.access.names import pseudonyms
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def blind(alpha, people):
    alpha.adjudicators_see_names = False
    alpha.save(update_fields=["adjudicators_see_names"])
    item = alpha.papers[0]
    factories.code(item, people["cora"], label="analysis")
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    return item


def test_an_adjudicator_reads_no_coders_name_anywhere(client_for, alpha, people, blind):
    names = pseudonyms(alpha)
    client = client_for(people["ada"])
    pages = [f"/studies/{alpha.slug}/review/", f"/studies/{alpha.slug}/review/{blind.pk}/",
             f"/studies/{alpha.slug}/codings/", f"/studies/{alpha.slug}/items/",
             f"/studies/{alpha.slug}/items/{blind.pk}/"]
    apis = [f"/api/studies/{alpha.slug}/disagreements/",
            f"/api/studies/{alpha.slug}/items/{blind.pk}/review/",
            f"/api/studies/{alpha.slug}/items/{blind.pk}/"]
    for url in pages + apis:
        text = client.get(url).content.decode()
        assert "cora" not in text and "cyril" not in text, url
    review = client.get(f"/studies/{alpha.slug}/review/{blind.pk}/").content.decode()
    assert names[people["cora"].pk] in review and names[people["cyril"].pk] in review
    coded = client.get(f"/api/studies/{alpha.slug}/items/{blind.pk}/review/").json()
    assert set(coded["coders"]) == {names[people["cora"].pk], names[people["cyril"].pk]}


def test_the_review_filter_takes_the_pseudonyms_shown(client_for, alpha, people, blind):
    client = client_for(people["ada"])
    shown = pseudonyms(alpha)[people["cyril"].pk]
    by_pseudonym = client.get(f"/api/studies/{alpha.slug}/disagreements/", {"coders": shown})
    assert by_pseudonym.json()["count"] >= 1
    by_name = client.get(f"/api/studies/{alpha.slug}/disagreements/", {"coders": "cyril"})
    assert by_name.json()["count"] == 0  # a name would tell who is who: it matches nothing


def test_owners_see_names_and_the_default_shows_them_to_adjudicators(client_for, alpha, people,
                                                                    blind):
    owner = client_for(people["olive"]).get(f"/studies/{alpha.slug}/review/{blind.pk}/")
    assert "cora" in owner.content.decode()
    alpha.adjudicators_see_names = True
    alpha.save(update_fields=["adjudicators_see_names"])
    page = client_for(people["ada"]).get(f"/studies/{alpha.slug}/review/{blind.pk}/")
    assert "cora" in page.content.decode()

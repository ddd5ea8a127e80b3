"""The codings lists (issue 39, finding 2): a coder's own rows show their answers and open
the item; everyone's list filters by coder and item and shows the values by label."""

import pytest

from tests import factories

pytestmark = pytest.mark.django_db


def test_a_coders_own_list_shows_answers_and_opens_each_item(client_for, alpha, people):
    mine = factories.code(alpha.papers[0], people["cora"], label="analysis", size_b=12)
    factories.code(alpha.papers[0], people["cyril"], label="rl_method", scope="general")
    page = client_for(people["cora"]).get(f"/studies/{alpha.slug}/codings/")
    text = page.content.decode()
    assert "Analysis" in text and ">12<" in text.replace(" ", "")
    assert "RL method" not in text  # the other coder's answer is never on a coder's page
    assert f'/studies/{alpha.slug}/code/{mine.assignment_id}/' in text


def test_everyones_list_filters_by_coder_and_item(client_for, alpha, people):
    factories.code(alpha.papers[0], people["cora"], label="analysis")
    factories.code(alpha.papers[1], people["cyril"], label="rl_method", scope="general")
    client = client_for(people["ada"])
    by_coder = client.get(f"/studies/{alpha.slug}/codings/", {"coder": people["cyril"].pk})
    assert [c.assignment.coder.username for c in by_coder.context["codings"]] == ["cyril"]
    assert "RL method" in by_coder.content.decode()
    by_item = client.get(f"/studies/{alpha.slug}/codings/", {"q": alpha.papers[0].document.key})
    assert [c.assignment.item_id for c in by_item.context["codings"]] == [alpha.papers[0].pk]
    assert f"/studies/{alpha.slug}/items/{alpha.papers[0].pk}/" in by_item.content.decode()
    # A coder cannot narrow to another coder: the filter is for those who see everyone's.
    own = client_for(people["cora"]).get(f"/studies/{alpha.slug}/codings/",
                                         {"coder": people["cyril"].pk})
    assert [c.assignment.coder.username for c in own.context["codings"]] == ["cora"]

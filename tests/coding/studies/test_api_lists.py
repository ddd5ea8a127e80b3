"""Every API list pages (?limit=&offset=) and filters (?name=value) the same way."""

from tests import factories


def test_items_page_and_filter_for_the_owner(alpha, people, client_for):
    api = client_for(people["olive"])
    first = api.get(f"/api/studies/{alpha.slug}/items/?limit=2").json()
    assert first["count"] == 3 and len(first["results"]) == 2 and first["next"]
    rest = api.get(first["next"]).json()
    assert len(rest["results"]) == 1 and rest["previous"]
    key = alpha.papers[1].document.key
    only = api.get(f"/api/studies/{alpha.slug}/items/", {"document_key": key}).json()
    assert [row["id"] for row in only["results"]] == [alpha.papers[1].pk]
    assert api.get(f"/api/studies/{alpha.slug}/items/", {"kind": "thread"}).json()["count"] == 0


def test_coders_cannot_list_items(alpha, people, client_for):
    """Coders meet items one at a time, blinded, through their queue; a list would unblind."""
    assert client_for(people["cora"]).get(f"/api/studies/{alpha.slug}/items/").status_code == 403


def test_codings_filter_by_coder_and_item(alpha, people, client_for):
    factories.code(alpha.papers[0], people["cora"])
    factories.code(alpha.papers[1], people["cora"])
    factories.code(alpha.papers[0], people["cyril"])
    api = client_for(people["ada"])
    url = f"/api/studies/{alpha.slug}/codings/"
    assert api.get(url).json()["count"] == 3
    assert api.get(url, {"coder": "cyril"}).json()["count"] == 1
    assert api.get(url, {"item": alpha.papers[0].pk}).json()["count"] == 2
    # A coder's filter for someone else's codings finds nothing, not their codings.
    assert client_for(people["cora"]).get(url, {"coder": "cyril"}).json()["count"] == 0


def test_bad_filter_values_are_a_clear_400(alpha, people, client_for):
    refused = client_for(people["olive"]).get(f"/api/studies/{alpha.slug}/codings/",
                                              {"submitted_after": "last tuesday"})
    assert refused.status_code == 400 and "submitted_after" in refused.json()


def test_members_list_with_roles(alpha, people, client_for):
    rows = client_for(people["vera"]).get(f"/api/studies/{alpha.slug}/members/",
                                          {"role": "coder"}).json()["results"]
    assert sorted(row["username"] for row in rows) == ["cora", "cyril"]


def test_studies_filter_by_my_role(alpha, beta, people, client_for):
    api = client_for(people["olive"])
    assert [s["slug"] for s in api.get("/api/studies/", {"role": "owner"}).json()["results"]] \
        == [alpha.slug]
    assert api.get("/api/studies/", {"role": "coder"}).json()["count"] == 0


def test_page_size_is_capped(alpha, people, client_for):
    body = client_for(people["olive"]).get(f"/api/studies/{alpha.slug}/items/?limit=100000").json()
    assert body["count"] == 3  # served, at most 500 per page


def test_disagreements_are_paged(alpha, people, client_for):
    for n, item in enumerate(alpha.papers):
        factories.code(item, people["cora"], label="analysis")
        factories.code(item, people["cyril"], label="rl_method", scope="general")
    api = client_for(people["ada"])
    page = api.get(f"/api/studies/{alpha.slug}/disagreements/?limit=2").json()
    assert page["count"] >= 3 and len(page["results"]) == 2 and page["next"]


def test_ordering_by_a_field_with_ties_pages_without_overlap(alpha, people, client_for):
    for n in range(3, 9):
        factories.paper_item(alpha, alpha.paper_codebook, n)  # all priority 0: every row ties
    api = client_for(people["olive"])
    url = f"/api/studies/{alpha.slug}/items/"
    seen = []
    for offset in range(0, 9, 2):
        page = api.get(url, {"ordering": "-priority", "limit": 2, "offset": offset}).json()
        seen += [row["id"] for row in page["results"]]
    assert len(seen) == len(set(seen)) == 9


def test_ordering_only_by_the_fields_a_list_names(alpha, people, client_for):
    api = client_for(people["olive"])
    rows = api.get(f"/api/studies/{alpha.slug}/members/", {"ordering": "-role"}).json()["results"]
    # members name no ordering fields: the request is served in the list's own order
    assert [r["role"] for r in rows] == sorted(r["role"] for r in rows)


def test_feedback_says_whether_the_study_shows_it(alpha, people, client_for):
    body = client_for(people["cora"]).get(f"/api/studies/{alpha.slug}/feedback/").json()
    assert body["enabled"] is alpha.show_feedback and body["results"] == []

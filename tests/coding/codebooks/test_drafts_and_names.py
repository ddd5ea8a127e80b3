"""Drafts are the owners' until published; lists of members and "by whom" give no name
away (issue 36, finding 5).

Unpublished draft codebooks were readable by coders on the pages, the API and the file
downloads; the members list was sorted by real username, so the order of pseudonyms gave
identities away; the codebook page named who published it by username.
"""

from coding.codebooks.editing import start_draft
from coding.models import Role
from tests import factories


def test_a_draft_is_readable_by_owners_only(alpha, people, client_for):
    codebook = alpha.paper_codebook
    draft, _ = start_draft(codebook, people["olive"])
    page = f"/studies/{alpha.slug}/codebooks/{codebook.pk}/v{draft.number}/"
    download = f"/studies/{alpha.slug}/codebooks/{codebook.pk}/v{draft.number}/file/json/"
    for name in ("cora", "ada", "vera"):
        client = client_for(people[name])
        assert client.get(page).status_code == 404
        assert client.get(download).status_code == 404
        listed = client.get(f"/api/studies/{alpha.slug}/codebooks/").json()
        rows = listed["results"] if isinstance(listed, dict) else listed
        numbers = {v["number"] for book in rows for v in book["versions"]}
        assert draft.number not in numbers and 1 in numbers
        study_page = client.get(f"/studies/{alpha.slug}/").content.decode()
        assert f"v{draft.number}" not in study_page
    olive = client_for(people["olive"])
    assert olive.get(page).status_code == 200 and olive.get(download).status_code == 200


def test_members_are_listed_in_pseudonym_order_to_those_who_see_pseudonyms(
        alpha, people, client_for):
    # Joined in the order zed, amy: by username amy would come first and give her away.
    for username in ("zed", "amy"):
        factories.member(alpha, factories.user(username), Role.CODER)
    rows = client_for(people["cora"]).get(f"/api/studies/{alpha.slug}/members/").json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    coders = [row for row in rows if row["role"] == "coder"]
    names = [row.get("name") or row.get("username") for row in coders]
    assert names == sorted(names, key=lambda n: (n != "you", int(n.split("_")[-1])
                                                 if n.startswith("coder_") else 0))


def test_the_codebook_page_names_its_publisher_to_owners_only(alpha, people, client_for):
    url = f"/studies/{alpha.slug}/codebooks/{alpha.paper_codebook.pk}/"
    version = alpha.paper_codebook.current_version()
    version.created_by = people["olive"]
    version.save(update_fields=["created_by"])
    assert "by olive" not in client_for(people["cora"]).get(url).content.decode()
    assert "by olive" in client_for(people["olive"]).get(url).content.decode()

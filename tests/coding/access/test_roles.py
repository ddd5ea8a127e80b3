"""Roles, enforced on the server, through real HTTP requests (pages and API)."""

import pytest

from tests import factories


@pytest.fixture
def coded(alpha, people):
    """Both coders coded the first paper; cyril also coded the second with a private note."""
    first, second = alpha.papers[0], alpha.papers[1]
    factories.code(first, people["cora"], label="analysis")
    factories.code(first, people["cyril"], label="rl_method", scope="general")
    factories.code(second, people["cyril"], note="cyril-private-remark")
    return alpha


def test_coder_sees_only_own_codings_in_the_api(coded, people, client_for):
    client = client_for(people["cora"])
    response = client.get(f"/api/studies/{coded.slug}/codings/")
    assert response.status_code == 200
    rows = response.json()["results"]
    assert [row["coder"] for row in rows] == ["cora"]
    assert "cyril" not in response.content.decode()
    assert "rl_method" not in response.content.decode()


def test_coder_sees_only_own_assignments_in_the_api(coded, people, client_for):
    response = client_for(people["cora"]).get(f"/api/studies/{coded.slug}/assignments/")
    assert response.status_code == 200
    assert {row["coder"] for row in response.json()["results"]} == {"cora"}
    assert response.json()["count"] == 1


def test_coder_never_sees_another_coders_codings_on_the_page(coded, people, client_for):
    page = client_for(people["cora"]).get(f"/studies/{coded.slug}/codings/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "My codings" in html
    assert coded.papers[0].document.key in html
    assert coded.papers[1].document.key not in html  # only cyril coded it
    assert "cyril" not in html


def test_coder_home_counts_only_their_own_work(coded, people, client_for):
    html = client_for(people["cora"]).get("/").content.decode()
    assert "you submitted" in html
    assert "items with 2 codings" not in html  # a count derived from others' work


@pytest.mark.parametrize("name", ["olive", "ada"])
def test_owner_and_adjudicator_see_every_coding(coded, people, client_for, name):
    response = client_for(people[name]).get(f"/api/studies/{coded.slug}/codings/")
    assert response.status_code == 200
    assert sorted(row["coder"] for row in response.json()["results"]) == ["cora", "cyril", "cyril"]


def test_viewer_cannot_list_codings(coded, people, client_for):
    client = client_for(people["vera"])
    assert client.get(f"/api/studies/{coded.slug}/codings/").status_code == 403
    assert client.get(f"/studies/{coded.slug}/codings/").status_code == 403
    assert client.get(f"/studies/{coded.slug}/").status_code == 200


@pytest.mark.parametrize("name", ["cora", "ada", "vera"])
def test_only_owner_changes_study_settings_through_the_api(alpha, people, client_for, name):
    response = client_for(people[name]).patch(
        f"/api/studies/{alpha.slug}/", {"overlap": 5}, content_type="application/json"
    )
    assert response.status_code == 403
    alpha.refresh_from_db()
    assert alpha.overlap == 2


def test_owner_changes_study_settings_through_the_api(alpha, people, client_for):
    response = client_for(people["olive"]).patch(
        f"/api/studies/{alpha.slug}/", {"overlap": 3, "blinded_fields": ["state"]},
        content_type="application/json",
    )
    assert response.status_code == 200
    alpha.refresh_from_db()
    assert (alpha.overlap, alpha.blinded_fields) == (3, ["state"])


def test_api_refuses_a_bad_setting_and_names_the_field(alpha, people, client_for):
    response = client_for(people["olive"]).patch(
        f"/api/studies/{alpha.slug}/", {"overlap": 0, "blinded_fields": ["Bad Name"]},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert set(response.json()) == {"overlap", "blinded_fields"}


def test_coder_cannot_open_or_post_the_settings_page(alpha, people, client_for):
    client = client_for(people["cora"])
    assert client.get(f"/studies/{alpha.slug}/settings/").status_code == 403
    response = client.post(f"/studies/{alpha.slug}/settings/", {"name": "Hijacked", "overlap": 1})
    assert response.status_code == 403
    alpha.refresh_from_db()
    assert alpha.name == "Alpha study"


def test_owner_saves_settings_in_the_browser_form(alpha, people, client_for):
    response = client_for(people["olive"]).post(f"/studies/{alpha.slug}/settings/", {
        "name": "Alpha study", "description": "", "overlap": 3, "lease_minutes": 30,
        "calibration_threshold": 0.8, "blinded_fields": "state, merged", "show_feedback": "on",
    })
    assert response.status_code == 302
    alpha.refresh_from_db()
    assert (alpha.overlap, alpha.blinded_fields, alpha.show_feedback) == (3, ["state", "merged"], True)


def test_settings_form_names_a_bad_field(alpha, people, client_for):
    response = client_for(people["olive"]).post(f"/studies/{alpha.slug}/settings/", {
        "name": "Alpha study", "overlap": 0, "blinded_fields": "state, Not-A-Field",
    })
    assert response.status_code == 200
    html = response.content.decode()
    assert "Not-A-Field" in html
    assert "greater than or equal to 1" in html


@pytest.mark.parametrize("path", [
    "/studies/{slug}/", "/studies/{slug}/codings/", "/studies/{slug}/settings/",
    "/api/studies/{slug}/", "/api/studies/{slug}/codings/", "/api/studies/{slug}/assignments/",
    "/api/studies/{slug}/codebooks/",
])
def test_member_of_another_study_sees_nothing_of_it(coded, beta, people, client_for, path):
    response = client_for(people["otto"]).get(path.format(slug=coded.slug))
    assert response.status_code == 404
    assert "Alpha" not in response.content.decode()


def test_study_list_holds_only_the_users_studies(alpha, beta, people, client_for):
    response = client_for(people["otto"]).get("/api/studies/")
    assert [s["slug"] for s in response.json()["results"]] == [beta.slug]
    assert "Alpha study" not in client_for(people["otto"]).get("/").content.decode()


def test_codebook_of_another_study_is_not_found(alpha, beta, people, client_for):
    url = f"/studies/{beta.slug}/codebooks/{alpha.paper_codebook.pk}/"
    assert client_for(people["otto"]).get(url).status_code == 404


def test_anonymous_is_sent_to_login_and_refused_by_the_api(alpha, client):
    page = client.get(f"/studies/{alpha.slug}/")
    assert page.status_code == 302 and page["Location"].startswith("/login/")
    # 401 with a WWW-Authenticate header that names the token scheme.
    refused = client.get("/api/studies/")
    assert refused.status_code == 401 and refused["WWW-Authenticate"] == "Token"


def test_soft_deleted_study_disappears_for_its_members(alpha, people, client_for):
    from django.utils import timezone

    alpha.deleted_at = timezone.now()
    alpha.save()
    assert client_for(people["olive"]).get(f"/studies/{alpha.slug}/").status_code == 404

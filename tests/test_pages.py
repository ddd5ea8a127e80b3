"""Pages and the API schema a new user reaches first."""

import io

from coding.models import Role


def test_login_page_is_served(client):
    response = client.get("/login/")
    assert response.status_code == 200
    assert b"Log in" in response.content


def test_home_lists_each_study_with_what_the_user_can_do_next(alpha, people, client_for):
    html = client_for(people["olive"]).get("/").content.decode()
    assert "Alpha study" in html
    for action in ("Codebooks", "All codings", "Settings"):
        assert action in html


def test_coder_home_offers_no_owner_actions(alpha, people, client_for):
    html = client_for(people["cora"]).get("/").content.decode()
    assert "My codings" in html
    assert "Settings" not in html and "All codings" not in html


def test_user_without_studies_is_told_what_to_do(people, client_for):
    html = client_for(people["otto"]).get("/").content.decode()
    assert "not a member of any study" in html


def test_codebook_page_shows_definitions_and_conditions(alpha, people, client_for):
    url = f"/studies/{alpha.slug}/codebooks/{alpha.paper_codebook.pk}/"
    html = client_for(people["cora"]).get(url).content.decode()
    assert "Main contribution?" in html
    assert "shown when <code>label</code> is rl_method" in html


def test_study_page_lists_members_and_roles(alpha, people, client_for):
    html = client_for(people["vera"]).get(f"/studies/{alpha.slug}/").content.decode()
    assert "Cora" in html and Role.ADJUDICATOR.label in html
    assert "Change settings" not in html


def test_openapi_schema_documents_the_study_endpoints(people, client_for):
    response = client_for(people["olive"]).get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in ("/api/studies/", "/api/studies/{slug}/", "/api/studies/{slug}/codings/",
                 "/api/studies/{slug}/assignments/", "/api/studies/{slug}/codebooks/"):
        assert path in paths


def test_the_openapi_schema_builds_without_a_warning(db):
    """What `spectacular --validate --fail-on-warn` checks: a warning (two choice sets named
    alike, an undocumented field) means a client generated from the schema reads a made-up
    name such as Round2afEnum."""
    from django.core.management import call_command

    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out, stderr=out)


def test_api_docs_page_uses_packaged_assets(people, client_for):
    html = client_for(people["olive"]).get("/api/docs/").content.decode()
    assert "swagger" in html.lower()
    assert "cdn." not in html and "unpkg" not in html

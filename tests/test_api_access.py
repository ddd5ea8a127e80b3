"""Getting into the API and the site: tokens for scripts, sessions with CSRF, login throttling."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client

from workbench.models import ApiToken


def token_client(key):
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def make_token_in_browser(client, name="nightly export", lifetime="30"):
    page = client.post("/account/tokens/", {"name": name, "lifetime": lifetime})
    assert page.status_code == 200
    return page.context["new_key"], page.content.decode()


def test_a_token_made_in_the_browser_opens_the_api_until_it_is_revoked(alpha, people, client_for):
    browser = client_for(people["cora"])
    key, html = make_token_in_browser(browser)
    assert key.startswith("wbt_") and key in html  # shown once, on the page that made it
    token = ApiToken.objects.get(user=people["cora"])
    assert key not in (token.digest, token.token_key)  # only a digest is kept

    script = token_client(key)
    studies = script.get("/api/studies/").json()["results"]
    assert [s["slug"] for s in studies] == [alpha.slug]
    listing = browser.get("/account/tokens/").content.decode()
    assert "nightly export" in listing and key not in listing
    token.refresh_from_db()
    assert token.last_used_at is not None

    revoked = browser.post(f"/account/tokens/{token.pk}/revoke/", follow=True)
    assert "revoked" in revoked.content.decode()
    assert script.get("/api/studies/").status_code == 401


def test_a_token_acts_with_its_owners_roles_only(alpha, people):
    _, key = ApiToken.objects.create(people["cora"], name="coder script")
    script = token_client(key)
    assert script.get(f"/api/studies/{alpha.slug}/queue/").status_code == 403  # owner only
    assert script.post(f"/api/studies/{alpha.slug}/next/").status_code == 200


def test_nobody_revokes_someone_elses_token(people, client_for):
    mine, _ = ApiToken.objects.create(people["cora"], name="mine")
    refused = client_for(people["cyril"]).post(f"/account/tokens/{mine.pk}/revoke/")
    assert refused.status_code == 404
    assert client_for(people["cyril"]).delete(f"/api/tokens/{mine.pk}/").status_code == 404
    assert ApiToken.objects.filter(pk=mine.pk).exists()


def test_tokens_over_the_api_show_their_key_once(people, client_for):
    _, key = ApiToken.objects.create(people["olive"], name="bootstrap")
    api = token_client(key)
    made = client_for(people["olive"]).post("/api/tokens/", {"name": "second", "lifetime": "never"},
                                            content_type="application/json")
    assert made.status_code == 201
    body = made.json()
    assert body["key"].startswith("wbt_") and body["expiry"] is None
    listed = api.get("/api/tokens/").json()
    assert listed["count"] == 2 and all("key" not in row for row in listed["results"])
    assert api.delete(f"/api/tokens/{body['id']}/").status_code == 204
    assert token_client(body["key"]).get("/api/studies/").status_code == 401


def test_a_token_needs_a_name(people, client_for):
    refused = client_for(people["olive"]).post("/api/tokens/", {"name": " "},
                                               content_type="application/json")
    assert refused.status_code == 400 and "name" in refused.json()


def test_a_token_cannot_make_tokens(people):
    """Or a leaked seven-day token could make itself a key that never expires."""
    _, key = ApiToken.objects.create(people["olive"], name="short", expiry=timedelta(days=7))
    refused = token_client(key).post("/api/tokens/", {"name": "forever", "lifetime": "never"},
                                     content_type="application/json")
    assert refused.status_code == 403 and "session" in refused.json()["detail"]
    assert ApiToken.objects.filter(user=people["olive"]).count() == 1


def test_live_tokens_per_person_are_capped(people, client_for):
    from workbench.tokens import MAX_TOKENS

    for n in range(MAX_TOKENS):
        ApiToken.objects.create(people["olive"], name=f"script {n}")
    refused = client_for(people["olive"]).post("/account/tokens/", {"name": "one more",
                                                                   "lifetime": "30"})
    assert "revoke one you no longer use" in refused.content.decode()
    assert ApiToken.objects.filter(user=people["olive"]).count() == MAX_TOKENS


def test_a_token_header_that_is_not_text_is_refused_not_a_crash(db):
    refused = Client(HTTP_AUTHORIZATION=b"Token \xff\xfe".decode("latin-1")).get("/api/studies/")
    assert refused.status_code == 401


def test_an_expired_token_is_refused(people):
    _, key = ApiToken.objects.create(people["olive"], expiry=timedelta(seconds=-1), name="old")
    assert token_client(key).get("/api/studies/").status_code == 401


def test_the_command_makes_lists_and_revokes_tokens(people, capsys):
    call_command("api_token", "create", "vera", "--name", "report bot", "--days", "7")
    key = capsys.readouterr().out.strip()
    assert token_client(key).get("/api/studies/").status_code == 200
    call_command("api_token", "list", "vera")
    listed = capsys.readouterr().out
    assert "report bot" in listed and key not in listed
    token_id = ApiToken.objects.get(user=people["vera"]).pk
    call_command("api_token", "revoke", "vera", str(token_id))
    assert token_client(key).get("/api/studies/").status_code == 401


def test_the_command_names_an_unknown_user(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("api_token", "list", "nobody")


def test_a_browser_session_needs_the_csrf_token_to_change_anything(alpha, people):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(people["cora"])
    assert browser.get("/api/studies/").status_code == 200  # reading is fine
    refused = browser.post(f"/api/studies/{alpha.slug}/next/")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    browser.get("/")  # sets the csrftoken cookie
    allowed = browser.post(f"/api/studies/{alpha.slug}/next/",
                           HTTP_X_CSRFTOKEN=browser.cookies["csrftoken"].value)
    assert allowed.status_code == 200


def test_a_token_request_needs_no_csrf_token(alpha, people):
    _, key = ApiToken.objects.create(people["cora"], name="script")
    script = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Token {key}")
    assert script.post(f"/api/studies/{alpha.slug}/next/").status_code == 200


# --- login throttling ------------------------------------------------------------

def login(client, username, password):
    return client.post("/login/", {"username": username, "password": password},
                       REMOTE_ADDR="198.51.100.7")


def test_repeated_wrong_passwords_lock_the_login_for_that_account_and_address(people, settings):
    people["cora"].set_password("right-horse-battery")
    people["cora"].save()
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert login(client, "cora", "guess").status_code == 200  # the form again, with an error
    locked = login(client, "cora", "guess")
    assert locked.status_code == 429
    assert "Too many failed logins" in locked.content.decode()
    assert "Wait 15 minutes" in locked.content.decode()
    # Even the right password is refused while locked.
    assert login(client, "cora", "right-horse-battery").status_code == 429
    # Another account from the same address is not affected.
    people["cyril"].set_password("another-long-pass")
    people["cyril"].save()
    assert login(client, "cyril", "another-long-pass").status_code == 302


def test_a_right_password_resets_the_count(people, settings):
    people["cora"].set_password("right-horse-battery")
    people["cora"].save()
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        login(client, "cora", "guess")
    assert login(client, "cora", "right-horse-battery").status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert login(client, "cora", "guess").status_code == 200


def test_behind_a_proxy_the_lockout_follows_the_client_not_the_proxy(people, settings):
    """Every request comes from the proxy's address; without WORKBENCH_PROXY_COUNT one
    attacker could lock the owner out for everyone. With it, the address the proxy saw."""
    settings.WORKBENCH_PROXY_COUNT = 1
    people["cora"].set_password("right-horse-battery")
    people["cora"].save()
    attacker, cora = Client(), Client()

    def via_proxy(client, client_address, password, claimed=""):
        forwarded = f"{claimed}, {client_address}" if claimed else client_address
        return client.post("/login/", {"username": "cora", "password": password},
                           REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded)

    for _ in range(settings.AXES_FAILURE_LIMIT):
        # Claiming to be cora's address in front does not move the blame.
        via_proxy(attacker, "203.0.113.66", "guess", claimed="198.51.100.20")
    assert via_proxy(attacker, "203.0.113.66", "right-horse-battery").status_code == 429
    assert via_proxy(cora, "198.51.100.20", "right-horse-battery").status_code == 302

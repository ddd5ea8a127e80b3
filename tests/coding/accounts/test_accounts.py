"""Accounts without an administrator (issue 39, finding 1): a profile with a display name,
an e-mail address and a language; password change and reset by mail; a one-time reset
link an owner makes for a member, never one that would hand over someone who works or
owns elsewhere; and a staff page that lets colleagues create studies."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command

from coding.accounts.languages import stored_language
from coding.models import AuditEntry, Role
from tests import factories


def test_a_person_sets_the_name_others_see_their_address_and_language(people, client_for,
                                                                       alpha):
    cora = people["cora"]
    client = client_for(cora)
    members = client_for(people["olive"]).get(f"/studies/{alpha.slug}/").content.decode()
    assert "cora (cora)" not in members and "cora" in members  # no name: the username once
    client = client_for(cora)
    response = client.post("/account/", {"display_name": "  Cora   Coder ",
                                         "email": "cora@example.org", "language": "zh-hans"})
    assert response.status_code == 302
    cora.refresh_from_db()
    assert (cora.get_full_name(), cora.email, stored_language(cora)) == (
        "Cora Coder", "cora@example.org", "zh-hans")
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/").content.decode()
    assert 'Cora Coder <span class="muted">(cora)</span>' in page


def test_an_address_another_account_uses_is_refused(people, client_for):
    people["cyril"].email = "shared@example.org"
    people["cyril"].save()
    response = client_for(people["cora"]).post("/account/", {
        "display_name": "", "email": "SHARED@example.org", "language": "en"})
    assert response.status_code == 400 and "Another account uses this address" in \
        response.content.decode()


def test_a_password_change_needs_the_old_password(people, client_for):
    cora = people["cora"]
    cora.set_password("old-secret-123")
    cora.save()
    client = client_for(cora)
    wrong = client.post("/account/password/", {"old_password": "nope", "new_password1":
                                               "fresh-secret-456", "new_password2":
                                               "fresh-secret-456"})
    assert wrong.status_code == 200 and "incorrect" in wrong.content.decode()
    done = client.post("/account/password/", {"old_password": "old-secret-123",
                                              "new_password1": "fresh-secret-456",
                                              "new_password2": "fresh-secret-456"})
    assert done.status_code == 302
    cora.refresh_from_db()
    assert cora.check_password("fresh-secret-456")
    assert client.get("/account/").status_code == 200  # still logged in here


def test_without_a_mail_server_the_reset_page_says_whom_to_ask(people, client, settings):
    settings.EMAIL_HOST = ""
    people["cora"].email = "cora@example.org"
    people["cora"].save()
    page = client.get("/password_reset/").content.decode()
    assert "sends no mail" in page and 'name="email"' not in page
    client.post("/password_reset/", {"email": "cora@example.org"})
    assert mail.outbox == []


def test_a_mailed_reset_link_sets_a_new_password_once(people, client, settings):
    settings.EMAIL_HOST = "mail.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    cora = people["cora"]
    cora.email = "cora@example.org"
    cora.save()
    assert "Forgot your password?" in client.get("/login/").content.decode()
    assert client.post("/password_reset/", {"email": "cora@example.org"}).status_code == 302
    [sent] = mail.outbox
    link = re.search(r"https?://[^/]+(/reset/\S+/)", sent.body).group(1)
    assert set_password(client, link, "brand-new-pass-789")
    cora.refresh_from_db()
    assert cora.check_password("brand-new-pass-789")
    assert not set_password(client, link, "another-pass-000")  # used: it works once


def set_password(client, link, password):
    """Follow a reset link and set `password`; whether the link still worked."""
    form = client.get(link, follow=True)
    if "This link no longer works" in form.content.decode():
        return False
    done = client.post(form.redirect_chain[-1][0], {"new_password1": password,
                                                    "new_password2": password})
    return done.status_code == 302


# --- an owner's reset link ---------------------------------------------------------------

def membership(study, user, role=Role.CODER):
    return study.memberships.get(user=user, role=role)


def test_an_owner_makes_a_one_time_reset_link_for_a_member_of_their_study_only(
        alpha, people, client_for, client):
    olive = client_for(people["olive"])
    cora = membership(alpha, people["cora"])
    page = olive.post(f"/studies/{alpha.slug}/members/{cora.pk}/reset-link/")
    assert page.status_code == 201 and page["Cache-Control"] == "no-store"
    link = re.search(r'id="reset-link">https?://[^/]+(/reset/[^<]+/)<', page.content.decode())
    entry = AuditEntry.objects.get(action="member.reset_link")
    assert entry.details["user"] == "cora" and link.group(1) not in str(entry.details)
    client.logout()
    assert set_password(client, link.group(1), "set-by-link-321")
    people["cora"].refresh_from_db()
    assert people["cora"].check_password("set-by-link-321")
    assert not set_password(client, link.group(1), "again-654")
    # The API makes one the same way; the link is in that answer only.
    api = client_for(people["olive"]).post(
        f"/api/studies/{alpha.slug}/members/{cora.pk}/reset-link/")
    assert api.status_code == 201 and "/reset/" in api.json()["url"]


@pytest.mark.parametrize("case", ["works_elsewhere", "owns_elsewhere", "staff", "co_owner",
                                  "self"])
def test_no_reset_link_hands_over_someone_who_works_elsewhere(alpha, beta, people, client_for,
                                                              case):
    """An owner of alpha must not take over an account that holds any role in a study they
    do not own (beta is otto's), an administrator's, a co-owner's or their own."""
    target, role = people["cyril"], Role.CODER
    if case == "works_elsewhere":
        factories.member(beta, target, Role.ADJUDICATOR)
    elif case == "owns_elsewhere":
        factories.member(beta, target, Role.OWNER)
    elif case == "staff":
        target.is_staff = True
        target.save()
    elif case == "co_owner":
        factories.member(alpha, target, Role.OWNER)
        role = Role.OWNER
    else:
        target, role = people["olive"], Role.OWNER
    held = membership(alpha, target, role)
    client = client_for(people["olive"])
    page = client.post(f"/studies/{alpha.slug}/members/{held.pk}/reset-link/", follow=True)
    assert "reset-link" not in page.content.decode().split("<table")[0]
    api = client.post(f"/api/studies/{alpha.slug}/members/{held.pk}/reset-link/")
    assert api.status_code == 409 and api.json()["detail"]
    assert not AuditEntry.objects.filter(action="member.reset_link").exists()


def test_only_owners_make_reset_links(alpha, people, client_for):
    cora = membership(alpha, people["cora"])
    for who in ("ada", "vera", "cyril"):
        client = client_for(people[who])
        assert client.post(f"/studies/{alpha.slug}/members/{cora.pk}/reset-link/"
                           ).status_code == 403
        assert client.post(f"/api/studies/{alpha.slug}/members/{cora.pk}/reset-link/"
                           ).status_code == 403
    assert client_for(people["otto"]).post(
        f"/api/studies/{alpha.slug}/members/{cora.pk}/reset-link/").status_code == 404


def test_a_reset_token_never_reaches_the_log():
    import logging

    from workbench.logfilters import RedactedInviteLinks

    record = logging.LogRecord("django.server", logging.INFO, "", 0, '"%s" %s %s',
                               ("GET /reset/Mw/cz9x-1a2b3c4d5e6f/ HTTP/1.1", "302", "0"), None)
    RedactedInviteLinks().filter(record)
    assert record.getMessage() == '"GET /reset/Mw/…/ HTTP/1.1" 302 0'


# --- who may create studies --------------------------------------------------------------

def test_staff_let_a_colleague_create_studies_on_a_page(people, client_for):
    boss = get_user_model().objects.create_user("boss", is_staff=True)
    cora = people["cora"]
    assert not cora.has_perm("coding.create_study")
    for who in ("olive", "cora"):
        assert client_for(people[who]).get("/staff/creators/").status_code == 403
    client = client_for(boss)
    page = client.get("/staff/creators/", {"q": "cor"}).content.decode()
    assert "cora" in page and "cyril" not in page
    assert client.post("/staff/creators/", {"user": cora.pk, "grant": "yes"}).status_code == 302
    cora = get_user_model().objects.get(pk=cora.pk)
    assert cora.has_perm("coding.create_study")
    assert client_for(cora).get("/studies/new/").status_code == 200
    entry = AuditEntry.objects.get(action="permission.grant")
    assert entry.actor == boss and entry.study is None
    client = client_for(boss)  # the test client logged cora in just above
    client.post("/staff/creators/", {"user": cora.pk, "grant": "no"})
    assert not get_user_model().objects.get(pk=cora.pk).has_perm("coding.create_study")


def test_the_creators_page_pages_accounts_by_name_in_fixed_queries(people, client_for,
                                                                    django_assert_max_num_queries):
    from coding.studies import creators

    boss = get_user_model().objects.create_user("boss", is_staff=True)
    client = client_for(boss)
    for n in range(creators.PER_PAGE + 20):
        get_user_model().objects.create_user(f"zz-user-{n:03d}")
    with django_assert_max_num_queries(12):
        first = client.get("/staff/creators/").content.decode()
    after = re.search(r"after=([^\"&]+)", first).group(1)
    with django_assert_max_num_queries(12):
        second = client.get(f"/staff/creators/?after={after}").content.decode()
    assert "zz-user-119" in second and "zz-user-119" not in first


def test_the_command_grants_through_the_same_code(people):
    call_command("grant_study_creation", "cyril", stdout=open("/dev/null", "w"))
    assert get_user_model().objects.get(username="cyril").has_perm("coding.create_study")
    assert AuditEntry.objects.filter(action="permission.grant", actor=None).exists()


def test_a_refusal_reads_in_the_readers_language_with_roles_in_words(alpha, people,
                                                                     client_for, settings):
    """Issue 39, finding 6: the 403 page said "This needs the role adjudicator or owner in …"
    in English to a coder reading in Chinese."""
    from django.test import Client

    from coding.accounts.languages import remember_language

    remember_language(people["cora"], "zh-hans")
    page = client_for(people["cora"]).get(f"/studies/{alpha.slug}/members/")
    assert page.status_code == 403
    assert f"这需要在 {alpha.name} 中担任所有者。" in page.content.decode()
    other = Client()  # a browser of its own: no language cookie from cora's pages
    other.force_login(people["cyril"])
    english = other.get(f"/studies/{alpha.slug}/review/")
    assert "This needs the role adjudicator or owner in" in english.content.decode()

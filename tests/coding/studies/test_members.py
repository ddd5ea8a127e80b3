"""Members and invitations: owners only change who is in a study; invite links work once.

The people are those of tests/conftest.py: olive owns alpha, cora and cyril code, ada
adjudicates, vera views, otto is a coder of beta only. Invitees are made up here.
"""

import re
import threading
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from coding.labeling import queue
from coding.models import Assignment, AuditEntry, Coding, Invite, Item, Membership, Role
from coding.studies import members
from tests import factories
from tests.test_csp import inline_code

User = get_user_model()
STRONG = "quiet-harbour-lantern-42"


def members_url(study):
    return f"/studies/{study.slug}/members/"


def api_members(study):
    return f"/api/studies/{study.slug}/members/"


def api_invites(study):
    return f"/api/studies/{study.slug}/invites/"


def invite(study, people, role=Role.CODER, **fields):
    return members.create_invite(study, role, people["olive"], **fields)


def as_json(client, method, url, body=None):
    return getattr(client, method)(url, body or {}, content_type="application/json")


def live_roles(study, user):
    return sorted(study.roles_of(user))


# --- who may change members ----------------------------------------------------------------

def test_a_coder_cannot_make_themself_owner_or_adjudicator(alpha, people, client_for):
    cora = client_for(people["cora"])
    for role in (Role.OWNER, Role.ADJUDICATOR):
        page = cora.post(members_url(alpha), {"person": "cora", "role": role})
        api = as_json(cora, "post", api_members(alpha), {"username": "cora", "role": role})
        assert (page.status_code, api.status_code) == (403, 403)
    mine = alpha.memberships.get(user=people["cora"])
    assert as_json(cora, "patch", f"{api_members(alpha)}{mine.pk}/",
                   {"role": Role.OWNER}).status_code == 403
    assert cora.post(f"{members_url(alpha)}{mine.pk}/role/", {"role": "owner"}).status_code == 403
    assert as_json(cora, "post", api_invites(alpha), {"role": Role.OWNER}).status_code == 403
    assert cora.post(f"/studies/{alpha.slug}/invites/", {"role": "owner", "days": 7}
                     ).status_code == 403
    assert live_roles(alpha, people["cora"]) == [Role.CODER]
    assert not Invite.objects.exists() and not AuditEntry.objects.exists()


def test_an_owner_of_one_study_cannot_touch_another(alpha, beta, people, client_for):
    olive = client_for(people["olive"])
    assert olive.post(f"/studies/{beta.slug}/invites/", {"role": "coder", "days": 7}
                      ).status_code == 404
    assert as_json(olive, "post", api_invites(beta), {"role": "coder"}).status_code == 404
    assert olive.get(members_url(beta)).status_code == 404
    # beta's membership through alpha's address: not alpha's, so not found
    otto = beta.memberships.get(user=people["otto"])
    assert as_json(olive, "delete", f"{api_members(alpha)}{otto.pk}/").status_code == 404
    assert olive.post(f"{members_url(alpha)}{otto.pk}/remove/").status_code == 404
    beta_invite, _ = members.create_invite(beta, Role.CODER, people["otto"])
    assert as_json(olive, "delete", f"{api_invites(alpha)}{beta_invite.pk}/").status_code == 404
    assert olive.post(f"/studies/{alpha.slug}/invites/{beta_invite.pk}/revoke/").status_code == 404
    otto.refresh_from_db()
    beta_invite.refresh_from_db()
    assert otto.deleted_at is None and beta_invite.revoked_at is None
    assert not Invite.objects.filter(study=beta).exclude(pk=beta_invite.pk).exists()


def test_other_members_cannot_list_invites_or_see_the_page(alpha, people, client_for):
    invite(alpha, people, note="Nadia")
    for name in ("cora", "ada", "vera"):
        client = client_for(people[name])
        assert client.get(members_url(alpha)).status_code == 403
        assert client.get(api_invites(alpha)).status_code == 403
    assert client_for(people["otto"]).get(api_invites(alpha)).status_code == 404


# --- invites: the token ---------------------------------------------------------------------

def test_an_invite_link_works_once(alpha, people):
    _, token = invite(alpha, people)
    nadia = Client()
    joined = nadia.post(f"/invite/{token}/", {"username": "nadia", "password1": STRONG,
                                              "password2": STRONG})
    assert joined.status_code == 302 and joined["Location"] == f"/studies/{alpha.slug}/"
    assert nadia.get(joined["Location"]).status_code == 200  # logged in, a coder of alpha
    # Replayed: by the same browser, someone else, or over the API.
    again = Client().post(f"/invite/{token}/", {"username": "mallory", "password1": STRONG,
                                                "password2": STRONG})
    assert again.status_code == 410 and b"already used" in again.content
    assert Client().get(f"/invite/{token}/", follow=True).status_code == 410
    api = as_json(Client(), "post", "/api/invites/accept/",
                  {"token": token, "username": "mallory", "password": STRONG})
    assert api.status_code == 410
    signed_in = Client()
    signed_in.force_login(people["otto"])
    assert signed_in.post(f"/invite/{token}/").status_code == 410
    assert list(User.objects.filter(username__in=["nadia", "mallory"]).values_list(
        "username", flat=True)) == ["nadia"]
    assert live_roles(alpha, people["otto"]) == []


def accept_in_parallel(token, name, results):
    try:
        results[name] = as_json(Client(), "post", "/api/invites/accept/",
                                {"token": token, "username": name, "password": STRONG}
                                ).status_code
    finally:
        connections.close_all()


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="the row lock decides between threads on PostgreSQL; SQLite "
                           "serialises writers (the sequential replay below)")
def test_parallel_uses_of_one_invite_make_one_account(transactional_db):
    owner = factories.user("owen")
    study = factories.study("Parallel study", owner=owner)
    factories.member(study, owner, Role.OWNER)
    _, token = members.create_invite(study, Role.CODER, owner)
    results = {}
    threads = [threading.Thread(target=accept_in_parallel, args=(token, f"racer{n}", results))
               for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results.values()) == [201] + [410] * 7
    assert User.objects.filter(username__startswith="racer").count() == 1
    assert study.memberships.filter(role=Role.CODER).count() == 1


def test_a_second_use_after_the_first_makes_no_account(alpha, people):
    _, token = invite(alpha, people)
    first = as_json(Client(), "post", "/api/invites/accept/",
                    {"token": token, "username": "first", "password": STRONG})
    second = as_json(Client(), "post", "/api/invites/accept/",
                     {"token": token, "username": "second", "password": STRONG})
    assert (first.status_code, second.status_code) == (201, 410)
    assert first.json()["study"] == alpha.slug and first.json()["role"] == Role.CODER
    assert not User.objects.filter(username="second").exists()
    assert alpha.memberships.filter(user__username="first", role=Role.CODER).count() == 1


def test_an_expired_link_is_gone(alpha, people):
    made, token = invite(alpha, people, days=1)
    Invite.objects.filter(pk=made.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    page = Client().get(f"/invite/{token}/", follow=True)
    assert page.status_code == 410 and b"expired" in page.content
    posted = Client().post(f"/invite/{token}/", {"username": "late", "password1": STRONG,
                                                 "password2": STRONG})
    api = as_json(Client(), "post", "/api/invites/accept/",
                  {"token": token, "username": "late", "password": STRONG})
    assert (posted.status_code, api.status_code) == (410, 410)
    assert not User.objects.filter(username="late").exists()


def test_a_revoked_link_is_gone(alpha, people, client_for):
    made, token = invite(alpha, people)
    olive = client_for(people["olive"])
    assert olive.post(f"/studies/{alpha.slug}/invites/{made.pk}/revoke/").status_code == 302
    assert as_json(olive, "delete", f"{api_invites(alpha)}{made.pk}/").status_code == 204
    assert Client().get(f"/invite/{token}/", follow=True).status_code == 410
    assert AuditEntry.objects.filter(action="invite.revoke").count() == 1  # revoked once


def test_a_used_invite_cannot_be_revoked(alpha, people, client_for):
    made, token = invite(alpha, people)
    members.accept_invite(token, user=people["otto"])
    answer = as_json(client_for(people["olive"]), "delete", f"{api_invites(alpha)}{made.pk}/")
    assert answer.status_code == 409
    made.refresh_from_db()
    assert made.revoked_at is None and made.used_by == people["otto"]


def test_unknown_tokens_are_not_found_and_say_nothing(alpha, people, settings):
    """And guessing is throttled as guessing passwords is: after AXES_FAILURE_LIMIT
    refused tokens the address gets 429 (issue 36, 7: acceptance was not throttled)."""
    invite(alpha, people)
    guesses = ["A" * 43, "x", "../../admin", members.token_hash("nothing")[:43],
               *[__import__("secrets").token_urlsafe(32) for _ in range(20)]]
    for n, guess in enumerate(guesses):
        page = Client().get(f"/invite/{guess}/", follow=True)
        api = as_json(Client(), "post", "/api/invites/accept/",
                      {"token": guess, "username": "guesser", "password": STRONG})
        expected = 404 if n < settings.AXES_FAILURE_LIMIT else 429
        assert (page.status_code, api.status_code) == (404, expected), guess
        for body in (page.content, api.content):
            assert b"Alpha" not in body and b"coder" not in body.lower()
    assert not User.objects.filter(username="guesser").exists()


def test_a_username_is_checked_only_for_a_live_invite(alpha, people):
    """Issue 36, 7: with any token, a taken username was named as existing."""
    probe = as_json(Client(), "post", "/api/invites/accept/",
                    {"token": "B" * 43, "username": "cora", "password": STRONG})
    assert probe.status_code == 404 and b"already exists" not in probe.content


def test_the_token_is_kept_nowhere_in_clear(alpha, people, client_for, settings):
    settings.EMAIL_HOST = ""
    olive = client_for(people["olive"])
    page = olive.post(f"/studies/{alpha.slug}/invites/", {"role": "coder", "note": "Nadia",
                                                          "days": 7})
    assert page.status_code == 201 and page["Cache-Control"] == "no-store"
    shown = re.search(r"/invite/([A-Za-z0-9_-]{43})/", page.content.decode()).group(1)
    api = as_json(olive, "post", api_invites(alpha), {"role": "viewer", "note": "Pim"})
    assert api.status_code == 201
    out = StringIO()
    call_command("invite", alpha.slug, "adjudicator", stdout=out)
    tokens = [shown, api.json()["token"], out.getvalue().strip().rsplit("/", 2)[-2]]
    assert api.json()["link"].endswith(f"/invite/{tokens[1]}/")
    # Every row of every table, as text, holds none of them; the hashes are there.
    dump = database_text()
    for token in tokens:
        assert token not in dump
        assert members.token_hash(token) in dump
    # Nor does any later answer show them again: the members page, the invite list.
    later = olive.get(members_url(alpha)).content.decode() + olive.get(api_invites(alpha)).content.decode()
    assert not any(token in later for token in tokens)
    assert all(token not in str(entry.details) for entry in AuditEntry.objects.all()
               for token in tokens)
    # And each one works, in the browser (which logs the new account in) or the API;
    # the used tokens are not kept either (django-axes logs each login's path).
    assert Client().post(f"/invite/{tokens[0]}/", {"username": "new0", "password1": STRONG,
                                                   "password2": STRONG}).status_code == 302
    for n, token in enumerate(tokens[1:], 1):
        assert as_json(Client(), "post", "/api/invites/accept/",
                       {"token": token, "username": f"new{n}", "password": STRONG}
                       ).status_code == 201
    dump = database_text()
    assert "new0" in dump and not any(token in dump for token in tokens)


def database_text():
    rows = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')
            rows += [repr(row) for row in cursor.fetchall()]
    return "\n".join(rows)


# --- invites: accepting ---------------------------------------------------------------------

def test_a_taken_username_is_a_located_error_and_the_invite_stays_usable(alpha, people):
    made, token = invite(alpha, people)
    client = Client()
    taken = client.post(f"/invite/{token}/", {"username": "Cora", "password1": STRONG,
                                              "password2": STRONG})
    assert taken.status_code == 400
    errors = taken.context["form"].errors
    assert list(errors) == ["username"] and "already exists" in errors["username"][0]
    api = as_json(Client(), "post", "/api/invites/accept/",
                  {"token": token, "username": "cora", "password": STRONG})
    assert api.status_code == 400 and list(api.json()) == ["username"]
    made.refresh_from_db()
    assert made.used_at is None and members.invite_state(made) == members.PENDING
    joined = client.post(f"/invite/{token}/", {"username": "nadia", "password1": STRONG,
                                               "password2": STRONG})
    assert joined.status_code == 302


def test_passwords_follow_djangos_rules(alpha, people):
    _, token = invite(alpha, people)
    weak = Client().post(f"/invite/{token}/", {"username": "nadia", "password1": "password",
                                               "password2": "password"})
    assert weak.status_code == 400 and "password2" in weak.context["form"].errors
    api = as_json(Client(), "post", "/api/invites/accept/",
                  {"token": token, "username": "nadia", "password": "12345678"})
    assert api.status_code == 400 and list(api.json()) == ["password"]
    missing = as_json(Client(), "post", "/api/invites/accept/", {"token": token})
    assert missing.status_code == 400 and set(missing.json()) == {"username", "password"}
    assert not User.objects.filter(username="nadia").exists()


def test_the_new_account_is_logged_in_and_lands_on_the_study(alpha, people):
    made, token = invite(alpha, people, email="nadia@example.org")
    browser = Client()
    form = browser.get(f"/invite/{token}/", follow=True)
    assert form.status_code == 200
    assert b"Alpha study" in form.content and b"coder" in form.content
    landed = browser.post(f"/invite/{token}/", {"username": "nadia", "password1": STRONG,
                                                "password2": STRONG}, follow=True)
    assert landed.redirect_chain[-1][0] == f"/studies/{alpha.slug}/"
    assert landed.context["user"].username == "nadia"
    nadia = User.objects.get(username="nadia")
    assert nadia.email == "nadia@example.org" and nadia.check_password(STRONG)
    made.refresh_from_db()
    assert made.used_by == nadia and made.used_at is not None
    assert browser.get(f"/studies/{alpha.slug}/code/").status_code == 200  # a coder now
    use = AuditEntry.objects.get(action="invite.use")
    assert (use.actor, use.details["new_account"], use.details["role"]) == (nadia, True, "coder")


def test_a_signed_in_person_joins_with_their_own_account(alpha, people, client_for):
    _, token = invite(alpha, people, role=Role.VIEWER)
    otto = client_for(people["otto"])
    page = otto.get(f"/invite/{token}/", follow=True)
    assert page.status_code == 200 and b"Join as otto" in page.content
    assert otto.post(f"/invite/{token}/").status_code == 302
    assert live_roles(alpha, people["otto"]) == [Role.VIEWER]
    # Over the API with a token of one's own, the invite's token alone.
    _, second = invite(alpha, people, role=Role.ADJUDICATOR)
    api = as_json(otto, "post", "/api/invites/accept/", {"token": second})
    assert api.status_code == 201 and api.json()["username"] == "otto"
    assert live_roles(alpha, people["otto"]) == [Role.ADJUDICATOR, Role.VIEWER]


def test_an_invite_for_a_role_already_held_is_left_for_someone_else(alpha, people, client_for):
    made, token = invite(alpha, people)
    answer = client_for(people["cora"]).post(f"/invite/{token}/")
    assert answer.status_code == 400 and b"already are coder" in answer.content
    made.refresh_from_db()
    assert made.used_at is None


def test_an_archived_study_takes_no_one_through_its_links(alpha, people):
    _, token = invite(alpha, people)
    alpha.archived_at = timezone.now()
    alpha.save()
    assert Client().get(f"/invite/{token}/", follow=True).status_code == 410
    alpha.deleted_at = timezone.now()
    alpha.save()
    assert Client().get(f"/invite/{token}/", follow=True).status_code == 404  # gone entirely: as unknown


def test_the_link_is_mailed_only_when_a_mail_server_is_set(alpha, people, client_for, settings):
    olive = client_for(people["olive"])
    settings.EMAIL_HOST = ""
    as_json(olive, "post", api_invites(alpha), {"role": "coder", "email": "nadia@example.org"})
    assert mail.outbox == []
    settings.EMAIL_HOST = "smtp.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    answer = as_json(olive, "post", api_invites(alpha),
                     {"role": "coder", "email": "nadia@example.org"})
    assert answer.json()["mailed"] is True
    (sent,) = mail.outbox
    assert sent.to == ["nadia@example.org"] and answer.json()["link"] in sent.body
    assert "Alpha study" in sent.subject
    page = olive.post(f"/studies/{alpha.slug}/invites/", {"role": "coder", "days": 3})
    assert page.status_code == 201 and len(mail.outbox) == 1  # no address: nothing mailed


def test_invite_lifetime_is_bounded(alpha, people, client_for):
    olive = client_for(people["olive"])
    for days in (0, 31, -1):
        api = as_json(olive, "post", api_invites(alpha), {"role": "coder", "days": days})
        assert api.status_code == 400 and list(api.json()) == ["days"]
        page = olive.post(f"/studies/{alpha.slug}/invites/", {"role": "coder", "days": days})
        assert page.status_code == 400 and "days" in page.context["invite_form"].errors
    made = as_json(olive, "post", api_invites(alpha), {"role": "coder"}).json()
    assert made["state"] == "pending"
    lasts = Invite.objects.get(pk=made["id"])
    assert timedelta(days=7) - (lasts.expires_at - lasts.created_at) < timedelta(seconds=5)
    assert Invite.objects.count() == 1


def test_owners_list_invites_by_state(alpha, people, client_for):
    used, token = invite(alpha, people, note="Used one")
    members.accept_invite(token, user=people["otto"])
    revoked, _ = invite(alpha, people, note="Revoked one")
    members.revoke_invite(revoked, people["olive"])
    invite(alpha, people, note="Waiting one")
    olive = client_for(people["olive"])
    rows = olive.get(api_invites(alpha)).json()["results"]
    assert {row["note"]: row["state"] for row in rows} == {
        "Used one": "used", "Revoked one": "revoked", "Waiting one": "pending"}
    assert all("token" not in row for row in rows)
    page = olive.get(members_url(alpha)).content.decode()
    assert "Waiting one" in page.split("<h2>History</h2>")[0]
    assert "Revoked one" not in page.split("<h2>History</h2>")[0]


# --- members ------------------------------------------------------------------------------

def test_add_by_username_or_email_change_and_remove(alpha, people, client_for):
    nadia = factories.user("nadia")
    nadia.email = "Nadia@Example.org"
    nadia.save()
    olive = client_for(people["olive"])
    assert olive.post(members_url(alpha), {"person": "nadia@example.org", "role": "coder"}
                      ).status_code == 302
    row = alpha.memberships.get(user=nadia)
    changed = as_json(olive, "patch", f"{api_members(alpha)}{row.pk}/", {"role": "adjudicator"})
    assert changed.status_code == 200 and changed.json()["role"] == "adjudicator"
    assert live_roles(alpha, nadia) == [Role.ADJUDICATOR]
    assert as_json(olive, "delete", f"{api_members(alpha)}{changed.json()['id']}/"
                   ).status_code == 204
    assert live_roles(alpha, nadia) == []
    # Added again: the same row comes back.
    again = as_json(olive, "post", api_members(alpha), {"username": "nadia", "role": "coder"})
    assert again.status_code == 201 and again.json()["id"] == row.pk
    assert Membership.objects.filter(study=alpha, user=nadia).count() == 2  # coder, adjudicator
    history = [(e.action, e.actor.username) for e in AuditEntry.objects.order_by("at", "id")]
    assert history == [("member.add", "olive"), ("member.role", "olive"),
                       ("member.remove", "olive"), ("member.add", "olive")]
    page = olive.get(members_url(alpha)).content.decode()
    for words in ("added <b>nadia</b> as coder", "made <b>nadia</b> adjudicator instead of coder",
                  "removed <b>nadia</b> as adjudicator", "gave back <b>nadia</b> as coder"):
        assert words in page


def test_adding_names_what_is_wrong(alpha, people, client_for):
    olive = client_for(people["olive"])
    unknown = olive.post(members_url(alpha), {"person": "nobody", "role": "coder"})
    assert unknown.status_code == 400 and "person" in unknown.context["add_form"].errors
    held = as_json(olive, "post", api_members(alpha), {"username": "cora", "role": "coder"})
    assert held.status_code == 400 and list(held.json()) == ["role"]
    both = as_json(olive, "post", api_members(alpha),
                   {"username": "cora", "email": "c@example.org", "role": "viewer"})
    assert both.status_code == 400
    bad_role = as_json(olive, "post", api_members(alpha), {"username": "otto", "role": "boss"})
    assert bad_role.status_code == 400 and list(bad_role.json()) == ["role"]
    assert live_roles(alpha, people["otto"]) == []


def test_the_last_owner_cannot_be_removed_or_demoted(alpha, people, client_for):
    olive = client_for(people["olive"])
    mine = alpha.memberships.get(user=people["olive"], role=Role.OWNER)
    assert as_json(olive, "delete", f"{api_members(alpha)}{mine.pk}/").status_code == 409
    assert as_json(olive, "patch", f"{api_members(alpha)}{mine.pk}/",
                   {"role": "coder"}).status_code == 409
    listed = olive.get(members_url(alpha)).content.decode()
    assert "The study's only owner" in listed and "Remove olive as owner" not in listed
    page = olive.post(f"{members_url(alpha)}{mine.pk}/remove/", follow=True)
    assert b"needs an owner" in page.content
    olive.post(f"{members_url(alpha)}{mine.pk}/role/", {"role": "viewer"})
    assert live_roles(alpha, people["olive"]) == [Role.OWNER]
    assert not AuditEntry.objects.exists()
    # With a second owner, either may go.
    members.add_member(alpha, people["ada"], Role.OWNER, people["olive"])
    assert as_json(olive, "delete", f"{api_members(alpha)}{mine.pk}/").status_code == 204
    ada_owner = alpha.memberships.get(user=people["ada"], role=Role.OWNER)
    with pytest.raises(members.Refused):
        members.remove_member(ada_owner, people["ada"])


def test_removing_a_coder_returns_their_item_to_the_pool(alpha, people, client_for):
    cora = people["cora"]
    done, held = alpha.papers[0], alpha.papers[1]
    factories.code(done, cora)  # submitted: stays
    assignment = queue.next_item(alpha, cora)
    assert assignment.item_id != done.pk
    Assignment.objects.filter(pk=assignment.pk).update(draft={"values": {"label": "analysis"}})
    before = {i.pk: i.taken for i in Item.objects.filter(study=alpha)}
    row = alpha.memberships.get(user=cora, role=Role.CODER)
    assert client_for(people["olive"]).post(f"{members_url(alpha)}{row.pk}/remove/"
                                            ).status_code == 302
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RELEASED
    assert assignment.draft == {"values": {"label": "analysis"}}  # kept, as for a lapsed lease
    after = {i.pk: i.taken for i in Item.objects.filter(study=alpha)}
    assert after[assignment.item_id] == before[assignment.item_id] - 1
    assert after[done.pk] == before[done.pk]
    # Item.taken is what the assignments say.
    for item in Item.objects.filter(study=alpha):
        assert item.taken == item.assignments.filter(
            status__in=[Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED]).count()
    assert Coding.objects.filter(assignment__coder=cora).count() == 1
    # Another coder can take the item now; for cora the study is gone (her only role).
    assert queue.next_item(alpha, people["cyril"]) is not None
    client = client_for(cora)
    assert client.get(f"/studies/{alpha.slug}/code/").status_code == 404
    assert AuditEntry.objects.get(action="member.remove").details["released"] == 1


def test_demoting_a_coder_releases_their_item_too(alpha, people, client_for):
    held = queue.next_item(alpha, people["cyril"])
    row = alpha.memberships.get(user=people["cyril"], role=Role.CODER)
    answer = as_json(client_for(people["olive"]), "patch", f"{api_members(alpha)}{row.pk}/",
                     {"role": "viewer"})
    assert answer.status_code == 200
    held.refresh_from_db()
    assert held.status == Assignment.Status.RELEASED
    assert Item.objects.get(pk=held.item_id).taken == 0


def test_coders_still_see_pseudonyms_in_the_member_list(alpha, people, client_for):
    rows = client_for(people["cora"]).get(api_members(alpha)).json()["results"]
    names = {row["username"] for row in rows}
    assert "you" in names and "olive" not in names and "cyril" not in names
    assert all(isinstance(row["id"], int) for row in rows)


# --- commands -----------------------------------------------------------------------------

def test_add_member_command(alpha, people):
    out = StringIO()
    call_command("add_member", alpha.slug, "otto", "viewer", stdout=out)
    assert live_roles(alpha, people["otto"]) == [Role.VIEWER]
    call_command("add_member", alpha.slug, "otto", "viewer", "--remove", stdout=out)
    assert live_roles(alpha, people["otto"]) == []
    with pytest.raises(CommandError, match="needs an owner"):
        call_command("add_member", alpha.slug, "olive", "owner", "--remove")
    with pytest.raises(CommandError, match="No account"):
        call_command("add_member", alpha.slug, "nobody", "coder")
    with pytest.raises(CommandError, match="No study"):
        call_command("add_member", "no-such-study", "otto", "coder")
    entries = AuditEntry.objects.order_by("id")
    assert [(e.action, e.actor) for e in entries] == [("member.add", None),
                                                      ("member.remove", None)]


def test_invite_command_prints_a_working_link(alpha, people, settings):
    settings.WORKBENCH_BASE_URL = "https://workbench.example.org"
    out = StringIO()
    call_command("invite", alpha.slug, "coder", "--note", "Nadia", "--days", "3", stdout=out)
    link = out.getvalue().strip()
    assert link.startswith("https://workbench.example.org/invite/")
    made = Invite.objects.get()
    assert (made.note, made.role) == ("Nadia", "coder")
    assert timedelta(days=3) - (made.expires_at - made.created_at) < timedelta(seconds=5)
    token = link.rstrip("/").rsplit("/", 1)[-1]
    assert Client().get(f"/invite/{token}/", follow=True).status_code == 200
    with pytest.raises(CommandError, match="1 to 30 days"):
        call_command("invite", alpha.slug, "coder", "--days", "31")


# --- the pages as pages ---------------------------------------------------------------------

def test_the_members_page_costs_the_same_with_more_members(alpha, people, client_for):
    olive = client_for(people["olive"])
    olive.get(members_url(alpha))

    def count():
        with CaptureQueriesContext(connection) as queries:
            assert olive.get(members_url(alpha)).status_code == 200
        return len(queries)

    small = count()
    for n in range(15):
        person = factories.user(f"extra{n}")
        members.add_member(alpha, person, Role.CODER, people["olive"])
        members.create_invite(alpha, Role.VIEWER, people["olive"], note=f"guest {n}")
        if n % 2:
            members.remove_member(alpha.memberships.get(user=person), people["olive"])
    assert count() == small


def test_the_pages_hold_no_inline_code(alpha, people, client_for):
    _, token = invite(alpha, people)
    olive = client_for(people["olive"])
    pages = [olive.get(members_url(alpha)),
             olive.post(f"/studies/{alpha.slug}/invites/", {"role": "coder", "days": 7}),
             Client().get(f"/invite/{token}/", follow=True),
             olive.get(f"/invite/{token}/", follow=True),
             Client().get("/invite/not-a-token-at-all-not-at-all/")]
    for page in pages:
        assert inline_code(page.content.decode()) == [], page.request["PATH_INFO"]


def test_an_owner_who_steps_down_lands_where_they_still_belong(alpha, people, client_for):
    members.add_member(alpha, people["ada"], Role.OWNER, people["olive"])
    olive = client_for(people["olive"])
    mine = alpha.memberships.get(user=people["olive"], role=Role.OWNER)
    moved = olive.post(f"{members_url(alpha)}{mine.pk}/role/", {"role": "viewer"})
    assert moved["Location"] == f"/studies/{alpha.slug}/"  # a viewer now: the members page is not hers
    viewer = alpha.memberships.get(user=people["olive"], role=Role.VIEWER)
    assert olive.post(f"{members_url(alpha)}{viewer.pk}/remove/").status_code == 403
    ada = client_for(people["ada"])
    ada_owner = alpha.memberships.get(user=people["ada"], role=Role.OWNER)
    refused = ada.post(f"{members_url(alpha)}{ada_owner.pk}/role/", {"role": "coder"})
    assert refused["Location"] == members_url(alpha)  # the last owner now: refused, stays
    left = ada.post(f"{members_url(alpha)}{viewer.pk}/remove/")
    assert left["Location"] == members_url(alpha)
    assert live_roles(alpha, people["olive"]) == []


def test_an_invite_link_leaves_the_address_and_the_log(alpha, people, caplog):
    """Issue 36, 7: a live invite token was written to the request log when the invitee
    opened /invite/<token>/, and stayed in the address bar, the history and Referers."""
    import logging

    from workbench.logfilters import RedactedInviteLinks

    _, token = invite(alpha, people)
    browser = Client()
    opened = browser.get(f"/invite/{token}/")
    assert opened.status_code == 302 and opened["Location"] == "/invite/"
    page = browser.get("/invite/")
    assert page.status_code == 200 and token not in page.content.decode()
    joined = browser.post("/invite/", {"username": "nadia", "password1": STRONG,
                                       "password2": STRONG})
    assert joined.status_code == 302
    assert alpha.memberships.filter(user__username="nadia").exists()
    record = logging.LogRecord("django.server", logging.INFO, __file__, 1, '"%s" %s %s',
                               (f"GET /invite/{token}/ HTTP/1.1", "302", "0"), None)
    RedactedInviteLinks().filter(record)
    assert token not in record.getMessage() and "/invite/…/" in record.getMessage()

"""Invitations made over the API are mailed in a language a person reads (issue 20): the
one the request asks for (`language`), else the invitee's chosen one, else the inviter's,
as the page does; the API itself answers in English."""

import pytest
from django.core import mail

from coding.accounts.languages import remember_language
from tests.coding.studies.test_members import api_invites, as_json

CHINESE_SUBJECT = "加入 Alpha study 的邀请"
ENGLISH_SUBJECT_WORDS = "Alpha study"


@pytest.fixture
def mailing(settings):
    settings.EMAIL_HOST = "smtp.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def invite_by_api(study, client, **body):
    answer = as_json(client, "post", api_invites(study),
                     {"role": "coder", "email": "nadia@example.org", **body})
    assert answer.status_code == 201, answer.content
    assert answer.json()["mailed"] is True
    (sent,) = mail.outbox
    return answer, sent


def test_the_language_asked_for_is_the_mail_s(alpha, people, client_for, mailing):
    answer, sent = invite_by_api(alpha, client_for(people["olive"]), language="zh-hans")
    assert sent.subject == CHINESE_SUBJECT and "您受邀以编码员身份参加" in sent.body
    assert answer.json()["role"] == "coder"  # the answer itself stays in English keys


def test_without_one_the_inviter_s_chosen_language_is_used(alpha, people, client_for, mailing):
    remember_language(people["olive"], "zh-hans")
    _, sent = invite_by_api(alpha, client_for(people["olive"]))
    assert sent.subject == CHINESE_SUBJECT


def test_the_invitee_s_own_choice_wins_over_the_inviter_s(alpha, people, client_for, mailing):
    remember_language(people["olive"], "zh-hans")
    otto = people["otto"]
    otto.email = "nadia@example.org"
    otto.save()
    remember_language(otto, "en")
    _, sent = invite_by_api(alpha, client_for(people["olive"]))
    assert sent.subject != CHINESE_SUBJECT and ENGLISH_SUBJECT_WORDS in sent.subject
    # Asked for explicitly, the request's language is the mail's.
    mail.outbox.clear()
    _, sent = invite_by_api(alpha, client_for(people["olive"]), language="zh-hans")
    assert sent.subject == CHINESE_SUBJECT


def test_nobody_chose_a_language_the_site_s_default_is_used(alpha, people, client_for, mailing):
    _, sent = invite_by_api(alpha, client_for(people["olive"]))
    assert sent.subject != CHINESE_SUBJECT and ENGLISH_SUBJECT_WORDS in sent.subject


def test_an_unknown_language_is_refused_naming_the_field(alpha, people, client_for, mailing):
    answer = as_json(client_for(people["olive"]), "post", api_invites(alpha),
                     {"role": "coder", "email": "nadia@example.org", "language": "fr"})
    assert answer.status_code == 400 and "language" in answer.json()
    assert mail.outbox == []


def test_the_schema_documents_the_language_of_an_invite(client):
    schema = client.get("/api/schema/?format=json").json()
    field = schema["components"]["schemas"]["CreateInvite"]["properties"]["language"]
    assert "invitee" in field["description"]
    enum = schema["components"]["schemas"][field["allOf"][0]["$ref"].rsplit("/", 1)[1]]
    assert enum["enum"] == ["en", "zh-hans"]

"""A person's language, remembered per user (coding.accounts.languages): the switcher stores it when
they are signed in, every page of theirs follows it in any browser, the API and a command
read and set it, and a code that is not offered is refused."""

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import translation

from coding.accounts.languages import user_language
from coding.models import LanguagePreference
from tests.factories import PASSWORD

COOKIE = settings.LANGUAGE_COOKIE_NAME
CHINESE_HOME = "编码工作台"


def sign_in(client, user):
    response = client.post("/login/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302
    return client


def test_a_language_chosen_in_one_browser_is_used_in_another_after_sign_in(people):
    first = sign_in(Client(), people["cora"])
    assert first.post("/language/", {"language": "zh-hans", "next": "/"}).status_code == 302
    fresh = sign_in(Client(), people["cora"])  # no cookie of the first browser
    assert COOKIE not in fresh.cookies
    response = fresh.get("/")
    assert '<html lang="zh-hans">' in response.content.decode()
    assert CHINESE_HOME in response.content.decode()
    # The page also sets the cookie, so the next page (even signed out) stays in Chinese.
    assert response.cookies[COOKIE].value == "zh-hans"


def test_the_stored_language_wins_over_a_stale_cookie_and_the_browser(people, client_for):
    LanguagePreference.objects.create(user=people["cora"], language="zh-hans")
    client = client_for(people["cora"])
    client.cookies[COOKIE] = "en"
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert CHINESE_HOME in page


def test_without_a_stored_choice_the_cookie_and_browser_decide(people, client_for):
    client = client_for(people["cora"])
    assert CHINESE_HOME in client.get("/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert CHINESE_HOME not in client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()


def test_switching_back_to_english_is_remembered_too(people, client_for):
    LanguagePreference.objects.create(user=people["cora"], language="zh-hans")
    client = client_for(people["cora"])
    client.post("/language/", {"language": "en", "next": "/"})
    assert user_language(people["cora"]) == "en"
    assert CHINESE_HOME not in sign_in(Client(), people["cora"]).get("/").content.decode()


def test_the_anonymous_switcher_sets_the_cookie_and_stores_nothing(db):
    client = Client()
    response = client.post("/language/", {"language": "zh-hans", "next": "/login/"})
    assert response.status_code == 302 and client.cookies[COOKIE].value == "zh-hans"
    assert '<html lang="zh-hans">' in client.get("/login/").content.decode()
    assert LanguagePreference.objects.count() == 0


@pytest.mark.parametrize("code", ["fr", "zh-HANT", "", "en; DROP"])
def test_the_switcher_refuses_a_language_it_does_not_offer(people, client_for, code):
    client = client_for(people["cora"])
    response = client.post("/language/", {"language": code, "next": "/"})
    assert response.status_code == 400
    assert "Unknown language" in response.content.decode()
    assert "en, zh-hans" in response.content.decode()
    assert COOKIE not in response.cookies
    assert LanguagePreference.objects.count() == 0


def test_user_language_is_the_choice_else_the_default(people):
    assert user_language(people["cora"]) == settings.LANGUAGE_CODE
    LanguagePreference.objects.create(user=people["ada"], language="zh-hans")
    assert user_language(people["ada"]) == "zh-hans"
    with translation.override(user_language(people["ada"])):
        assert translation.gettext("Submit and next") == "提交并继续"


def test_the_api_reads_and_sets_your_own_language(people, client_for,
                                                  django_assert_max_num_queries):
    client = client_for(people["cora"])
    with django_assert_max_num_queries(3):  # session, you with your choice
        assert client.get("/api/account/language/").json() == {
            "language": None, "effective": "en", "choices": ["en", "zh-hans"]}
    response = client.put("/api/account/language/", {"language": "zh-hans"},
                          content_type="application/json")
    assert response.status_code == 200 and response.json()["language"] == "zh-hans"
    assert user_language(people["cora"]) == "zh-hans"
    assert user_language(people["cyril"]) == "en"  # only your own
    response = client.put("/api/account/language/", {"language": None},
                          content_type="application/json")
    assert response.json() == {"language": None, "effective": "en", "choices": ["en", "zh-hans"]}


def test_the_api_refuses_an_unknown_language_by_name(people, client_for):
    client = client_for(people["cora"])
    response = client.put("/api/account/language/", {"language": "klingon"},
                          content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"language": ["Unknown language 'klingon': one of en, zh-hans."]}
    assert LanguagePreference.objects.count() == 0


def test_the_api_documents_the_language_endpoint(people, client_for):
    schema = client_for(people["cora"]).get("/api/schema/?format=json").json()
    operations = schema["paths"]["/api/account/language/"]
    assert set(operations) == {"get", "put"}
    assert "language" in schema["components"]["schemas"]["Language"]["properties"]


def test_the_command_shows_sets_and_forgets(people, capsys):
    call_command("user_language", "cora", "zh-hans")
    assert user_language(people["cora"]) == "zh-hans"
    call_command("user_language", "cora")
    assert "cora: zh-hans" in capsys.readouterr().out
    call_command("user_language", "cora", "--forget")
    assert "none chosen" in capsys.readouterr().out
    with pytest.raises(CommandError, match="Unknown language 'xx'"):
        call_command("user_language", "cora", "xx")

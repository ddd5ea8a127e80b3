"""A model rater's settings: every field checked and named, the API key kept secret."""

import json
import zipfile

import pytest
from django.core.exceptions import ValidationError

from coding.model_raters import config, runs
from coding.models import AuditEntry, ModelSettings
from coding.raters.setup import add_rater
from coding.studies.backup import back_up


@pytest.mark.parametrize("changes, field", [
    ({"base_url": "ftp://example.org/v1"}, "base_url"),
    ({"base_url": "http://user:pw@example.org/v1"}, "base_url"),
    ({"model": ""}, "model"),
    ({"temperature": 3}, "temperature"),
    ({"temperature": "warm"}, "temperature"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"concurrency": 2.5}, "concurrency"),
    ({"concurrency": 64}, "concurrency"),
    ({"api_key_env": "NOT A NAME"}, "api_key_env"),
    ({"output": "xml"}, "output"),
    ({"send_blinded": "yes"}, "send_blinded"),
    ({"colour": "blue"}, "colour"),
])
def test_a_bad_setting_is_refused_by_name_and_nothing_is_saved(team, changes, field):
    rater = add_rater(team["study"], team["owner"], kind="model", name="m", model_version="x")
    with pytest.raises(ValidationError) as refused:
        config.configure(rater, team["owner"], {"base_url": "http://127.0.0.1:1/v1",
                                                "model": "x", **changes})
    assert field in refused.value.message_dict
    assert not ModelSettings.objects.exists()


def test_only_a_model_rater_is_configured(team):
    outside = add_rater(team["study"], team["owner"], kind="outside", name="pilot")
    with pytest.raises(ValidationError, match="only a model rater"):
        config.configure(outside, team["owner"], {"base_url": "http://h/v1", "model": "x"})


@pytest.mark.django_db(transaction=True)
def test_a_stored_key_is_sent_but_never_shown_audited_or_backed_up(team, model_rater, server,
                                                                    tmp_path):
    config.configure(model_rater, team["owner"], {}, api_key="sk-invented-0123456789")
    machine = ModelSettings.objects.get()
    assert "sk-invented" not in machine.api_key_encrypted and machine.api_key_encrypted
    assert config.key_state(machine) == "stored"
    runs.start_run(model_rater, team["owner"], {"q": "2599.00001"})
    assert server.authorizations == ["Bearer sk-invented-0123456789"]
    entries = json.dumps(list(AuditEntry.objects.values("details", "target")))
    assert "sk-invented" not in entries and "api_key" in entries
    back_up(team["study"], tmp_path / "backup.zip")
    with zipfile.ZipFile(tmp_path / "backup.zip") as bundle:
        rows = [bundle.read(n).decode() for n in bundle.namelist() if "modelsettings" in n]
    assert rows and machine.api_key_encrypted not in rows[0]
    assert '"api_key_encrypted": ""' in rows[0]


@pytest.mark.django_db(transaction=True)
def test_a_key_from_the_environment_is_read_where_the_job_runs(team, model_rater, server,
                                                               monkeypatch, settings):
    settings.MODEL_KEY_ENV_NAMES = ("OPENAI_API_KEY", "TEST_MODEL_KEY")
    config.configure(model_rater, team["owner"], {"api_key_env": "TEST_MODEL_KEY"})
    monkeypatch.delenv("TEST_MODEL_KEY", raising=False)
    run = runs.start_run(model_rater, team["owner"], {"q": "2599.00001"})
    run.refresh_from_db()
    assert run.status == "failed" and run.job.error.count("TEST_MODEL_KEY") == 1
    monkeypatch.setenv("TEST_MODEL_KEY", "sk-from-the-environment")
    runs.resume(run, team["owner"])
    assert server.authorizations == ["Bearer sk-from-the-environment"]


def test_a_key_encrypted_under_another_secret_is_refused_in_words(team, settings):
    rater = add_rater(team["study"], team["owner"], kind="model", name="m", model_version="x")
    machine = config.configure(rater, team["owner"], {"base_url": "http://h/v1", "model": "x"},
                               api_key="sk-invented")
    settings.SECRET_KEY = "another-secret-another-secret-another-secret-0123"
    with pytest.raises(config.KeyUnavailable, match="enter it again"):
        config.api_key(machine)


def test_an_owner_cannot_have_the_server_send_its_own_secrets(team):
    rater = add_rater(team["study"], team["owner"], kind="model", name="m", model_version="x")
    for name in ("DJANGO_SECRET_KEY", "DATABASE_URL", "AWS_SECRET_ACCESS_KEY"):
        with pytest.raises(ValidationError, match="operator allows") as refused:
            config.configure(rater, team["owner"], {"base_url": "http://h/v1", "model": "x",
                                                    "api_key_env": name})
        assert "api_key_env" in refused.value.message_dict
    machine = config.configure(rater, team["owner"], {"base_url": "http://h/v1", "model": "x",
                                                      "api_key_env": "OPENAI_API_KEY"})
    assert config.key_state(machine) == "environment"


def test_the_operator_may_limit_the_endpoints_hosts(team, settings):
    settings.MODEL_ENDPOINT_HOSTS = frozenset({"127.0.0.1", "api.example.org"})
    rater = add_rater(team["study"], team["owner"], kind="model", name="m", model_version="x")
    with pytest.raises(ValidationError, match="operator allows"):
        config.configure(rater, team["owner"], {"base_url": "http://10.0.0.5:6379/v1",
                                                "model": "x"})
    config.configure(rater, team["owner"], {"base_url": "https://api.example.org/v1",
                                            "model": "x"})

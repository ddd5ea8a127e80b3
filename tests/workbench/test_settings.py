"""Safe defaults: settings read from the environment, checked in a fresh interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import json, django; from django.conf import settings; django.setup(); "
         "print(json.dumps({'debug': settings.DEBUG, 'eager': settings.CELERY_TASK_ALWAYS_EAGER, "
         "'engine': settings.DATABASES['default']['ENGINE'], 'hosts': settings.ALLOWED_HOSTS, "
         "'secure': settings.SESSION_COOKIE_SECURE}))")
# What the surroundings may set that a production process would not have (the browser
# tests set DJANGO_ALLOW_ASYNC_UNSAFE for Playwright's event loop).
SERVICE_VARS = ("DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_DEBUG",
                "DJANGO_ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE", "DJANGO_HTTPS",
                "DJANGO_SECURE_COOKIES")


def settings_under(tmp_path, **env):
    clean = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    clean.update(env, WORKBENCH_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="workbench.settings")
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=clean,
                          capture_output=True, text=True)


def test_embedded_default_needs_no_service(tmp_path):
    result = settings_under(tmp_path)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["engine"] == "django.db.backends.sqlite3"
    assert seen["eager"] is True
    assert seen["debug"] is False


def test_secret_key_is_required_outside_the_embedded_default(tmp_path):
    result = settings_under(tmp_path, DATABASE_URL="postgres://u@127.0.0.1:5432/x")
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


def test_a_served_instance_refuses_a_short_secret_key(tmp_path):
    """Issue 36, 7: a 20-character key was accepted in served mode."""
    result = settings_under(tmp_path, DATABASE_URL="postgres://u@127.0.0.1:5432/x",
                            DJANGO_SECRET_KEY="s" * 49)
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY has 49 characters; a served instance needs at least 50" \
        in result.stderr
    embedded = settings_under(tmp_path, DJANGO_SECRET_KEY="short")  # one machine, no service
    assert embedded.returncode == 0, embedded.stderr


def test_served_mode_uses_postgres_a_real_broker_and_secure_cookies(tmp_path):
    result = settings_under(
        tmp_path, DATABASE_URL="postgres://u@127.0.0.1:5432/x", REDIS_URL="redis://127.0.0.1:6379/0",
        DJANGO_SECRET_KEY="s" * 50, DJANGO_ALLOWED_HOSTS="workbench.example.org",
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["engine"] == "django.db.backends.postgresql"
    assert (seen["eager"], seen["debug"], seen["secure"]) == (False, False, True)
    assert seen["hosts"] == ["workbench.example.org"]


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_a_malformed_boolean_is_named(tmp_path, value):
    result = settings_under(tmp_path, DJANGO_DEBUG=value)
    assert result.returncode != 0
    assert f"DJANGO_DEBUG={value!r}" in result.stderr


def test_no_model_change_lacks_a_migration(db):
    from django.core.management import call_command

    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_production_settings_pass_the_deploy_check(tmp_path):
    """`manage.py check --deploy` with what a production deployment sets: no warning left."""
    clean = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    clean.update(
        WORKBENCH_VAR_DIR=str(tmp_path), DATABASE_URL="postgres://u@127.0.0.1:5432/x",
        REDIS_URL="redis://127.0.0.1:6379/0",
        DJANGO_SECRET_KEY="k3-" + "Zq8vR2mT6wX1yB4nH7jL0pS5dF9gC" * 2,
        DJANGO_ALLOWED_HOSTS="workbench.example.org", DJANGO_HTTPS="1",
    )
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level",
                             "WARNING"], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_without_https_the_deploy_check_names_what_is_missing(tmp_path):
    clean = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    clean.update(WORKBENCH_VAR_DIR=str(tmp_path), DATABASE_URL="postgres://u@127.0.0.1:5432/x",
                 DJANGO_SECRET_KEY="k3-" + "Zq8vR2mT6wX1yB4nH7jL0pS5dF9gC" * 2)
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level",
                             "WARNING"], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert result.returncode != 0
    assert "SECURE_HSTS_SECONDS" in result.stderr + result.stdout


KEY_PROBE = ("import django; from django.conf import settings; django.setup(); "
             "print(settings.SECRET_KEY)")


def embedded_secret_key(var_dir):
    clean = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    clean.update(WORKBENCH_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="workbench.settings")
    result = subprocess.run([sys.executable, "-c", KEY_PROBE], cwd=ROOT, env=clean,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_embedded_mode_makes_a_secret_key_of_its_own_and_keeps_it(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    key = embedded_secret_key(first)
    assert len(key) >= 50
    assert embedded_secret_key(first) == key  # the same install after a restart
    assert embedded_secret_key(second) != key  # another install
    path = first / "secret_key"
    assert path.read_text().strip() == key
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in first.iterdir() if p.name.startswith(".secret_key")] == []


def test_processes_starting_at_once_agree_on_one_key(tmp_path):
    clean = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    clean.update(WORKBENCH_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="workbench.settings")
    starts = [subprocess.Popen([sys.executable, "-c", KEY_PROBE], cwd=ROOT, env=clean,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for _ in range(6)]
    keys = set()
    for start in starts:
        out, err = start.communicate(timeout=120)
        assert start.returncode == 0, err
        keys.add(out.strip())
    assert keys == {(tmp_path / "secret_key").read_text().strip()}


def test_an_unusable_key_file_is_named(tmp_path):
    (tmp_path / "secret_key").write_text("\n")
    result = settings_under(tmp_path)
    assert result.returncode != 0
    assert "holds no usable secret key" in result.stderr


def test_a_secret_key_from_the_environment_wins_and_no_file_is_made(tmp_path):
    clean = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    clean.update(WORKBENCH_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="workbench.settings",
                 DJANGO_SECRET_KEY="from-the-environment-" + "x" * 40)
    result = subprocess.run([sys.executable, "-c", KEY_PROBE], cwd=ROOT, env=clean,
                            capture_output=True, text=True)
    assert result.stdout.strip() == "from-the-environment-" + "x" * 40
    assert not (tmp_path / "secret_key").exists()


POOL_PROBE = ("import json, django; from django.conf import settings; django.setup(); "
              "d = settings.DATABASES['default']; print(json.dumps({"
              "'cursors': d.get('DISABLE_SERVER_SIDE_CURSORS', False), "
              "'options': d.get('OPTIONS', {}), 'health': d['CONN_HEALTH_CHECKS'], "
              "'age': d['CONN_MAX_AGE']}))")


@pytest.mark.parametrize("pooler", ["", "transaction"])
def test_connection_settings_suit_a_direct_database_and_pgbouncer_in_transaction_mode(
        tmp_path, pooler):
    """Issue 43: connections are tried before reuse (a restart or a failover killed them);
    behind PgBouncer in transaction mode no server-side cursors, prepared statements or
    startup options, which the pooler cannot keep or refuses."""
    clean = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    clean.update(WORKBENCH_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="workbench.settings",
                 DATABASE_URL="postgres://u@127.0.0.1:6432/x", DJANGO_SECRET_KEY="k" * 50,
                 WORKBENCH_DB_POOLER=pooler)
    result = subprocess.run([sys.executable, "-c", POOL_PROBE], cwd=ROOT, env=clean,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["health"] is True and seen["age"] == 60
    if pooler:
        assert seen["cursors"] is True
        assert "prepare_threshold" not in seen["options"] and "options" not in seen["options"]
    else:
        assert seen["cursors"] is False and "jit=off" in seen["options"]["options"]


@pytest.mark.parametrize("value", ["0", "1.5", "a quarter"])
def test_a_share_of_time_outside_0_to_1_is_named(tmp_path, value):
    result = settings_under(tmp_path, WORKBENCH_AGREEMENT_JOB_SHARE=value)
    assert result.returncode != 0
    assert f"WORKBENCH_AGREEMENT_JOB_SHARE={value!r} is not a share of time" in result.stderr

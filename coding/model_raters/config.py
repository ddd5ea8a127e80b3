"""A model rater's settings: the endpoint, the model, its parameters and its API key.

An owner sets them on the rater's page, through `PUT /api/studies/S/raters/R/model/` or
`manage.py model_rater S R --base-url …`; all three call `configure`, which checks every
field and names the one that is wrong. The endpoint speaks the OpenAI-compatible chat
completions protocol (hosted services, vLLM, llama.cpp's server, Ollama); the workbench
calls it with the `openai` client library (`client.py`).

The API key is either the name of an environment variable of the worker that runs the
job (`api_key_env`, one of the names the operator lists in WORKBENCH_MODEL_KEY_ENV, default
OPENAI_API_KEY: a study's owner must not be able to have the server send any of its own
secrets to an endpoint of theirs) or the key itself, stored encrypted (Fernet,
from the `cryptography` library) under a key derived from the install's SECRET_KEY. A
stored key is never shown, returned by the API, audited, backed up or exported: readers
learn only whether one is set. If SECRET_KEY changes, a stored key cannot be read any more
and a run says so; the owner enters it again.

The operator may also limit the endpoints' hosts (WORKBENCH_MODEL_ENDPOINT_HOSTS, comma-
separated; empty, the default, allows any): the workbench sends requests wherever an owner
points it, which on a shared server may include services only it can reach.

`used_settings` is what a run records of the settings (its provenance): everything that
shapes the answers, the endpoint's host, never the key.
"""

import base64
import os
import re
from urllib.parse import urlsplit

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext

from coding.access import audit
from coding.access.archive import check_open
from coding.models import ModelSettings, Rater

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
# (field, lowest, highest) of the numbers an owner sets.
BOUNDS = {
    "temperature": (0.0, 2.0), "max_tokens": (1, 200_000), "concurrency": (1, 32),
    "requests_per_minute": (0, 100_000), "timeout_seconds": (1.0, 600.0),
    "invalid_retries": (0, 5), "price_in": (0.0, 1e6), "price_out": (0.0, 1e6),
    "seed": (-2**63, 2**63 - 1),
}
INTEGERS = {"max_tokens", "concurrency", "requests_per_minute", "invalid_retries", "seed"}
OPTIONAL = {"seed", "price_in", "price_out"}
FIELDS = ("base_url", "model", "temperature", "seed", "max_tokens", "output", "concurrency",
          "requests_per_minute", "timeout_seconds", "invalid_retries", "api_key_env",
          "send_blinded", "instructions", "price_in", "price_out")
# What a rater's settings look like before an owner changes them.
DEFAULTS = {field.name: field.default for field in ModelSettings._meta.concrete_fields
            if field.name in FIELDS and field.has_default()}


def settings_of(rater):
    """The rater's settings, or None when it has none yet."""
    try:
        return rater.machine
    except ModelSettings.DoesNotExist:
        return None


def _fernet():
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                   info=b"workbench model rater api key").derive(
        django_settings.SECRET_KEY.encode())
    return Fernet(base64.urlsafe_b64encode(derived))


def encrypt(key):
    return _fernet().encrypt(key.encode()).decode("ascii")


class KeyUnavailable(Exception):
    """The rater's API key cannot be had: said for the owner, naming no secret."""


def api_key(machine):
    """The key to send, from the environment or decrypted; "" when the rater uses none (a
    local server). KeyUnavailable when it names a variable that is not set or the stored
    key cannot be decrypted."""
    if machine.api_key_encrypted:
        try:
            return _fernet().decrypt(machine.api_key_encrypted.encode()).decode()
        except InvalidToken:
            raise KeyUnavailable(gettext(
                "the stored API key cannot be read (the server's secret key changed): enter "
                "it again on the rater's page")) from None
    if machine.api_key_env:
        value = os.environ.get(machine.api_key_env, "")
        if not value:
            raise KeyUnavailable(gettext(
                "the environment variable %(name)s holding the API key is not set where the "
                "job runs") % {"name": machine.api_key_env})
        return value
    return ""


def key_state(machine):
    """What a reader may know of the key: where it comes from, never its value."""
    if machine is None:
        return "none"
    if machine.api_key_encrypted:
        return "stored"
    return "environment" if machine.api_key_env else "none"


def host_of(base_url):
    return urlsplit(base_url).netloc


def used_settings(machine, prompt_version):
    """What a run records of the settings: all that shapes an answer, never the key."""
    return {"model": machine.model, "endpoint_host": host_of(machine.base_url),
            "base_url_path": urlsplit(machine.base_url).path,
            "temperature": machine.temperature, "seed": machine.seed,
            "max_tokens": machine.max_tokens, "output": machine.output,
            "send_blinded": machine.send_blinded, "invalid_retries": machine.invalid_retries,
            "prompt_template": prompt_version}


def _number(field, value):
    if value in (None, "") and field in OPTIONAL:
        return None
    if isinstance(value, bool):
        raise ValidationError({field: gettext("expected a number")})
    try:
        number = int(value) if field in INTEGERS else float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValidationError({field: gettext("expected a number")}) from None
    low, high = BOUNDS[field]
    if field in INTEGERS and not isinstance(value, int) and float(value) != number:
        raise ValidationError({field: gettext("expected a whole number")})
    if not low <= number <= high:
        raise ValidationError({field: gettext("between %(low)s and %(high)s")
                               % {"low": f"{low:g}", "high": f"{high:g}"}})
    return number


def _checked(changes):
    clean = {}
    for field, value in changes.items():
        if field in BOUNDS:
            clean[field] = _number(field, value)
        elif field == "base_url":
            url = str(value or "").strip()
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc or len(url) > 300:
                raise ValidationError({field: gettext(
                    "the endpoint's base URL, http:// or https://, e.g. "
                    "http://127.0.0.1:8080/v1")})
            if parts.username or parts.password:
                raise ValidationError({field: gettext(
                    "no credentials in the URL: give the API key apart")})
            hosts = django_settings.MODEL_ENDPOINT_HOSTS
            if hosts and (parts.hostname or "").lower() not in hosts:
                raise ValidationError({field: gettext(
                    "not a host the operator allows for model endpoints (%(hosts)s)") % {
                    "hosts": ", ".join(sorted(hosts))}})
            clean[field] = url.rstrip("/")
        elif field == "model":
            model = str(value or "").strip()
            if not model or len(model) > 200:
                raise ValidationError({field: gettext("the model's name as the endpoint "
                                                      "knows it (at most 200 characters)")})
            clean[field] = model
        elif field == "output":
            if value not in ModelSettings.Output.values:
                raise ValidationError({field: gettext("one of %(choices)s") % {
                    "choices": ", ".join(ModelSettings.Output.values)}})
            clean[field] = value
        elif field == "api_key_env":
            name = str(value or "").strip()
            if name and not ENV_NAME.match(name):
                raise ValidationError({field: gettext(
                    "an environment variable's name: letters, digits and _")})
            # Only variables the operator lists: else an owner could have the server send
            # any of its secrets (DJANGO_SECRET_KEY, DATABASE_URL) to an endpoint of theirs.
            if name and name not in django_settings.MODEL_KEY_ENV_NAMES:
                raise ValidationError({field: gettext(
                    "not a variable the operator allows for model keys (%(names)s; "
                    "WORKBENCH_MODEL_KEY_ENV sets them)") % {
                    "names": ", ".join(django_settings.MODEL_KEY_ENV_NAMES) or "none"}})
            clean[field] = name
        elif field == "send_blinded":
            if not isinstance(value, bool):
                raise ValidationError({field: gettext("true or false")})
            clean[field] = value
        elif field == "instructions":
            text = str(value or "")
            if len(text) > 20_000:
                raise ValidationError({field: gettext("at most 20,000 characters")})
            clean[field] = text.strip()
        else:
            raise ValidationError({str(field)[:40]: gettext("not a setting of a model rater")})
    return clean


@transaction.atomic
def configure(rater, user, changes, *, api_key=None, clear_key=False):
    """Set some of the rater's settings; ValidationError naming the field. `api_key`, when
    given, is stored encrypted (and the environment variable's name cleared); `clear_key`
    forgets a stored key. The audit entry names the fields changed, never the key."""
    check_open(rater.study)
    if rater.kind != Rater.Kind.MODEL:
        raise ValidationError({"rater": gettext("only a model rater calls a model")})
    clean = _checked(changes)
    machine = settings_of(rater) or ModelSettings(rater=rater, **DEFAULTS)
    for field, value in clean.items():
        setattr(machine, field, value)
    if not machine.base_url:
        raise ValidationError({"base_url": gettext("required")})
    if not machine.model:
        raise ValidationError({"model": gettext("required")})
    if api_key is not None:
        key = str(api_key).strip()
        if not key or len(key) > 2000:
            raise ValidationError({"api_key": gettext("the key, at most 2,000 characters")})
        machine.api_key_encrypted, machine.api_key_env = encrypt(key), ""
    elif clean.get("api_key_env"):
        machine.api_key_encrypted = ""
    if clear_key:
        machine.api_key_encrypted = ""
    machine.updated_by = user
    machine.save()
    if rater.model_version != machine.model:
        rater.model_version = machine.model
        rater.save(update_fields=["model_version"])
    changed = sorted(clean) + (["api_key"] if api_key is not None or clear_key else [])
    audit.record(user, rater.study, "rater.configure",
                 audit.target_of("model_rater", name=rater.name), fields=changed,
                 model=machine.model, endpoint=host_of(machine.base_url))
    return machine

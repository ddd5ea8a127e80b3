"""Settings for the workbench, read top to bottom from the environment.

Two modes, decided here once:

- embedded (the default, `make run`): SQLite under var/, Celery tasks executed
  in-process, and without DJANGO_SECRET_KEY a key of this install's own, made once
  in var/secret_key. No service needed.
- served: DATABASE_URL chooses PostgreSQL and REDIS_URL a real Celery broker;
  DJANGO_SECRET_KEY is then required.
"""

import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
# Absolute whatever the environment gave, so paths under it are known (and hidden) as server paths.
VAR_DIR = Path(os.environ.get("WORKBENCH_VAR_DIR", BASE_DIR / "var")).resolve()


def env_str(name, default=""):
    return os.environ.get(name, default).strip()


def env_bool(name, default=False):
    value = env_str(name)
    if not value:
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1 or 0)")


def env_list(name, default=()):
    value = env_str(name)
    return [part.strip() for part in value.split(",") if part.strip()] if value else list(default)


DATABASE_URL = env_str("DATABASE_URL")
REDIS_URL = env_str("REDIS_URL")
EMBEDDED = not DATABASE_URL and not REDIS_URL

DEBUG = env_bool("DJANGO_DEBUG", False)



def install_secret_key(var_dir):
    """This install's own secret key, kept in var_dir/secret_key (mode 0600).

    Made on the first start, never a constant: a key everyone knows would let anyone
    forge session cookies and password-reset links. The key is written in full to a
    temporary file, then hard-linked to its name, which fails if the name exists; so
    two processes starting at once agree on the one key that got there first, and no
    process ever reads a half-written file.
    """
    var_dir = Path(var_dir)
    path = var_dir / "secret_key"
    if not path.exists():
        var_dir.mkdir(parents=True, exist_ok=True)
        temporary = var_dir / f".secret_key.{os.getpid()}.{secrets.token_hex(8)}"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_urlsafe(50) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process made it first: use theirs
        finally:
            temporary.unlink(missing_ok=True)
    key = path.read_text().strip()
    if len(key) < 32:
        raise ImproperlyConfigured(
            f"{path} holds no usable secret key: delete it to have a new one made"
        )
    return key


SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    if not EMBEDDED:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY must be set when DATABASE_URL or REDIS_URL is set"
        )
    SECRET_KEY = install_secret_key(VAR_DIR)
# Served, the key signs sessions and password-reset links for everyone: a short one can be
# guessed. Django's own check (security.W009) asks for 50 characters; this refuses to start.
MIN_SECRET_KEY = 50
if not EMBEDDED and len(SECRET_KEY) < MIN_SECRET_KEY:
    raise ImproperlyConfigured(
        f"DJANGO_SECRET_KEY has {len(SECRET_KEY)} characters; a served instance needs at least "
        f"{MIN_SECRET_KEY}: python3 -c 'import secrets; print(secrets.token_urlsafe(50))'")

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
# The codebook editor posts about 8 fields an option: a codebook of 30 questions of 10
# options is ~2,800. Bodies stay bounded by DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
DATA_UPLOAD_MAX_NUMBER_FIELDS = 20_000
# Model raters (coding.model_raters.config): the environment variables an owner may name as
# an API key's source, and the endpoints' hosts allowed (empty: any).
MODEL_KEY_ENV_NAMES = tuple(n.strip() for n in env_str(
    "WORKBENCH_MODEL_KEY_ENV", "OPENAI_API_KEY").split(",") if n.strip())
MODEL_ENDPOINT_HOSTS = frozenset(h.strip().lower() for h in env_str(
    "WORKBENCH_MODEL_ENDPOINT_HOSTS").split(",") if h.strip())
# A file upload's whole body (multipart) at most: import files are large (workbench.bodylimit).
UPLOAD_MAX_BYTES = int(env_str("WORKBENCH_UPLOAD_MAX_BYTES", str(1024 ** 3)))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "axes",
    "csp",
    "workbench",
    "ingest",
    "coding",
]

MIDDLEWARE = [
    # A body over its limit is answered 413 before anything reads it (workbench.bodylimit).
    "workbench.bodylimit.BodyLimitMiddleware",
    # /healthz and /readyz, answered first: no host check, HTTPS redirect or session.
    "workbench.health.ProbeMiddleware",
    "workbench.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The reader's language (workbench.i18n); the API stays in English.
    "django.middleware.locale.LocaleMiddleware",
    "workbench.i18n.EnglishApiMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A signed-in person's stored language (coding.accounts.languages) over the cookie.
    "coding.accounts.languages.UserLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # An archived study's refusal of new work, raised where the work is done, as a 409.
    "coding.access.middleware.ArchivedStudyMiddleware",
    # A request that lost its database connection midway: 503 with Retry-After, not 500.
    "workbench.dbgone.DatabaseGoneMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "workbench.urls"
WSGI_APPLICATION = "workbench.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "workbench" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

if DATABASE_URL:
    # Connections are kept for a minute and tried before a request reuses one: one that a
    # restart, a failover or a pooler killed is replaced instead of failing the request
    # (workbench.dbgone answers the rest 503).
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60,
                                                  conn_health_checks=True)}
    # Behind PgBouncer in transaction mode (WORKBENCH_DB_POOLER=transaction) a connection's
    # session does not outlive a transaction: no server-side cursors (a streamed read then
    # holds its query's result in memory: give export workers a direct connection), no
    # prepared statements, and no startup options, which the pooler refuses (set jit=off
    # on the database instead: docs/deploy.md).
    POOLED = env_str("WORKBENCH_DB_POOLER") == "transaction"
    if POOLED:
        DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    if DATABASES["default"]["ENGINE"].endswith("postgresql") and not POOLED:
        # PostgreSQL's JIT compiles the plans of pages' short queries for longer than they
        # run (380 ms to compile a 9 ms bounded count at 100k items): off for this workload.
        DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c jit=off"
        if env_bool("WORKBENCH_DB_PREPARED", True):
            # The coder's hot statements (workbench/prepared.py) are prepared on the server once
            # per connection instead of planned on every request. Django's own queries bind
            # client-side and are never prepared whatever this is; the threshold is only
            # reached by statements that ask to be prepared. Off (0) behind a pooler in
            # transaction mode, which cannot keep prepared statements.
            DATABASES["default"]["OPTIONS"]["prepare_threshold"] = 1_000_000
            # And planned once: PostgreSQL plans a prepared statement's first five runs
            # for their values before it keeps a generic plan, and a coder's connection
            # runs each hot statement only a few times a minute, so without this the plan
            # was made again on nearly every step. Their constants are written into the SQL
            # (workbench/prepared.py), so the generic plan keeps the partial indexes; only
            # prepared statements are affected, and only these ask to be prepared.
            DATABASES["default"]["OPTIONS"]["options"] += " -c plan_cache_mode=force_generic_plan"
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "workbench.sqlite3",
            # Concurrent coders wait for the write lock instead of failing with
            # "database is locked": take it at BEGIN and wait up to 20 s.
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one
# username from one client address, that pair is refused for the cool-off time, on
# the login page and the admin alike. A right password resets the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, reading the person's chosen language in the same query.
    "coding.accounts.languages.UserBackend",
]
AXES_FAILURE_LIMIT = int(env_str("WORKBENCH_LOGIN_FAILURES", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=int(env_str("WORKBENCH_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# Behind a reverse proxy every request comes from the proxy's address: say how many
# trusted proxies append to X-Forwarded-For, and the client's own address is used.
WORKBENCH_PROXY_COUNT = int(env_str("WORKBENCH_PROXY_COUNT", "0"))
AXES_CLIENT_IP_CALLABLE = "workbench.auth.client_address"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
# English and Simplified Chinese for every page (catalogs in */locale, compiled by
# `make messages`); codebook texts stay as the study wrote them.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600  # the switcher's choice outlives the session
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Files too big to upload (the arXiv snapshot) are placed here by an administrator; the
# import API reads a named `path` only from inside this folder.
IMPORT_DIR = Path(env_str("WORKBENCH_IMPORT_DIR") or VAR_DIR / "imports")

# Where people reach the site: links made outside a request (`manage.py invite`) start so.
# A password reset link (mailed, or made by an owner for a member) works once, for 3 days.
PASSWORD_RESET_TIMEOUT = 3 * 24 * 3600
WORKBENCH_BASE_URL = env_str("WORKBENCH_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
# Mail, for invitation links only. No EMAIL_HOST: nothing is mailed, owners pass links on.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_PORT = int(env_str("EMAIL_PORT", "587"))
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "workbench@localhost")

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT") or VAR_DIR / "static")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Without collectstatic (embedded mode, tests) WhiteNoise serves from the apps.
WHITENOISE_USE_FINDERS = EMBEDDED or DEBUG or env_bool("WHITENOISE_USE_FINDERS", False)

# Served behind HTTPS (DJANGO_HTTPS=1, the production setting): redirect plain HTTP,
# send HSTS for a year, cookies only over HTTPS. `manage.py check --deploy` passes
# with it (tests/test_settings.py). Cookies are secure outside embedded mode anyway.
HTTPS = env_bool("DJANGO_HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
SECURE_HSTS_SECONDS = 365 * 24 * 3600 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = HTTPS or env_bool("DJANGO_SECURE_COOKIES", not EMBEDDED and not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Content-Security-Policy (django-csp): scripts only from files this site serves, never
# inline code, inline event handlers or eval, so text that slipped through escaping
# still cannot run. Pages pass data to their scripts in data-* attributes and
# json_script blocks (not executed). Styles too come only from files: templates carry
# no style attributes (htmx is told not to inject its indicator <style>, base.html), so
# 'unsafe-inline' is not needed for styles either. The Swagger UI page uses a template
# of ours (workbench/templates/drf_spectacular/) with its script moved to a file.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}

REST_FRAMEWORK = {
    # Scripts send `Authorization: Token <key>`; the browser its session cookie,
    # and then every unsafe method needs the CSRF token.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "workbench.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": [
        "workbench.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "workbench.paging.Paging",
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "workbench.paging.StableOrdering",
    ],
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
# API tokens (django-rest-knox): hashed at rest, named, with the expiry their owner chose.
KNOX_TOKEN_MODEL = "workbench.ApiToken"
# Knox's own migration would create its (swapped-out) token table anyway, a table Django
# no longer knows of that still points at auth_user; without migrations it is never made.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {"TOKEN_PREFIX": "wbt_", "TOKEN_TTL": timedelta(days=90), "AUTO_REFRESH": False}

SPECTACULAR_SETTINGS = {
    "TITLE": "Coding workbench API",
    "DESCRIPTION": "Studies, codebooks, items, assignments, codings and decisions.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "workbench.schema.document_errors",
    ],
    "ENUM_NAME_OVERRIDES": {
        "JobStatusEnum": "workbench.models.Job.Status",
        "AssignmentStatusEnum": "coding.models.Assignment.Status",
    },
}

# Celery: a real broker when REDIS_URL is set, otherwise tasks run in-process.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
# How much a Celery worker lowers its CPU priority when it starts (workbench.worker): jobs
# take what the web processes leave. 0 keeps the priority it was started with.
WORKER_NICE = int(env_str("WORKBENCH_WORKER_NICE", "10"))
# The largest share of the time automatic agreement snapshots may take (coding.agreement.
# snapshots): after a report that took T seconds, the next automatic one starts no sooner
# than T x (1/share - 1) later. 1 lets them run back to back.
try:
    AGREEMENT_JOB_SHARE = float(env_str("WORKBENCH_AGREEMENT_JOB_SHARE", "0.25"))
except ValueError:
    AGREEMENT_JOB_SHARE = float("nan")
if not 0 < AGREEMENT_JOB_SHARE <= 1:
    raise ImproperlyConfigured(
        f"WORKBENCH_AGREEMENT_JOB_SHARE={env_str('WORKBENCH_AGREEMENT_JOB_SHARE')!r} is not a "
        "share of time above 0 and at most 1 (e.g. 0.25)")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env_str("WORKBENCH_QUEUE", "workbench")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A refused request (403) is one line, not a traceback (workbench.logfilters).
    # An invite link's token never reaches the log.
    "filters": {"one_line_refusals": {"()": "workbench.logfilters.OneLineRefusals"},
                "redacted_invites": {"()": "workbench.logfilters.RedactedInviteLinks"}},
    "handlers": {"console": {"class": "logging.StreamHandler",
                             "filters": ["one_line_refusals", "redacted_invites"]}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # The development server's request lines go through the same handler (Django gives
    # them one of their own, which would log an invite link's token as it is).
    # A model rater's run sends thousands of requests: the HTTP clients' line per request
    # would bury the log (the run's own log keeps every retry and failure).
    "loggers": {"django.server": {"handlers": ["console"], "level": "INFO",
                                  "propagate": False},
                "httpx": {"level": "WARNING"}, "httpx2": {"level": "WARNING"}},
}

# Files (uploads, import files, export bundles, backups) go through Django's storage API
# (workbench.storage). By default the local folder VAR_DIR, as one host needs; with
# WORKBENCH_S3_BUCKET an S3-compatible object store (django-storages, boto3) that the web
# processes and workers on other machines share. Credentials: AWS_ACCESS_KEY_ID and
# AWS_SECRET_ACCESS_KEY (or the machine's role). docs/deploy.md has the settings.
S3_BUCKET = env_str("WORKBENCH_S3_BUCKET")
# A finished file is handed out streamed through Django ("stream") or, with an object
# store, by a redirect to a signed URL that expires after WORKBENCH_SIGNED_URL_SECONDS.
DOWNLOADS = env_str("WORKBENCH_DOWNLOADS", "stream")
if DOWNLOADS not in ("stream", "signed"):
    raise ImproperlyConfigured(f"WORKBENCH_DOWNLOADS={DOWNLOADS!r}: use stream or signed")
SIGNED_URL_SECONDS = int(env_str("WORKBENCH_SIGNED_URL_SECONDS", "300"))
if S3_BUCKET:
    FILE_STORAGE = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
        "bucket_name": S3_BUCKET,
        "endpoint_url": env_str("WORKBENCH_S3_ENDPOINT_URL") or None,
        "region_name": env_str("WORKBENCH_S3_REGION") or None,
        "location": env_str("WORKBENCH_S3_PREFIX"),
        "addressing_style": env_str("WORKBENCH_S3_ADDRESSING", "path"),
        "signature_version": "s3v4",
        "default_acl": None,
        "file_overwrite": True,
        "querystring_expire": SIGNED_URL_SECONDS,
    }}
else:
    FILE_STORAGE = {"BACKEND": "django.core.files.storage.FileSystemStorage",
                    "OPTIONS": {"location": VAR_DIR, "allow_overwrite": True}}
STORAGES = {
    "default": FILE_STORAGE,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# /readyz: how long the database, the broker and the storage each have to answer.
READY_TIMEOUT = float(env_str("WORKBENCH_READY_TIMEOUT", "2"))
# /metrics (Prometheus) answers only with `Authorization: Bearer <this>`; unset, it is off.
METRICS_TOKEN = env_str("WORKBENCH_METRICS_TOKEN")

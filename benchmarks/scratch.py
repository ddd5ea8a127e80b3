"""A scratch database for a benchmark, so it never writes into real data.

With DATABASE_URL set (PostgreSQL), a database named after it plus `_<label>_bench`
is created fresh and dropped afterwards (`reuse`: an existing one is kept as it is);
without it, SQLite in a temporary folder.
Call use_scratch_database before Django is set up.
"""

import os
import shutil
import tempfile
from urllib.parse import urlsplit, urlunsplit


def use_scratch_database(label, reuse=False):
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        folder = tempfile.mkdtemp(prefix=f"{label}-bench-")
        os.environ["WORKBENCH_VAR_DIR"] = folder
        return ("sqlite", folder)
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/')}_{label}_bench"
    admin = urlunsplit(parts._replace(path="/postgres"))
    if not (reuse and _postgres_has(admin, name)):
        _postgres(admin, f'DROP DATABASE IF EXISTS "{name}"', f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path="/" + name))
    return ("postgresql", admin, name)


def drop_scratch_database(scratch):
    from django.db import connections

    connections.close_all()
    if scratch[0] == "postgresql":
        _postgres(scratch[1], f'DROP DATABASE IF EXISTS "{scratch[2]}"')
    else:
        shutil.rmtree(scratch[1], ignore_errors=True)


def _postgres_has(url, name):
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        return connection.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                  [name]).fetchone() is not None


def _postgres(url, *statements):
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        for statement in statements:
            connection.execute(statement)

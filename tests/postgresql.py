"""Checks for tests of what only PostgreSQL does (prepared statements on the server)."""

import pytest
from django.db import connection

on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql",
                                   reason="prepared statements are PostgreSQL's")


def prepared_on_the_server(fragment):
    """The connection's server-side prepared statements whose SQL holds `fragment`."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [sql for (sql,) in cursor.fetchall() if fragment in sql]

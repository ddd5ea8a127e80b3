"""Bulk writes through PostgreSQL's COPY, in the caller's transaction.

COPY streams rows to the server without a statement per row or per batch: several times
the rate of a pipelined INSERT for the wide rows of an import (benchmarks/ingest.py prints
both beside `psql`'s own COPY). It returns no ids, so a writer that needs them reserves
them first from the table's sequence (`reserve_ids`) and copies them with the rows. Only
on PostgreSQL (psycopg 3); callers keep a plain INSERT for SQLite.
"""

from django.db import connection


def copy_rows(table, columns, rows):
    """COPY `rows` (tuples in `columns` order) into `table`, on Django's connection and
    inside its transaction, so a rollback undoes them. A JSON column takes its text (or a
    psycopg Jsonb); the server parses each value as it would an INSERT's."""
    qn = connection.ops.quote_name
    statement = f"COPY {qn(table)} ({', '.join(map(qn, columns))}) FROM STDIN"
    with connection.wrap_database_errors, connection.cursor() as cursor, \
            cursor.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def reserve_ids(model, count):
    """`count` new primary keys of `model` from its table's sequence, as INSERT would
    draw them; a rolled-back batch leaves a gap, as INSERT does."""
    if count == 0:
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) "
                       "FROM generate_series(1, %s)",
                       [connection.ops.quote_name(model._meta.db_table), model._meta.pk.column,
                        count])
        return [row[0] for row in cursor.fetchall()]

"""Bulk writes through PostgreSQL's COPY, in the caller's transaction.

COPY streams rows to the server without a statement per row or per batch: several times
the rate of a pipelined INSERT for the wide rows of an import (benchmarks/ingest.py prints
both beside `psql`'s own COPY). It returns no ids, so a writer that needs them reserves
them first from the table's sequence (`reserve_ids`) and copies them with the rows. Only
on PostgreSQL (psycopg 3); callers keep a plain INSERT for SQLite.
"""

from functools import partial

from django.db import connection, connections


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


def copy_create(model, objects):
    """`bulk_create` through COPY: the unsaved `objects` of `model` written with every
    concrete field as Django would write it (its default, auto_now_add's time, a foreign
    key's id, JSON as JSON), their primary keys reserved first and set on them. For the
    builders of large studies (benchmarks/), where bulk_create's INSERT statements took
    most of the time."""
    objects = list(objects)
    real = connections[connection.alias]  # not the proxy: one lookup per value otherwise
    fields = list(model._meta.concrete_fields)
    for obj, pk in zip(objects, reserve_ids(model, len(objects))):
        obj.pk = pk
    for f in fields:
        if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            for obj in objects:
                f.pre_save(obj, True)  # sets the time on the object, as save() does
    # Values psycopg writes as they are; any other field's through the field, as an
    # INSERT's would be (JSON, and whatever a field converts).
    steps = [(f.attname, None if f.get_internal_type() in AS_THEY_ARE
              else partial(f.get_db_prep_save, connection=real)) for f in fields]
    plain = [name for name, prep in steps if prep is None]
    if len(plain) == len(steps):
        rows = (tuple(getattr(obj, name) for name in plain) for obj in objects)
    else:
        rows = (tuple(getattr(obj, name) if prep is None else prep(getattr(obj, name))
                      for name, prep in steps) for obj in objects)
    copy_rows(model._meta.db_table, [f.column for f in fields], rows)
    for obj in objects:
        obj._state.adding, obj._state.db = False, connection.alias
    return objects


AS_THEY_ARE = {"AutoField", "BigAutoField", "IntegerField", "BigIntegerField",
               "SmallIntegerField", "PositiveIntegerField", "PositiveBigIntegerField",
               "PositiveSmallIntegerField", "FloatField", "BooleanField", "CharField",
               "TextField", "SlugField", "DateTimeField", "DateField", "ForeignKey"}

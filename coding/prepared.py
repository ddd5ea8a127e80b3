"""The coder's hot statements, built by the ORM once per process and run again with new values.

On the coder's path (next item, submit) building a query through the ORM costs more CPU in
the web process than PostgreSQL spends running it: at 1M items, two thirds of a step's time
was the coder process's own CPU, most of it compiling querysets (issue 13). A `Statement`
builds its queryset once, with stand-in values (`Slot`s) where the parameters go, compiles it
on first use for the connection's database, and afterwards only swaps the parameters in and
converts the rows as the ORM would (JSON, dates). The SQL is the ORM's own, so it stays right
on PostgreSQL and SQLite alike, FOR UPDATE SKIP LOCKED included.

Only values of the queryset's parameters can change: what the SQL's shape depends on (which
filters, IN lists, LIMIT) is fixed when it is built.
"""

import itertools
from datetime import UTC, datetime

from django.db import connections, router

_stand_ins = itertools.count(1)


class Slot:
    """A named stand-in for a parameter: a number no real row or setting holds, or a
    datetime no real row holds (for comparisons with a time)."""

    def __init__(self, name, kind=int):
        self.name = name
        n = next(_stand_ins)
        if kind is datetime:
            self.value = datetime(1901, 1, 1, 0, 0, n % 60, n, tzinfo=UTC)
        elif kind is float:
            self.value = -987_654_321.0 - n / 1024
        else:
            self.value = -987_654_321_000 - n


class Statement:
    """`build(**stand_ins)` returns a values_list queryset; `rows(**values)` runs it.

    `build` is called with each slot's stand-in value (an int, float or datetime), once per
    process and database; the parameters equal to a stand-in are found in the compiled
    statement's parameters and replaced by the named values when it runs.
    """

    def __init__(self, model, build, *slots):
        self.model, self.build, self.slots = model, build, slots
        self._compiled = {}

    def _compile(self, connection):
        stand_ins = {slot.name: slot.value for slot in self.slots}
        queryset = self.build(**stand_ins)
        compiler = queryset.query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        placed = []
        for slot in self.slots:
            wanted = (connection.ops.adapt_datetimefield_value(slot.value)
                      if isinstance(slot.value, datetime) else slot.value)
            where = [n for n, param in enumerate(params) if param == wanted]
            if not where:
                raise ValueError(f"{slot.name} is not a parameter of the statement")
            placed += [(n, slot) for n in where]
        return compiler, sql, list(params), placed

    def rows(self, **values):
        """The rows as the queryset would give them: tuples, converted as the ORM does."""
        connection = connections[router.db_for_read(self.model)]
        key = (connection.alias, connection.vendor)
        if key not in self._compiled:
            self._compiled[key] = self._compile(connection)
        compiler, sql, params, placed = self._compiled[key]
        params = list(params)
        for n, slot in placed:
            value = values[slot.name]
            if isinstance(slot.value, datetime):
                value = connection.ops.adapt_datetimefield_value(value)
            params[n] = value
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
        return list(compiler.results_iter(results=[fetched]))

    def first(self, **values):
        rows = self.rows(**values)
        return rows[0] if rows else None


def fields(model):
    """The model's concrete field names, as values_list and `instance` take them."""
    return [f.attname for f in model._meta.concrete_fields]


def instance(model, row, db="default"):
    """A model instance from the values of `fields(model)`, as the ORM would load it."""
    return model.from_db(db, fields(model), row)

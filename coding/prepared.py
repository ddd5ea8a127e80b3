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

On PostgreSQL the statements are also prepared on the server (once per connection): with
Django's client-side binding PostgreSQL plans every statement again on every request, and
at 1M items planning took twice as long as running (3.8 ms against 1.7 ms per next item +
submit). Only these statements are bound server-side; every other query keeps Django's
client-side binding. It needs the connection's `prepare_threshold` set (the settings do,
unless WORKBENCH_DB_PREPARED=0, e.g. behind a pooler in transaction mode that cannot keep
prepared statements): with it None, the statements run unprepared, bound client-side, as
before. Django's cursor wrapper still runs them, so query counting and logging see them.
"""

import copy
import itertools
import json
import re
from datetime import UTC, datetime

from django.db import connections, router

_stand_ins = itertools.count(1)


class Slot:
    """A named stand-in for a parameter: a number no real row or setting holds, or a
    datetime no real row holds (for comparisons with a time). Kind "json": a number compared
    with a JSON field's key (`params__study=...`), which the ORM passes as JSON."""

    def __init__(self, name, kind=int):
        self.name, self.kind = name, kind
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

    def _compile(self, connection, inline=False):
        stand_ins = {slot.name: slot.value for slot in self.slots}
        queryset = self.build(**stand_ins)
        compiler = queryset.query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        placed = []
        for slot in self.slots:
            wanted = (connection.ops.adapt_datetimefield_value(slot.value)
                      if isinstance(slot.value, datetime) else slot.value)
            if slot.kind == "json":
                where = [n for n, param in enumerate(params) if _json_value(param) == wanted]
            else:
                where = [n for n, param in enumerate(params) if param == wanted]
            if not where:
                raise ValueError(f"{slot.name} is not a parameter of the statement")
            placed += [(n, slot) for n in where]
        if inline:
            sql, params, placed = _inline_constants(connection, sql, params, placed)
        return compiler, sql, list(params), placed

    def rows(self, **values):
        """The rows as the queryset would give them: tuples, converted as the ORM does."""
        connection = connections[router.db_for_read(self.model)]
        prepares = _prepares(connection)
        key = (connection.alias, connection.vendor, prepares)
        if key not in self._compiled:
            self._compiled[key] = self._compile(connection, inline=prepares)
        compiler, sql, params, placed = self._compiled[key]
        params = list(params)
        for n, slot in placed:
            value = values[slot.name]
            if isinstance(slot.value, datetime):
                value = connection.ops.adapt_datetimefield_value(value)
            elif slot.kind == "json":
                value = _as_json_param(params[n], value)
            params[n] = value
        with (_preparing_cursor(connection) if prepares else connection.cursor()) as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
        return list(compiler.results_iter(results=[fetched]))

    def first(self, **values):
        rows = self.rows(**values)
        return rows[0] if rows else None


def _json_value(param):
    """The value a JSON parameter stands for: the ORM passes it as JSON text (SQLite) or as
    psycopg's Jsonb wrapper (PostgreSQL)."""
    if isinstance(param, str):
        try:
            return json.loads(param)
        except ValueError:
            return None
    return getattr(param, "obj", None)


def _as_json_param(stand_in, value):
    """`value` as the same kind of JSON parameter as the compiled one."""
    if isinstance(stand_in, str):
        return json.dumps(value)
    param = copy.copy(stand_in)
    param.obj = value
    return param


def _inline_constants(connection, sql, params, placed):
    """The statement with every parameter but the slots written into it as a literal.

    A prepared statement is planned once for any values of its parameters (PostgreSQL's
    generic plan, used from the sixth run when it costs no more than planning each run).
    A constant bound as a parameter (`status = $2` for 'active') would keep that plan off a
    partial index whose condition names the constant, and PostgreSQL would then plan every
    run again; written into the SQL, the generic plan is the one planning would choose."""
    marks = list(re.finditer(r"%%|%s", sql))
    holes = [m for m in marks if m.group() == "%s"]
    if len(holes) != len(params):
        return sql, params, placed  # not the shape expected: leave it bound as it was
    slots = dict(placed)
    kept, parts, at = [], [], 0
    for n, hole in enumerate(holes):
        parts.append(sql[at:hole.start()])
        if n in slots:
            parts.append("%s")
            kept.append((n, params[n]))
        else:
            parts.append(connection.ops.compose_sql("%s", [params[n]]).replace("%", "%%"))
        at = hole.end()
    parts.append(sql[at:])
    renumbered = {old: new for new, (old, _) in enumerate(kept)}
    return ("".join(parts), [param for _, param in kept],
            [(renumbered[n], slot) for n, slot in placed])


def _prepares(connection):
    """Whether the connection prepares statements (psycopg 3 with a prepare_threshold)."""
    if connection.vendor != "postgresql" or _PreparingCursor is None:
        return False
    connection.ensure_connection()
    return connection.connection.prepare_threshold is not None


def _preparing_cursor(connection):
    """A cursor that binds on the server and prepares what it runs."""
    with connection.wrap_database_errors:
        # _prepare_cursor wraps it as connection.cursor() would: the execute wrappers
        # (assertNumQueries, CaptureQueriesContext) and the debug log see its statements.
        return connection._prepare_cursor(_PreparingCursor(connection.connection))


try:
    from django.db.backends.postgresql.base import ServerBindingCursor
except ImportError:  # psycopg 2 or no PostgreSQL driver: nothing is prepared
    _PreparingCursor = None
else:
    class _PreparingCursor(ServerBindingCursor):
        """Binds on the server and prepares each statement the first time the connection runs
        it (psycopg keeps up to `prepared_max` per connection and runs them by name after)."""

        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

        def _convert_query(self, query, params=None):
            # psycopg notes the query it sent (what Django's query log and the query
            # counters show) only when it does not run a prepared one: note it always.
            self._query = super()._convert_query(query, params)
            return self._query


def fields(model):
    """The model's concrete field names, as values_list and `instance` take them."""
    return [f.attname for f in model._meta.concrete_fields]


def instance(model, row, db="default"):
    """A model instance from the values of `fields(model)`, as the ORM would load it."""
    return model.from_db(db, fields(model), row)

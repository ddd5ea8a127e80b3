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

The hot path's writes are built the same way: `Update` (a queryset's `update()`), `Delete`
(a queryset's `delete()` when it is one DELETE) and `Insert` (`save()` of a new instance,
`bulk_create`), each the ORM's own statement with the ORM's conversions of the values.
Built by the ORM on every submission, the coding's INSERT, the assignment's UPDATE and the
stored disagreements' DELETE were the largest Python costs left in a submission.

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
import types
from datetime import UTC, datetime

from django.db import connections, models, router, transaction
from django.db.models.deletion import Collector
from django.db.models.signals import post_delete, post_save, pre_delete, pre_save
from django.db.models.sql.compiler import SQLInsertCompiler
from django.db.models.sql.subqueries import DeleteQuery, InsertQuery, UpdateQuery

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
        compiler = self._compiler(self.build(**stand_ins), connection)
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
        return compiler, sql, list(params), placed, self._converters(compiler)

    def _compiler(self, built, connection):
        """The compiler of what `build` returned (a queryset here)."""
        return built.query.get_compiler(connection=connection)

    def _execute(self, connection, values, result):
        """Run the statement with `values` in its slots; `result(compiled, cursor)`, where
        `compiled` is (compiler, sql, params, slots placed, converters)."""
        prepares = _prepares(connection)
        key = (connection.alias, connection.vendor, prepares)
        if key not in self._compiled:
            self._compiled[key] = self._compile(connection, inline=prepares)
        compiled = self._compiled[key]
        _, sql, params, placed, _ = compiled
        params = list(params)
        for n, slot in placed:
            value = values[slot.name]
            if isinstance(slot.value, datetime) and value is not None:
                value = connection.ops.adapt_datetimefield_value(value)
            elif slot.kind == "json":
                value = _as_json_param(params[n], value)
            params[n] = value
        with (_preparing_cursor(connection) if prepares else connection.cursor()) as cursor:
            cursor.execute(sql, params)
            return result(compiled, cursor)

    def rows(self, **values):
        """The rows as the queryset would give them: tuples, converted as the ORM does."""
        connection = connections[router.db_for_read(self.model)]
        return self._execute(connection, values, self._converted)

    @staticmethod
    def _converted(compiled, cursor):
        # What compiler.results_iter does, with the converters found once when compiled.
        compiler, converters, rows = compiled[0], compiled[4], cursor.fetchall()
        if converters:
            return list(map(tuple, compiler.apply_converters(rows, converters)))
        return [tuple(row) for row in rows]

    def _converters(self, compiler):
        """The ORM's converters of the selected columns, as results_iter finds them."""
        columns = [s[0] for s in compiler.select[0:compiler.col_count]]
        if compiler.has_composite_fields(columns):
            raise ValueError("a composite key's columns are not read by a Statement")
        return compiler.get_converters(columns)

    def first(self, **values):
        rows = self.rows(**values)
        return rows[0] if rows else None


class Update(Statement):
    """`build(**stand_ins)` returns (queryset, {field: value}); `run(**values)` does what
    `queryset.update(**changes)` does, the number of rows changed. Slots may stand in the
    filter and in the changes (a changed value that is None is bound as NULL, where the
    ORM writes `= NULL`: the same row)."""

    def _compiler(self, built, connection):
        queryset, changes = built
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(changes)
        query.clear_select_clause()
        if query.related_updates:  # a parent model's table too: not one statement
            raise ValueError("an update of an inherited model's fields is not prepared")
        return query.get_compiler(connection=connection)

    def _converters(self, compiler):
        return None

    def run(self, **values):
        connection = connections[router.db_for_write(self.model)]
        with transaction.mark_for_rollback_on_error(using=connection.alias):
            return self._execute(connection, values, lambda compiled, cursor: cursor.rowcount)


class Delete(Statement):
    """`build(**stand_ins)` returns a queryset; `run(**values)` deletes its rows as
    `queryset.delete()` does when nothing cascades and no signal listens (one DELETE,
    Django's "fast delete"; the ORM's own delete runs instead when a signal listens), and
    returns how many rows it deleted."""

    def _compiler(self, queryset, connection):
        if not Collector(using=connection.alias, origin=queryset).can_fast_delete(queryset):
            raise ValueError(f"deleting {self.model.__name__} cascades: not one statement")
        query = queryset.query.clone()
        query.__class__ = DeleteQuery
        query.select_for_update, query.select_related = False, False
        query.clear_ordering(force=True)
        return query.get_compiler(connection=connection)

    def _converters(self, compiler):
        return None

    def run(self, **values):
        if _delete_listened(self.model):
            return self.build(**values).delete()[0]
        connection = connections[router.db_for_write(self.model)]
        with transaction.mark_for_rollback_on_error(using=connection.alias):
            return self._execute(connection, values, lambda compiled, cursor: cursor.rowcount)


def _delete_listened(model):
    return any(signal.has_listeners(model) for signal in (pre_delete, post_delete))


class Insert:
    """INSERT of new model instances, the ORM's own statement built once per process.

    `create(obj)` writes one instance as `obj.save()` would the first time (the model's
    own `save()` method is not called: the caller sets what it would); `bulk_create(objs)`
    writes several in one statement as `Model.objects.bulk_create(objs)` would. Each
    field's value is converted as the ORM converts it (`pre_save`, `get_db_prep_save`:
    auto_now_add times, JSON), the primary key comes back from the INSERT (RETURNING) and
    the instances are marked saved. The statement is compiled once per number of rows.
    Where the ORM would do more than one INSERT (save signals with listeners, a backend
    without RETURNING, a value that is an expression), it runs the ORM's way instead.
    """

    def __init__(self, model):
        self.model = model
        # As Model.save() writes a new row: every local column but the automatic key.
        self.fields = [f for f in model._meta.local_concrete_fields
                       if not f.generated and f is not model._meta.auto_field]
        self._compiled = {}

    def create(self, obj):
        if pre_save.has_listeners(self.model) or post_save.has_listeners(self.model):
            models.Model.save_base(obj, force_insert=True)  # signals, as save() sends them
            return obj
        return self._insert([obj])[0]

    def bulk_create(self, objs):
        objs = list(objs)
        return self._insert(objs) if objs else objs

    def _insert(self, objs):
        connection = connections[router.db_for_write(self.model)]
        features = connection.features
        rows = len(objs)
        if not (features.can_return_columns_from_insert
                and (rows == 1 or features.can_return_rows_from_bulk_insert)
                and rows <= connection.ops.bulk_batch_size(self.fields, objs)):
            return self._orm(connection, objs)
        if any(obj.pk is not None or any(hasattr(getattr(obj, field.attname), "resolve_expression")
                                         for field in self.fields) for obj in objs):
            return self._orm(connection, objs)
        prepares = _prepares(connection)
        key = (connection.alias, connection.vendor, prepares, rows)
        if key not in self._compiled:
            self._compiled[key] = self._compile(connection, objs)
        compiler, sql, converters = self._compiled[key]
        values = [[field.pre_save(obj, True) for field in self.fields] for obj in objs]
        _, param_rows = compiler.assemble_as_sql(self.fields, [
            [field.get_db_prep_save(value, connection=connection)
             for field, value in zip(self.fields, row)] for row in values])
        params = [*itertools.chain.from_iterable(param_rows), *compiler.returning_params]
        returning = self.model._meta.db_returning_fields
        with (_preparing_cursor(connection) if prepares else connection.cursor()) as cursor, \
                transaction.mark_for_rollback_on_error(using=connection.alias):
            cursor.execute(sql, params)
            returned = (connection.ops.fetch_returned_insert_rows(cursor) if rows > 1 else
                        [connection.ops.fetch_returned_insert_columns(
                            cursor, compiler.returning_params)])
        if converters:
            returned = compiler.apply_converters(returned, converters)
        for obj, row in zip(objs, returned):
            for field, value in zip(returning, row):
                setattr(obj, field.attname, value)
            obj._state.adding, obj._state.db = False, connection.alias
        return objs

    def _compile(self, connection, objs):
        query = InsertQuery(self.model)
        query.insert_values(self.fields, objs)
        compiler = query.get_compiler(connection=connection)
        # Several rows as VALUES tuples, as the ORM writes one row (and several on SQLite).
        # PostgreSQL's compiler would pass them as one array per column to UNNEST, which
        # saves planning a statement planned on every run; this one is planned once, and
        # dumping the arrays cost the driver twice the CPU (4 decisions: 1.5 against 0.8 ms).
        compiler.assemble_as_sql = types.MethodType(SQLInsertCompiler.assemble_as_sql, compiler)
        compiler.returning_fields = self.model._meta.db_returning_fields
        if any(hasattr(field, "get_placeholder") for field in self.fields):
            raise ValueError("a field's placeholder may depend on its value: not prepared")
        [(sql, _)] = compiler.as_sql()
        table = self.model._meta.db_table
        converters = compiler.get_converters(
            [field.get_col(table) for field in compiler.returning_fields])
        return compiler, sql, converters

    def _orm(self, connection, objs):
        if len(objs) == 1:
            models.Model.save_base(objs[0], using=connection.alias, force_insert=True)
            return objs
        return self.model._base_manager.using(connection.alias).bulk_create(objs)


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

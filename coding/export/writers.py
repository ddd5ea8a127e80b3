"""Writers for CSV, JSON Lines and Parquet: same rows, same order, byte-stable output.

Each takes the shape's fields and an iterable of rows, either dicts or column batches
(`rows.Columns`, as the export's row generators give them), writes in batches of
exactly BATCH rows however the rows arrived (so the Parquet row groups, and the
bytes, do not depend on it; memory stays flat), and writes nothing that depends on
the run (no timestamps).
"""

import csv
import json
import re
from datetime import datetime
from itertools import islice, repeat

import numpy

from coding.export.rows import Columns, Repeated, Timestamps, expanded

# pyarrow is imported where a Parquet file is written, not with this module, which every
# web and worker process loads: 40 MB a process saved (tests/workbench/test_startup.py).


BATCH = 20_000
def arrow_type_of(kind):
    import pyarrow as pa

    return {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(),
            "boolean": pa.bool_(), "datetime": pa.timestamp("us", tz="UTC")}[kind]


def batches(rows, size=BATCH):
    rows = iter(rows)
    while batch := list(islice(rows, size)):
        yield batch


def column_batches(rows, fields, size=BATCH):
    """(columns, count): {field name: list} of exactly `size` rows (the last may hold
    fewer), from dict rows or Columns batches of any size; a field a row lacks is null."""
    names = [f.name for f in fields]
    pending = {name: [] for name in names}
    held = 0
    for part in _parts(rows, names, size):
        for name in names:
            column = part.columns.get(name)
            pending[name].extend(repeat(None, part.size) if column is None else expanded(column))
        held += part.size
        while held >= size:
            yield {name: column[:size] for name, column in pending.items()}, size
            for column in pending.values():
                del column[:size]
            held -= size
    if held:
        yield pending, held


def _parts(rows, names, size):
    """Columns batches: those given as they are, dict rows gathered `size` at a time."""
    gathered = []
    for row in rows:
        if isinstance(row, Columns):
            if gathered:
                yield _gathered(gathered, names)
                gathered = []
            yield row
        else:
            gathered.append(row)
            if len(gathered) == size:
                yield _gathered(gathered, names)
                gathered = []
    if gathered:
        yield _gathered(gathered, names)


def _gathered(rows, names):
    return Columns({name: [row.get(name) for row in rows] for name in names}, len(rows))


def as_datetime(value):
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value)


# A spreadsheet reads a cell that starts with one of these as a formula (OWASP's CSV
# injection rule); a leading ' is added so it is read as text. A cell that starts with '
# gets one too, so coding.dataset.load can take exactly one away and give the text back.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
FORMULA_NOTE = ("Text cells that start with =, +, -, @, a tab, a carriage return or ' "
                "(other than plain numbers such as -3) are written with a ' before them, so a spreadsheet shows them as text instead of "
                "running them as formulas; coding.dataset.load removes it. JSON Lines and "
                "Parquet keep the exact text.")


NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def neutralised(text):
    """Text as a CSV cell a spreadsheet will not run (FORMULA_START); a plain number
    (-3, a number answer in the long table's text column) is no formula and stays."""
    if text.startswith(FORMULA_START) and not NUMBER.fullmatch(text):
        return "'" + text
    return text


def text_cell(value, kind):
    """A value as CSV text: empty for null, true/false, ISO 8601 UTC for datetimes, text
    neutralised against formulas."""
    if value is None:
        return ""
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "datetime":
        return as_datetime(value).isoformat().replace("+00:00", "Z")
    if kind == "number":
        return json.dumps(float(value)) if not isinstance(value, int) else str(value)
    if kind == "integer":
        return str(value)
    return neutralised(str(value))


def json_cell(value, kind):
    # Empty text is written as null, as CSV cannot tell the two apart.
    if value is None or value == "":
        return None
    if kind == "datetime":
        return text_cell(value, kind)
    if kind == "number" and not isinstance(value, int):
        return float(value)
    return value


def csv_column(values, field):
    """A column's CSV cells; a field with `csvTextPrefix` (a document key) writes it before
    a value that would read as a number (coding.export.fields.KEY_PREFIX)."""
    cells = [text_cell(value, field.type) for value in values]
    prefix = field.extra.get("csvTextPrefix")
    if prefix:
        cells = [prefix + cell if NUMBER.fullmatch(cell) else cell for cell in cells]
    return cells


def write_csv(path, fields, rows, on_batch=None):
    count = 0
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([f.name for f in fields])
        for columns, size in column_batches(rows, fields, BATCH):
            writer.writerows(zip(*(csv_column(columns[f.name], f) for f in fields)))
            count += size
            on_batch and on_batch(size)
    return count


def write_jsonl(path, fields, rows, on_batch=None):
    count = 0
    names = [f.name for f in fields]
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for columns, size in column_batches(rows, fields, BATCH):
            cells = zip(*([json_cell(value, f.type) for value in columns[f.name]]
                          for f in fields))
            out.writelines(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n"
                           for row in cells)
            count += size
            on_batch and on_batch(size)
    return count


def arrow_schema(fields):
    import pyarrow as pa

    return pa.schema([pa.field(f.name, arrow_type_of(f.type)) for f in fields])


def write_parquet(path, fields, rows, on_batch=None):
    import pyarrow.parquet as pq

    schema = arrow_schema(fields)
    count = 0
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for table in arrow_batches(rows, fields, schema, BATCH):
            writer.write_table(table)
            count += table.num_rows
            on_batch and on_batch(table.num_rows)
        if count == 0:
            writer.write_table(schema.empty_table())
    return count


def arrow_batches(rows, fields, schema, size=BATCH):
    """Tables of exactly `size` rows (the last may hold fewer), one row group each, from
    dict rows or Columns batches of any size. Each part becomes Arrow arrays as it comes,
    so what waits for the row group to fill is held in Arrow's compact form, not as
    Python objects."""
    import pyarrow as pa

    names = [f.name for f in fields]
    pending, held = [], 0
    for part in _parts(rows, names, size):
        runs = {}  # indices to expand each Repeated's counts with, made once per part
        table = pa.Table.from_arrays(
            [_arrow_column(part.columns.get(f.name), part.size, f.type, schema.field(i).type,
                           runs) for i, f in enumerate(fields)], schema=schema)
        while table.num_rows:
            taken = min(size - held, table.num_rows)
            pending.append(table.slice(0, taken))
            table, held = table.slice(taken), held + taken
            if held == size:
                yield pa.concat_tables(pending).combine_chunks()
                pending, held = [], 0
    if held:
        yield pa.concat_tables(pending).combine_chunks()


def _arrow_column(column, size, kind, arrow_type, runs):
    import pyarrow as pa

    if column is None:
        return arrow_array([None] * size, kind, arrow_type)
    if isinstance(column, Repeated):
        # Each value converted once, then repeated by Arrow: what expanding it first gives.
        key = id(column.counts)
        if key not in runs:
            runs[key] = (column.counts, pa.array(numpy.repeat(
                numpy.arange(len(column.counts)), column.counts)))
        return arrow_array(column.values, kind, arrow_type).take(runs[key][1])
    return arrow_array(column, kind, arrow_type)


NONE = type(None)
# The Python types a column may hold to go to Arrow as it is: what _arrow_cell would
# leave unchanged. Anything else goes through _arrow_cell, value by value.
AS_THEY_ARE = {"datetime": {datetime, NONE}, "number": {float, NONE}}


def arrow_array(values, kind, arrow_type):
    """The column as an Arrow array: [_arrow_cell(v, kind) for v in values], converted by
    pyarrow in one call where no cell needs changing (the types checked in C)."""
    import pyarrow as pa

    if isinstance(values, Timestamps):
        return timestamps_array(values, arrow_type)
    if kind in AS_THEY_ARE:
        if not set(map(type, values)) <= AS_THEY_ARE[kind]:
            values = [_arrow_cell(value, kind) for value in values]
    elif "" in values:
        values = [None if value == "" else value for value in values]
    return pa.array(values, type=arrow_type)


def timestamps_array(column, arrow_type):
    """Timestamps' texts parsed by Arrow: PostgreSQL's (with their offset, '+00') in one
    cast. Texts without an offset (SQLite's, UTC) or any Arrow does not read go the way
    of every other datetime: parsed in Python, then converted (the same instants)."""
    import pyarrow as pa

    try:
        return pa.array(column.texts, type=pa.string()).cast(arrow_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array(list(column), type=arrow_type)


def _arrow_cell(value, kind):
    if value == "":
        return None
    if kind == "datetime":
        return as_datetime(value)
    if kind == "number" and value is not None:
        return float(value)
    return value


WRITERS = {"csv": (write_csv, "csv"), "jsonl": (write_jsonl, "jsonl"),
           "parquet": (write_parquet, "parquet")}

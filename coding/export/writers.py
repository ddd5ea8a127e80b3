"""Writers for CSV, JSON Lines and Parquet: same rows, same order, byte-stable output.

Each takes the shape's fields and an iterable of row dicts, writes in batches
(memory stays flat), and writes nothing that depends on the run (no timestamps).
"""

import csv
import json
from datetime import datetime
from itertools import islice

import pyarrow as pa
import pyarrow.parquet as pq

BATCH = 20_000
ARROW_TYPES = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(),
               "boolean": pa.bool_(), "datetime": pa.timestamp("us", tz="UTC")}


def batches(rows, size=BATCH):
    rows = iter(rows)
    while batch := list(islice(rows, size)):
        yield batch


def as_datetime(value):
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value)


def text_cell(value, kind):
    """A value as CSV text: empty for null, true/false, ISO 8601 UTC for datetimes."""
    if value is None:
        return ""
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "datetime":
        return as_datetime(value).isoformat().replace("+00:00", "Z")
    if kind == "number":
        return json.dumps(float(value)) if not isinstance(value, int) else str(value)
    return str(value)


def json_cell(value, kind):
    # Empty text is written as null, as CSV cannot tell the two apart.
    if value is None or value == "":
        return None
    if kind == "datetime":
        return text_cell(value, kind)
    if kind == "number" and not isinstance(value, int):
        return float(value)
    return value


def write_csv(path, fields, rows, on_batch=None):
    count = 0
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([f.name for f in fields])
        for batch in batches(rows):
            writer.writerows([[text_cell(row.get(f.name), f.type) for f in fields] for row in batch])
            count += len(batch)
            on_batch and on_batch(len(batch))
    return count


def write_jsonl(path, fields, rows, on_batch=None):
    count = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for batch in batches(rows):
            out.writelines(json.dumps({f.name: json_cell(row.get(f.name), f.type) for f in fields},
                                      ensure_ascii=False) + "\n" for row in batch)
            count += len(batch)
            on_batch and on_batch(len(batch))
    return count


def arrow_schema(fields):
    return pa.schema([pa.field(f.name, ARROW_TYPES[f.type]) for f in fields])


def write_parquet(path, fields, rows, on_batch=None):
    schema = arrow_schema(fields)
    count = 0
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for batch in batches(rows):
            columns = [[_arrow_cell(row.get(f.name), f.type) for row in batch] for f in fields]
            writer.write_table(pa.Table.from_arrays(
                [pa.array(column, type=schema.field(i).type) for i, column in enumerate(columns)],
                schema=schema))
            count += len(batch)
            on_batch and on_batch(len(batch))
        if count == 0:
            writer.write_table(schema.empty_table())
    return count


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

"""CSV or JSON Lines with mapped columns, for sources that have no parser of their own.

A mapping names which column holds the key, the title and so on; every other
mapped column goes into the document's metadata. It is plain JSON so a job can
carry it:

    {"source": "openreview", "kind": "paper", "key": "id", "title": "title",
     "url": "link", "published": "date", "metadata": {"abstract": "abstract",
     "authors": "authors"}, "split": {"authors": ";"}}
"""

import codecs
import csv
from dataclasses import dataclass, field

from ..records import MAX_TEXT_CHARS, BadRecord, DocumentRecord, RecordError, any_date, one_line, text
from .lines import MAX_LINE_BYTES, open_binary, read_records, skip_rest_of_line

# csv's own default (131,072) would refuse fields the JSON path accepts.
csv.field_size_limit(max(csv.field_size_limit(), MAX_TEXT_CHARS + 1))

KINDS = ("paper", "thread")


@dataclass
class Mapping:
    key: str
    title: str
    source: str = "table"
    kind: str = "paper"
    url: str | None = None
    published: str | None = None
    updated: str | None = None
    metadata: dict = field(default_factory=dict)  # metadata key -> column
    split: dict = field(default_factory=dict)  # metadata key -> separator, for list fields

    @classmethod
    def from_dict(cls, spec):
        """Check a mapping from job params or the command line; ValueError says what is wrong."""
        if not isinstance(spec, dict) or not spec.get("key") or not spec.get("title"):
            raise ValueError("a mapping needs at least the 'key' and 'title' columns")
        unknown = set(spec) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown mapping entries: {', '.join(sorted(unknown))}")
        mapping = cls(**spec)
        if mapping.kind not in KINDS:
            raise ValueError(f"mapping kind must be one of {KINDS}, not {mapping.kind!r}")
        if not isinstance(mapping.source, str) or not 0 < len(mapping.source) <= 32:
            raise ValueError("mapping source must be a name of 1 to 32 characters")
        return mapping

    def columns(self):
        named = [self.key, self.title, self.url, self.published, self.updated]
        return [c for c in named + list(self.metadata.values()) if c]


def read_csv_file(path, mapping, *, encoding="utf-8", delimiter=","):
    codecs.lookup(encoding)  # an unknown encoding name is a mistake in the request: raise
    with open_binary(path) as stream:
        yield from read_csv(stream, str(path), mapping, encoding=encoding, delimiter=delimiter)


def read_csv(stream, name, mapping, *, encoding="utf-8", delimiter=",",
             max_line_bytes=MAX_LINE_BYTES):
    lines = _BoundedLines(stream, encoding, max_line_bytes)
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    header = next(reader, None)
    if header is None:
        return
    missing = [c for c in mapping.columns() if c not in header]
    if missing:
        raise ValueError(f"{name}: columns {', '.join(missing)} are not in the header")
    while True:
        first_line = lines.number + 1  # a quoted cell may span lines: name where the row starts
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield RecordError(f"{name} line {first_line}", f"malformed CSV: {exc}")
            continue
        while lines.too_long:
            yield RecordError(f"{name} line {lines.too_long.pop(0)}",
                              f"line longer than {max_line_bytes:,} bytes")
        location = f"{name} line {first_line}"
        if not any(cell.strip() for cell in row):
            continue
        try:
            yield _record(_csv_values(row, header, encoding), mapping, location)
        except BadRecord as exc:
            yield RecordError(location, str(exc))


class _BoundedLines:
    """Physical lines for csv.reader, each read with a bound.

    Bytes that are not valid in the encoding become lone surrogates instead of
    stopping the reader; the row holding them is then reported as bad. A line
    over the bound is skipped (an empty line stands in for it) and noted.
    """

    def __init__(self, stream, encoding, max_bytes):
        self.stream, self.encoding, self.max_bytes = stream, encoding, max_bytes
        self.number, self.too_long = 0, []

    def __iter__(self):
        return self

    def __next__(self):
        line = self.stream.readline(self.max_bytes + 1)
        if not line:
            raise StopIteration
        self.number += 1
        if len(line) > self.max_bytes and not line.endswith(b"\n"):
            skip_rest_of_line(self.stream)
            self.too_long.append(self.number)
            return "\n"
        return line.decode(self.encoding, "surrogateescape")


def _csv_values(row, header, encoding):
    if len(row) != len(header):
        raise BadRecord(f"{len(row)} cells where the header has {len(header)}")
    for cell in row:
        try:
            cell.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRecord(f"bytes that are not valid {encoding}") from None
    # An empty cell means "no value", as a missing key does in JSON.
    return {column: (cell if cell != "" else None) for column, cell in zip(header, row)}


def read_jsonl_file(path, mapping, *, max_line_bytes=MAX_LINE_BYTES):
    def to_record(obj, location):
        if not isinstance(obj, dict):
            raise BadRecord(f"a line should hold a JSON object, got {type(obj).__name__}")
        return _record(obj, mapping, location)

    with open_binary(path) as stream:
        yield from read_records(stream, str(path), to_record, max_line_bytes)


def _record(values, mapping, location):
    key = values.get(mapping.key)
    if isinstance(key, int) and not isinstance(key, bool):
        key = str(key)
    key = text(key, mapping.key, required=True, limit=200).strip()
    metadata = {name: _value(values.get(column), name, mapping.split.get(name))
                for name, column in mapping.metadata.items()}
    return DocumentRecord(
        kind=mapping.kind, source=mapping.source, key=key,
        title=one_line(text(values.get(mapping.title), mapping.title, required=True)),
        url=text(values.get(mapping.url), mapping.url, limit=500) or "" if mapping.url else "",
        published=_date(values, mapping.published), updated=_date(values, mapping.updated),
        metadata=metadata, location=location,
    )


def _date(values, column):
    if not column or values.get(column) is None:
        return None
    return any_date(values[column], column)


def _value(value, name, separator):
    if isinstance(value, str):
        text(value, name)
        return [part.strip() for part in value.split(separator) if part.strip()] if separator else value
    if value is None or isinstance(value, (int, float, bool, list, dict)):
        return value
    raise BadRecord(f"field {name!r} has an unsupported type {type(value).__name__}")

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
import json
from collections import Counter
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from ..records import (
    MAX_TEXT_CHARS, UNFORESEEN, BadRecord, DocumentRecord, RecordError, any_date, located,
    one_line, text, unforeseen,
)
from .lines import (
    BROKEN_FILE, MAX_LINE_BYTES, broken_file_reason, empty_reason, line_format, not_utf8_reason,
    open_binary, read_records, skip_rest_of_line, too_long_reason, wide_encoding,
)

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
            raise ValueError(_("a mapping needs at least the 'key' and 'title' columns"))
        unknown = set(spec) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(_("unknown mapping entries: %(names)s") % {
                "names": ", ".join(sorted(unknown))})
        for name in ("key", "title", "url", "published", "updated"):
            if spec.get(name) is not None and not _column_name(spec[name]):
                raise ValueError(_("mapping %(name)s must be a column name, got %(value)s") % {
                    "name": repr(name), "value": f"{spec[name]!r:.60}"})
        for name in ("metadata", "split"):
            value = spec.get(name, {})
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and _column_name(v) for k, v in value.items()):
                raise ValueError((_("mapping %(name)s must be an object of names to columns")
                                  if name == "metadata" else
                                  _("mapping %(name)s must be an object of names to separators"))
                                 % {"name": repr(name)})
        mapping = cls(**spec)
        if mapping.kind not in KINDS:
            raise ValueError(_("mapping kind must be one of %(kinds)s, not %(kind)s") % {
                "kinds": KINDS, "kind": repr(mapping.kind)})
        if not isinstance(mapping.source, str) or not 0 < len(mapping.source) <= 32:
            raise ValueError(_("mapping source must be a name of 1 to 32 characters"))
        return mapping

    def columns(self):
        named = [self.key, self.title, self.url, self.published, self.updated]
        return [c for c in named + list(self.metadata.values()) if c]


def _column_name(value):
    return isinstance(value, str) and 0 < len(value) <= 200


def check_csv_options(encoding, delimiter):
    """Refuse options that cannot read a CSV; ValueError (or LookupError) says why."""
    try:
        name = codecs.lookup(encoding).name if isinstance(encoding, str) else None
        ascii_lines = name and b"id,title\n".decode(name) == "id,title\n"
    except LookupError:  # an unknown name, or a codec that is not a text encoding
        name = ascii_lines = None
    except UnicodeDecodeError:
        ascii_lines = False
    if not name:
        raise UnknownEncoding(_("unknown encoding %(encoding)s") % {
            "encoding": f"{encoding!r:.40}"})
    if not ascii_lines:
        raise UnknownEncoding(_("the encoding %(encoding)s cannot be read line by line (as "
                                "UTF-16 and UTF-32 cannot): save the file as UTF-8") % {
            "encoding": f"{encoding!r:.40}"})
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise ValueError(_("the delimiter must be one character other than a quote or a line "
                           "break, got %(delimiter)s") % {"delimiter": f"{delimiter!r:.20}"})


class UnknownEncoding(ValueError, LookupError):
    """An encoding the CSV reader cannot use: a ValueError for the request checks, a
    LookupError like the one codecs raises for a name it does not know."""


def read_csv_file(path, mapping, *, encoding="utf-8", delimiter=","):
    check_csv_options(encoding, delimiter)
    with open_binary(path) as stream:
        yield from read_csv(stream, str(path), mapping, encoding=encoding, delimiter=delimiter)


def read_csv(stream, name, mapping, *, encoding="utf-8", delimiter=",",
             max_line_bytes=MAX_LINE_BYTES):
    """Yield a record or RecordError per row, each named by the line the row starts on.

    A file that cannot be a table (empty, unreadable header, wide encoding) is
    one RecordError at line 1 and nothing else is read; a mapping naming a column
    the header lacks raises ValueError, as the request itself is wrong.
    """
    lines = _BoundedLines(stream, encoding, max_line_bytes)
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    where = line_format()
    try:
        header = _header(reader, lines, name, mapping, encoding)
    except BadRecord as exc:
        yield RecordError(where % {"file": name, "line": 1} if lines.number else name, str(exc))
        return
    rows = 0
    while True:
        first_line = lines.number + 1  # a quoted cell may span lines: name where the row starts
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            rows += 1
            yield RecordError(where % {"file": name, "line": first_line}, _csv_error(exc))
            continue
        except BROKEN_FILE as exc:
            yield RecordError(where % {"file": name, "line": lines.number + 1},
                              broken_file_reason(exc))
            return
        yield from _too_long(lines, name, max_line_bytes)
        location = where % {"file": name, "line": first_line}
        if not any(cell.strip() for cell in row):
            continue
        rows += 1
        try:
            yield _record(_csv_values(row, header, encoding), mapping, location)
        except BadRecord as exc:
            yield RecordError(location, str(exc))
        except UNFORESEEN as exc:
            yield RecordError(location, unforeseen(exc))
    yield from _too_long(lines, name, max_line_bytes)
    if not rows and not lines.too_long_seen:
        yield RecordError(name, _("the file has a header but no rows"))


def _header(reader, lines, name, mapping, encoding):
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise BadRecord(_("the header is not CSV: %(error)s") % {"error": _csv_error(exc)}) from None
    except BROKEN_FILE as exc:
        raise BadRecord(broken_file_reason(exc)) from None
    if lines.wide:
        raise BadRecord(not_utf8_reason(lines.wide))
    if lines.too_long:
        raise BadRecord(_("the header is longer than %(limit)s bytes") % {
            "limit": f"{lines.max_bytes:,}"})
    if header is None or not any(cell.strip() for cell in header):
        raise BadRecord(empty_reason() if header is None else _("the header line is blank"))
    if any("\x00" in cell for cell in header):
        raise BadRecord(_("the header holds NUL bytes: this is not a text file"))
    try:
        _csv_values(header, header, encoding)
    except BadRecord as exc:
        raise BadRecord(_("the header has %(error)s") % {"error": exc}) from None
    missing = [c for c in mapping.columns() if c not in header]
    if missing:
        raise ValueError(located(name, _("columns %(columns)s are not in the header") % {
            "columns": ", ".join(missing)}))
    counts = Counter(header)
    twice = [c for c in mapping.columns() if counts[c] > 1]
    if twice:
        raise BadRecord(_("column %(column)s appears %(count)s times in the header: which one "
                          "to read is ambiguous") % {"column": repr(twice[0]),
                                                     "count": counts[twice[0]]})
    return header


def _too_long(lines, name, max_line_bytes):
    while lines.too_long:
        yield RecordError(line_format() % {"file": name, "line": lines.too_long.pop(0)},
                          too_long_reason(max_line_bytes))


def _csv_error(exc):
    message = str(exc)
    if message.startswith("field larger than field limit"):
        return _("a cell is longer than %(limit)s characters") % {"limit": f"{MAX_TEXT_CHARS:,}"}
    if message.startswith("new-line character seen in unquoted field"):
        return _("a line break (a lone carriage return) inside an unquoted cell: save the file "
                 "with LF or CRLF line endings")
    return _("malformed CSV: %(error)s") % {"error": message}


class _BoundedLines:
    """Physical lines for csv.reader, each read with a bound.

    Bytes that are not valid in the encoding become lone surrogates instead of
    stopping the reader; the row holding them is then reported as bad. A line
    over the bound is skipped (an empty line stands in for it) and noted.
    """

    def __init__(self, stream, encoding, max_bytes):
        self.stream, self.encoding, self.max_bytes = stream, encoding, max_bytes
        self.number, self.too_long, self.wide, self.too_long_seen = 0, [], None, False

    def __iter__(self):
        return self

    def __next__(self):
        if self.wide:
            raise StopIteration
        line = self.stream.readline(self.max_bytes + 1)
        if not line:
            raise StopIteration
        self.number += 1
        if self.number == 1:
            self.wide = wide_encoding(line)
            if self.wide:
                raise StopIteration  # every line would be garbage: the header check says why
        if len(line) > self.max_bytes and not line.endswith(b"\n"):
            skip_rest_of_line(self.stream)
            self.too_long.append(self.number)
            self.too_long_seen = True
            return "\n"
        decoded = line.decode(self.encoding, "surrogateescape")
        # Spreadsheets write a byte-order mark first; it is not part of the first column's name.
        return decoded.removeprefix("\ufeff") if self.number == 1 else decoded


def _csv_values(row, header, encoding):
    if len(row) != len(header):
        raise BadRecord(_("%(cells)s cells where the header has %(columns)s") % {
            "cells": len(row), "columns": len(header)})
    for cell in row:
        try:
            cell.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRecord(_("bytes that are not valid %(encoding)s") % {
                "encoding": encoding}) from None
    # An empty cell means "no value", as a missing key does in JSON.
    return {column: (cell if cell != "" else None) for column, cell in zip(header, row)}


def read_jsonl_file(path, mapping, *, max_line_bytes=MAX_LINE_BYTES):
    def to_record(obj, location):
        if not isinstance(obj, dict):
            raise BadRecord(_("a line should hold a JSON object, got %(type)s") % {
                "type": type(obj).__name__})
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
    if isinstance(value, (list, dict)):
        # Nested values are stored as they came, within the same bound as a text field.
        size = len(json.dumps(value, ensure_ascii=False))
        if size > MAX_TEXT_CHARS:
            raise BadRecord(_("field %(field)s is %(size)s characters as JSON, over the "
                              "%(limit)s limit") % {"field": repr(name), "size": f"{size:,}",
                                                    "limit": f"{MAX_TEXT_CHARS:,}"})
        return value
    if value is None or isinstance(value, (int, float, bool)):
        return value
    raise BadRecord(_("field %(field)s has an unsupported type %(type)s") % {
        "field": repr(name), "type": type(value).__name__})

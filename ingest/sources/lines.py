"""Reading JSON Lines safely: one bounded line at a time, UTF-8 checked, JSON strict.

The arXiv snapshot is several GB: it is never read whole, and a line too long to
be a record is skipped in chunks rather than loaded.
"""

import gzip
import json

from ..records import BadRecord, RecordError

# A snapshot line is a few KB; a saved GitHub thread with a 3,000-item timeline
# is a few MB. Anything longer is refused without being held in memory.
MAX_LINE_BYTES = 16 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024


def open_binary(path):
    """The file as bytes; `.gz` files are decompressed on the fly."""
    return gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")


def read_lines(stream, name, max_bytes=MAX_LINE_BYTES):
    """Yield (location, line bytes) per non-blank line, or a RecordError for one too long."""
    number = 0
    while line := stream.readline(max_bytes + 1):
        number += 1
        if len(line) > max_bytes and not line.endswith(b"\n"):
            skip_rest_of_line(stream)
            yield RecordError(f"{name} line {number}", f"line longer than {max_bytes:,} bytes")
        elif line.strip():
            yield f"{name} line {number}", line


def skip_rest_of_line(stream):
    while chunk := stream.readline(_SKIP_CHUNK):
        if chunk.endswith(b"\n"):
            return


def decode_utf8(raw):
    try:
        # A byte-order mark is allowed before the first record, and means nothing.
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise BadRecord(
            f"not UTF-8: byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of the line"
        ) from None


def parse_json(raw):
    """One JSON value from bytes; duplicate object keys, NaN and bad UTF-8 are refused."""
    try:
        return json.loads(decode_utf8(raw), object_pairs_hook=_no_duplicate_keys,
                          parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise BadRecord(f"malformed JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise BadRecord("malformed JSON: nested too deeply") from None


def _no_duplicate_keys(pairs):
    # json keeps the last of two equal keys silently; two ids in one record
    # means the record cannot be trusted.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise BadRecord(f"duplicate key {duplicate[:60]!r} in one JSON object")
    return obj


def _no_constants(name):
    raise BadRecord(f"{name} is not a JSON value")


def read_records(stream, name, to_record, max_bytes=MAX_LINE_BYTES):
    """Yield to_record(parsed JSON, location) per line, or a RecordError naming the line
    when the line, its JSON or the record is bad: one bad line never stops the rest."""
    for item in read_lines(stream, name, max_bytes):
        if isinstance(item, RecordError):
            yield item
            continue
        location, raw = item
        try:
            yield to_record(parse_json(raw), location)
        except BadRecord as exc:
            yield RecordError(location, str(exc))

"""Reading JSON Lines safely: one bounded line at a time, UTF-8 checked, JSON strict.

The arXiv snapshot is several GB: it is never read whole, and a line too long to
be a record is skipped in chunks rather than loaded. What cannot be a file of
records at all is named once instead of line by line: an empty file, a file in
UTF-16 or UTF-32 (its byte-order mark), a `.gz` that is not gzip or is cut short.
"""

import gzip
import json
import math
import zlib

from ..records import UNFORESEEN, BadRecord, RecordError, unforeseen

# A snapshot line is a few KB; a saved GitHub thread with a 3,000-item timeline
# is a few MB. Anything longer is refused without being held in memory.
MAX_LINE_BYTES = 16 * 1024 * 1024
_SKIP_CHUNK = 1024 * 1024
# No identifier, count or date needs more digits; Python refuses to convert
# integers over 4,300 digits at all.
MAX_NUMBER_DIGITS = 100

# Errors reading a compressed file: not gzip at all, cut short, or corrupt.
BROKEN_FILE = (OSError, EOFError, zlib.error)

_WIDE_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe\x00\x00", "UTF-32"),
              (b"\xfe\xff", "UTF-16"), (b"\xff\xfe", "UTF-16"))


def open_binary(path):
    """The file as bytes; `.gz` files are decompressed on the fly."""
    return gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")


def wide_encoding(start):
    """'UTF-16' or 'UTF-32' when the bytes open with that byte-order mark, else None."""
    return next((name for bom, name in _WIDE_BOMS if start.startswith(bom)), None)


def not_utf8_reason(encoding):
    return f"the file is {encoding} (it starts with a {encoding} byte-order mark): save it as UTF-8"


def broken_file_reason(exc):
    return f"the file cannot be read to the end ({type(exc).__name__}: {exc})"


def read_lines(stream, name, max_bytes=MAX_LINE_BYTES):
    """Yield (location, line bytes) per non-blank line, or a RecordError for one too long.

    A file with no line at all is one RecordError; so is a file in a wide
    encoding, or a compressed file that breaks (after the lines read before it).
    """
    number, seen = 0, False
    while True:
        try:
            line = stream.readline(max_bytes + 1)
            if not line:
                break
            number += 1
            if number == 1 and (encoding := wide_encoding(line)):
                yield RecordError(f"{name} line 1", not_utf8_reason(encoding))
                return
            if len(line) > max_bytes and not line.endswith(b"\n"):
                skip_rest_of_line(stream)
                seen = True
                yield RecordError(f"{name} line {number}", f"line longer than {max_bytes:,} bytes")
            elif line.strip():
                seen = True
                yield f"{name} line {number}", line
        except BROKEN_FILE as exc:
            yield RecordError(f"{name} line {number + 1}", broken_file_reason(exc))
            return
    if not seen:
        yield RecordError(name, "the file is empty" if not number else
                          f"the file has no records: its {number:,} lines are blank")


def skip_rest_of_line(stream):
    while chunk := stream.readline(_SKIP_CHUNK):
        if chunk.endswith(b"\n"):
            return


def decode_utf8(raw, what="the line"):
    try:
        # A byte-order mark is allowed before the first record, and means nothing.
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise BadRecord(
            f"not UTF-8: byte 0x{raw[exc.start]:02x} at byte {exc.start + 1} of {what}"
        ) from None


def parse_json(raw, what="the line"):
    """One JSON value from bytes; duplicate object keys, NaN, numbers too large for any
    field and bad UTF-8 are refused."""
    try:
        return json.loads(decode_utf8(raw, what), object_pairs_hook=_no_duplicate_keys,
                          parse_constant=_no_constants, parse_int=_int, parse_float=_float)
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


def _int(digits):
    if len(digits) > MAX_NUMBER_DIGITS:
        raise BadRecord(f"a number of {len(digits):,} digits (more than {MAX_NUMBER_DIGITS})")
    return int(digits)


def _float(digits):
    value = float(digits)
    if not math.isfinite(value):  # 1e400: a JSON number no database stores
        raise BadRecord(f"the number {digits[:40]} is too large")
    return value


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
        except UNFORESEEN as exc:
            yield RecordError(location, unforeseen(exc))

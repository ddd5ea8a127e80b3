"""Reading JSON Lines safely: one bounded line at a time, UTF-8 checked, JSON strict.

The arXiv snapshot is several GB: it is never read whole, and a line too long to
be a record is skipped in chunks rather than loaded. What cannot be a file of
records at all is named once instead of line by line: an empty file, a file in
UTF-16 or UTF-32 (its byte-order mark), a `.gz` that is not gzip or is cut short.
"""

import codecs
import gzip
import json
import math
import re
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
        raise BadRecord(f"malformed JSON: {json_error(exc)} at column {exc.colno}") from None
    except RecursionError:
        raise BadRecord("malformed JSON: nested too deeply") from None


def json_error(exc):
    """The decoder's message without a trailing 'at' ("Invalid control character at"),
    which the caller follows with its own place."""
    return exc.msg.removesuffix(" at").strip()


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


# --- a stream of JSON values: arrays, objects, concatenated, pages of pages ----------

_STRICT = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants,
                           parse_int=_int, parse_float=_float)
# Only finds where a value the strict decoder refused ends, so it converts nothing.
_PLAIN = json.JSONDecoder(parse_int=len, parse_float=len, parse_constant=len)
_SPACE = " \t\r\n"
_CHUNK = 1024 * 1024
# Bytes that are not UTF-8, as the surrogateescape handler keeps them (U+DC80–U+DCFF).
_ESCAPED = re.compile("[\udc80-\udcff]")


def iter_json_values(stream, name, max_value_bytes=MAX_LINE_BYTES, chunk=_CHUNK):
    """Yield (location, value) for each JSON value in a file, or a RecordError where one is bad.

    Whatever `gh api` saved: one array, one object, arrays or objects back to back
    (`--paginate`), or pages nested in an outer array (`--slurp`). The elements of
    the arrays are the values, located as "item N"; they are decoded one at a time
    (json.JSONDecoder.raw_decode) from a buffer of about one chunk, so memory stays
    flat whatever the file's size. A value the strict checks refuse (a key twice, a
    number too large, bytes that are not UTF-8) is one error and reading goes on;
    JSON that breaks, or a value over max_value_bytes, ends the file, as nothing
    after it can be placed.
    """
    yield from _JsonStream(stream, name, max_value_bytes, chunk).values()


class _JsonStream:
    def __init__(self, stream, name, max_value_bytes, chunk):
        self.stream, self.name, self.max_bytes, self.chunk = stream, name, max_value_bytes, chunk
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self.buf, self.pos, self.eof, self.count = "", 0, False, 0
        self.buf_byte = 0  # the file's byte offset of buf[0]
        self.first = True

    def _more(self, size=None):
        """Read another chunk onto the buffer (dropping what was decoded); False at the end."""
        if self.eof:
            return False
        raw = self.stream.read(size or self.chunk)
        if self.first:
            self.first = False
            if encoding := wide_encoding(raw):
                raise BadRecord(not_utf8_reason(encoding))
            if raw.startswith(b"\xef\xbb\xbf"):  # a byte-order mark means nothing
                raw, self.buf_byte = raw[3:], 3
        text = self.decoder.decode(raw, final=not raw)
        self.buf_byte += len(self.buf[:self.pos].encode("utf-8", "surrogateescape"))
        self.buf, self.pos = self.buf[self.pos:] + text, 0
        self.eof = not raw
        return bool(raw)

    def _peek(self):
        """The next character that is not white space, or '' at the end."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def _not_utf8(self, index):
        byte = self.buf_byte + len(self.buf[:index].encode("utf-8", "surrogateescape"))
        value = ord(self.buf[index]) - 0xDC00
        return f"not UTF-8: byte 0x{value:02x} at byte {byte + 1:,} of the file"

    def _where(self):
        return f"{self.name} item {self.count}" if self.count else self.name

    def values(self):
        try:
            yield from self._values()
        except BROKEN_FILE as exc:
            yield RecordError(self._where(), broken_file_reason(exc))
        except BadRecord as exc:
            yield RecordError(self._where(), str(exc))

    def _values(self):
        depth = 0  # arrays open around the next value: 1 in a list, 2 in --slurp's pages
        if self._peek() == "":
            raise BadRecord("the file is empty")
        while True:
            char = self._peek()
            if char == "":
                if depth:
                    raise BadRecord(f"the file ends inside a JSON array, after {self.count:,} "
                                    "items: it is cut short")
                return
            if _ESCAPED.match(char):
                self.count += 1
                raise BadRecord(self._not_utf8(self.pos))
            if char == "[" and depth < 2:
                depth += 1
                self.pos += 1
                continue
            if char == "]" and depth:
                depth -= 1
                self.pos += 1
                if depth and self._peek() == ",":
                    self.pos += 1
                continue
            yield self._value()
            if depth and self._peek() == ",":
                self.pos += 1
                if self._peek() == "]":
                    raise BadRecord("malformed JSON: a comma before ']'")

    def _value(self):
        """Decode the value at pos: (location, value), or a RecordError when it is refused."""
        self.count += 1
        while True:
            start = self.pos
            try:
                value, end = _STRICT.raw_decode(self.buf, start)
            except BadRecord as exc:  # well-formed, but refused: skip it whole and go on
                try:
                    _, end = _PLAIN.raw_decode(self.buf, start)
                except json.JSONDecodeError:
                    if self._grow():
                        continue
                    raise BadRecord(str(exc)) from None
                return self._refused(start, end, str(exc))
            except json.JSONDecodeError as exc:
                if self._grow():
                    continue
                if bad := _ESCAPED.search(self.buf, start, max(exc.pos, start) + 1):
                    raise BadRecord(self._not_utf8(bad.start())) from None
                raise BadRecord(f"malformed JSON: {json_error(exc)} at byte "
                                f"{self.buf_byte + len(self.buf[:exc.pos].encode('utf-8', 'surrogateescape')) + 1:,}"
                                " of the file") from None
            except RecursionError:
                raise BadRecord("malformed JSON: nested too deeply") from None
            if end == len(self.buf) and not isinstance(value, (dict, list)) and self._grow():
                continue  # a number or word the buffer's end may have cut ("12" of "125")
            if bad := _ESCAPED.search(self.buf, start, end):
                return self._refused(start, end, self._not_utf8(bad.start()))
            self.pos = end
            return self._where(), value

    def _refused(self, start, end, reason):
        bad = _ESCAPED.search(self.buf, start, end)  # bad bytes say more than what they broke
        error = RecordError(self._where(), self._not_utf8(bad.start()) if bad else reason)
        self.pos = end
        return error

    def _grow(self):
        """More of the file for a value the buffer's end may cut; False when there is no
        more, an error when the value would pass the bound."""
        if self.eof:
            return False
        if len(self.buf) - self.pos > self.max_bytes:
            raise BadRecord(f"an item longer than {self.max_bytes:,} bytes")
        return self._more(max(self.chunk, len(self.buf) - self.pos))


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

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

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

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
    return _("the file is %(encoding)s (it starts with a %(encoding)s byte-order mark): save it "
             "as UTF-8") % {"encoding": encoding}


def broken_file_reason(exc):
    return _("the file cannot be read to the end (%(error)s)") % {
        "error": f"{type(exc).__name__}: {exc}"}


def line_of(name, number):
    """Where a line is: 'papers.jsonl line 17', in the reader's words."""
    return line_format() % {"file": name, "line": number}


def line_format():
    # Looked up once per file by the readers: a snapshot has millions of lines.
    return _("%(file)s line %(line)s")


def too_long_reason(max_bytes):
    return _("line longer than %(limit)s bytes") % {"limit": f"{max_bytes:,}"}


def empty_reason():
    return _("the file is empty")


def read_lines(stream, name, max_bytes=MAX_LINE_BYTES):
    """Yield (location, line bytes) per non-blank line, or a RecordError for one too long.

    A file with no line at all is one RecordError; so is a file in a wide
    encoding, or a compressed file that breaks (after the lines read before it).
    """
    number, seen = 0, False
    where = line_format()
    while True:
        try:
            line = stream.readline(max_bytes + 1)
            if not line:
                break
            number += 1
            if number == 1 and (encoding := wide_encoding(line)):
                yield RecordError(where % {"file": name, "line": 1}, not_utf8_reason(encoding))
                return
            if len(line) > max_bytes and not line.endswith(b"\n"):
                skip_rest_of_line(stream)
                seen = True
                yield RecordError(where % {"file": name, "line": number},
                                  too_long_reason(max_bytes))
            elif line.strip():
                seen = True
                yield where % {"file": name, "line": number}, line
        except BROKEN_FILE as exc:
            yield RecordError(where % {"file": name, "line": number + 1}, broken_file_reason(exc))
            return
    if not seen:
        yield RecordError(name, empty_reason() if not number else
                          _("the file has no records: its %(count)s lines are blank")
                          % {"count": f"{number:,}"})


def skip_rest_of_line(stream):
    while chunk := stream.readline(_SKIP_CHUNK):
        if chunk.endswith(b"\n"):
            return


def decode_utf8(raw, what=None):
    try:
        # A byte-order mark is allowed before the first record, and means nothing.
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise BadRecord(
            _("not UTF-8: byte 0x%(byte)s at byte %(offset)s of %(what)s") % {
                "byte": f"{raw[exc.start]:02x}", "offset": exc.start + 1,
                "what": what or _("the line")}
        ) from None


def parse_json(raw, what=None):
    """One JSON value from bytes; duplicate object keys, NaN, numbers too large for any
    field and bad UTF-8 are refused."""
    text = decode_utf8(raw, what)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys,
                          parse_constant=_no_constants, parse_int=_int, parse_float=_float)
    except json.JSONDecodeError as exc:
        if cut_short := _cut_short(text, exc):
            raise BadRecord(cut_short) from None
        raise BadRecord(_("malformed JSON: %(error)s at column %(column)s") % {
            "error": json_error(exc), "column": exc.colno}) from None
    except RecursionError:
        raise BadRecord(too_deep_reason()) from None


def _cut_short(text, exc):
    """What a person can act on when the JSON stops at the end of the line (a line cut
    short, or a record split over two lines), instead of the decoder's "Invalid control
    character at column 387"; None when the problem is elsewhere in the line."""
    at_end = exc.pos >= len(text.rstrip()) and text.strip()
    message = exc.msg.removesuffix(" at").strip()
    # An unterminated string is named by where it starts; it runs to the end of the line.
    if message == "Unterminated string starting" or (
            at_end and message == "Invalid control character"):
        return _("malformed JSON: the line ends inside a string (cut short, or a record that "
                 "goes on over the next line: JSON Lines holds one whole record per line)")
    if at_end:
        return _("malformed JSON: the line ends before its record does (cut short, or a record "
                 "that goes on over the next line: JSON Lines holds one whole record per line)")
    return None


def too_deep_reason():
    return _("malformed JSON: nested too deeply")


# The decoder's own messages (json.decoder, json.scanner), put in the reader's words.
JSON_ERRORS = {gettext_noop("Expecting value"),
               gettext_noop("Expecting property name enclosed in double quotes"),
               gettext_noop("Expecting ':' delimiter"), gettext_noop("Expecting ',' delimiter"),
               gettext_noop("Unterminated string starting"),
               gettext_noop("Invalid control character"), gettext_noop("Invalid \\escape"),
               gettext_noop("Invalid \\uXXXX escape"), gettext_noop("Extra data")}


def json_error(exc):
    """The decoder's message without a trailing 'at' ("Invalid control character at"),
    which the caller follows with its own place; in the reader's language when known."""
    message = exc.msg.removesuffix(" at").strip()
    return _(message) if message in JSON_ERRORS else message


def _no_duplicate_keys(pairs):
    # json keeps the last of two equal keys silently; two ids in one record
    # means the record cannot be trusted.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise BadRecord(_("duplicate key %(key)s in one JSON object") % {
            "key": repr(duplicate[:60])})
    return obj


def _no_constants(name):
    raise BadRecord(_("%(name)s is not a JSON value") % {"name": name})


def _int(digits):
    if len(digits) > MAX_NUMBER_DIGITS:
        raise BadRecord(_("a number of %(digits)s digits (more than %(limit)s)") % {
            "digits": f"{len(digits):,}", "limit": MAX_NUMBER_DIGITS})
    return int(digits)


def _float(digits):
    value = float(digits)
    if not math.isfinite(value):  # 1e400: a JSON number no database stores
        raise BadRecord(_("the number %(number)s is too large") % {"number": digits[:40]})
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
        return _("not UTF-8: byte 0x%(byte)s at byte %(offset)s of %(what)s") % {
            "byte": f"{value:02x}", "offset": f"{byte + 1:,}", "what": _("the file")}

    def _where(self):
        if not self.count:
            return self.name
        return _("%(file)s item %(item)s") % {"file": self.name, "item": self.count}

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
            raise BadRecord(empty_reason())
        while True:
            char = self._peek()
            if char == "":
                if depth:
                    raise BadRecord(_("the file ends inside a JSON array, after %(count)s "
                                      "items: it is cut short") % {"count": f"{self.count:,}"})
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
                    raise BadRecord(_("malformed JSON: a comma before ']'"))

    def _value(self):
        """Decode the value at pos: (location, value), or a RecordError when it is refused."""
        self.count += 1
        while True:
            start = self.pos
            try:
                value, end = _STRICT.raw_decode(self.buf, start)
            except BadRecord as exc:  # well-formed, but refused: skip it whole and go on
                try:
                    _value, end = _PLAIN.raw_decode(self.buf, start)
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
                offset = self.buf_byte + len(self.buf[:exc.pos].encode("utf-8",
                                                                       "surrogateescape")) + 1
                raise BadRecord(_("malformed JSON: %(error)s at byte %(offset)s of the file")
                                % {"error": json_error(exc), "offset": f"{offset:,}"}) from None
            except RecursionError:
                raise BadRecord(too_deep_reason()) from None
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
            raise BadRecord(_("an item longer than %(limit)s bytes") % {
                "limit": f"{self.max_bytes:,}"})
        return self._more(max(self.chunk, len(self.buf) - self.pos))


class Unreadable(Exception):
    """A line that cannot be read as text: not UTF-8, or longer than a line may be. The
    rest of the file cannot be trusted to split into the same lines, so reading stops."""

    def __init__(self, line, problem):
        self.line, self.problem = line, problem
        super().__init__(problem)


class TextLines:
    """A binary file's lines as text, one at a time (csv reads any iterable of lines):
    UTF-8 (a BOM allowed), each at most `max_bytes`; Unreadable names the line
    otherwise. A file that is not UTF-8 at all (UTF-16, Latin-1, random bytes) is told
    apart from one bad byte."""

    def __init__(self, raw, max_bytes=MAX_LINE_BYTES):
        self.raw, self.number, self.max_bytes = raw, 0, max_bytes

    def __iter__(self):
        return self

    def __next__(self):
        data = self.raw.readline(self.max_bytes + 1)
        if not data:
            raise StopIteration
        self.number += 1
        if len(data) > self.max_bytes and not data.endswith(b"\n"):
            raise Unreadable(self.number, too_long_reason(self.max_bytes))
        if self.number == 1:
            if encoding := wide_encoding(data):
                raise Unreadable(1, not_utf8_reason(encoding))
            data = data.removeprefix(b"\xef\xbb\xbf")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise Unreadable(self.number, _(
                "not UTF-8 text (byte %(byte)s); save the file as UTF-8")
                % {"byte": f"0x{data[error.start]:02x}"}) from None


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

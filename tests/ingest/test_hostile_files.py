"""A corpus of malformed and hostile files for every importer.

Each importer (saved arXiv API responses, OAI-PMH responses, the arXiv metadata
snapshot, mapped CSV and JSON Lines tables, saved GitHub threads as JSON Lines and
as one JSON array) is fed every hostile case that applies to it: truncated
mid-record, wrong encodings, billion laughs and external entities, fields and lines
over the limits, wrong JSON types, duplicate records and keys, empty files, binary
garbage, byte-order marks. Every file is generated here from invented records.

For each pair the import must:

- report the error where it is (the file, and its line, entry, record or item) in
  words a person can act on;
- write every good record in lenient mode, and in strict mode the good records read
  before the first bad one, then stop with that bad record's location;
- never half-write a record (a thread is written with all its posts or not at all);
- never let an exception other than strict mode's escape.

The last part drives some of these files through the study's import page and API as
its owner, following the job to its page and its API, with no 5xx on the way.
"""

import gzip
import json
import random
import re
from dataclasses import dataclass, field
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.utils.html import escape

from ingest.imports import check_params, run_import
from ingest.load import StrictModeError
from ingest.models import Document, Post
from ingest.records import MAX_TEXT_CHARS
from ingest.sources import github as github_source
from ingest.sources.lines import MAX_LINE_BYTES
from ingest.sources.xml import MAX_DEPTH, MAX_RUN
from workbench.models import Job

from .conftest import FIXTURES

LIMIT = f"{MAX_TEXT_CHARS:,}"  # "262,144", as messages write it


# --- the importers: how each writes an invented record and a file of them ---------

class Importer:
    """One importer: its format, how record n looks in it, and how errors are located.

    `unit` says how far a broken byte sequence reaches: "line" (only that line or
    row is lost), "stream" (an XML document is read up to the break) or "file" (a
    JSON document read whole is refused whole).
    """

    name = fmt = suffix = unit = ""
    abstract_field = "abstract"

    def params(self, path):
        return {"format": self.fmt, "path": str(path)}

    def key(self, n):
        return f"2599.{10000 + n}"

    def title(self, n):
        return f"Invented Title Number {n}"

    def record(self, n, title=None, abstract=None):
        """Record n as text (one line of the file, no line break)."""
        raise NotImplementedError

    def file(self, lines, *, encoding="UTF-8"):
        """The whole file around these records (each bytes, already encoded)."""
        return b"\n".join(lines) + b"\n"

    def where(self, i, n):
        """How the record at position i (1-based) of the file, record n, is located."""
        return f"line {i}"

    def file_of(self, *ns, **fields):
        return self.file([self.record(n, **fields).encode() for n in ns])


def xml_text(value):
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class Atom(Importer):
    name, fmt, suffix, unit = "atom", "arxiv_atom_file", ".xml", "stream"
    header_lines = 2

    def record(self, n, title=None, abstract=None):
        return (f"<entry><id>http://arxiv.org/abs/{self.key(n)}v1</id>"
                f"<title>{xml_text(title or self.title(n))}</title>"
                f"<summary>{xml_text(abstract or 'An invented abstract.')}</summary>"
                "<published>2025-09-01T10:00:00Z</published><category term=\"cs.LG\"/>"
                "<author><name>Ann Example</name></author></entry>")

    def file(self, lines, *, encoding="UTF-8", doctype=b""):
        head = (f'<?xml version="1.0" encoding="{encoding}"?>\n'.encode() + doctype
                + b'<feed xmlns="http://www.w3.org/2005/Atom" '
                  b'xmlns:arxiv="http://arxiv.org/schemas/atom">\n')
        return head + b"\n".join(lines) + b"\n</feed>\n"

    def where(self, i, n):
        return f"entry {i}"


class Oai(Atom):
    name, fmt = "oai", "arxiv_oai_file"

    def record(self, n, title=None, abstract=None):
        return (f"<record><header><identifier>oai:arXiv.org:{self.key(n)}</identifier>"
                "<datestamp>2025-09-02</datestamp></header><metadata>"
                '<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/">'
                f"<id>{self.key(n)}</id><version version=\"v1\">"
                "<date>Mon, 1 Sep 2025 10:00:00 GMT</date></version>"
                f"<title>{xml_text(title or self.title(n))}</title><authors>Ann Example</authors>"
                f"<categories>cs.LG</categories><abstract>{xml_text(abstract or 'Invented.')}"
                "</abstract></arXivRaw></metadata></record>")

    def file(self, lines, *, encoding="UTF-8", doctype=b""):
        head = (f'<?xml version="1.0" encoding="{encoding}"?>\n'.encode() + doctype
                + b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>\n')
        return head + b"\n".join(lines) + b"\n</ListRecords></OAI-PMH>\n"

    def where(self, i, n):
        return f"record {i} (oai:arXiv.org:{self.key(n)})"


class JsonImporter(Importer):
    def obj(self, n, title=None, abstract=None):
        raise NotImplementedError

    def record(self, n, title=None, abstract=None):
        return json.dumps(self.obj(n, title, abstract), ensure_ascii=False)


class Snapshot(JsonImporter):
    name, fmt, suffix, unit = "snapshot", "arxiv_snapshot_file", ".jsonl", "line"

    def obj(self, n, title=None, abstract=None):
        return {"id": self.key(n), "submitter": "Ann Example", "authors": "Ann Example",
                "title": title or self.title(n), "abstract": abstract or "Invented.",
                "categories": "cs.LG", "doi": None, "update_date": "2025-09-02",
                "versions": [{"version": "v1", "created": "Mon, 1 Sep 2025 10:00:00 GMT"}],
                "authors_parsed": [["Example", "Ann", ""]]}


TABLE_MAPPING = {"source": "hostile", "key": "id", "title": "title", "published": "date",
                 "metadata": {"abstract": "abstract", "authors": "authors"},
                 "split": {"authors": ";"}}


class Jsonl(JsonImporter):
    name, fmt, suffix, unit = "jsonl", "jsonl_file", ".jsonl", "line"

    def params(self, path):
        return {**super().params(path), "mapping": TABLE_MAPPING}

    def key(self, n):
        return f"h-{n}"

    def obj(self, n, title=None, abstract=None):
        return {"id": self.key(n), "title": title or self.title(n), "date": "2025-09-01",
                "abstract": abstract or "Invented.", "authors": "Ann Example; Bo Sample"}


class Csv(Jsonl):
    name, fmt, suffix, unit = "csv", "csv_file", ".csv", "line"
    header = b"id,title,date,abstract,authors"

    def record(self, n, title=None, abstract=None):
        cells = [self.key(n), title or self.title(n), "2025-09-01", abstract or "Invented.",
                 "Ann Example; Bo Sample"]
        return ",".join('"' + c.replace('"', '""') + '"' for c in cells)

    def file(self, lines, *, encoding="UTF-8", header=None):
        return b"\n".join([header or self.header, *lines]) + b"\n"

    def where(self, i, n):
        return f"line {i + 1}"  # after the header


class GithubLines(JsonImporter):
    name, fmt, suffix, unit = "github", "github_file", ".jsonl", "line"
    abstract_field = None  # the issue body: its label names the issue id

    def key(self, n):
        return f"example-lab/lantern-probes#{n}"

    def obj(self, n, title=None, abstract=None):
        return {
            "repository": "example-lab/lantern-probes",
            "issue": {"number": n, "id": 9100000 + n, "title": title or self.title(n),
                      "html_url": f"https://github.com/example-lab/lantern-probes/issues/{n}",
                      "created_at": "2025-10-01T09:00:00Z", "updated_at": "2025-10-02T09:00:00Z",
                      "state": "open", "user": {"login": "ann-example"},
                      "body": abstract or "An invented issue.", "labels": [{"name": "bug"}]},
            "comments": [{"id": 9200000 + n, "user": {"login": "bo-sample"},
                          "created_at": "2025-10-01T10:00:00Z", "body": "An invented reply.",
                          "author_association": "NONE"}],
            "timeline": [{"event": "labeled", "actor": {"login": "ann-example"},
                          "created_at": "2025-10-01T09:30:00Z", "label": {"name": "bug"}}],
        }

    def field_label(self, n):
        return f"issue {9100000 + n} body"


class GithubArray(GithubLines):
    """A JSON array of bundles, as `gh api --paginate` saves a list: streamed item by item
    (unit "items": what breaks the JSON ends the file there, a bad item is skipped)."""

    name, suffix, unit = "github_array", ".json", "items"

    def file(self, lines, *, encoding="UTF-8"):
        return b"[\n" + b",\n".join(lines) + b"\n]\n"

    def where(self, i, n):
        return f"item {i}"


ATOM, OAI, SNAPSHOT, CSV, JSONL = Atom(), Oai(), Snapshot(), Csv(), Jsonl()
GITHUB, GITHUB_ARRAY = GithubLines(), GithubArray()
IMPORTERS = [ATOM, OAI, SNAPSHOT, CSV, JSONL, GITHUB, GITHUB_ARRAY]
XML = [ATOM, OAI]
JSON_IMPORTERS = [SNAPSHOT, JSONL, GITHUB, GITHUB_ARRAY]
LINE_IMPORTERS = [SNAPSHOT, CSV, JSONL, GITHUB]


def field_label(imp, n):
    return imp.abstract_field or imp.field_label(n)


# --- what a case expects -------------------------------------------------------------

@dataclass
class Expect:
    data: bytes
    imported: set | None  # record numbers written in lenient mode (None: see check)
    strict: set | None = None  # written in strict mode before it stops (None: not checked)
    where: str | None = None  # regex after the path: "line 3", "entry 2", "line 5 column \d+"
    reason: str | None = None  # regex the first error's reason must match
    errors: int | None = 1  # how many errors; None: at least one
    suffix: str | None = None
    check: object = None  # a callable(imp) for anything else to verify
    warnings: list = field(default_factory=list)  # (where regex, reason regex)


def broken_at(imp, data, i, n_total, reason):
    """Record i of n_total has bytes the reader cannot decode: what each importer keeps."""
    before, after = set(range(1, i)), set(range(i + 1, n_total + 1))
    if imp.unit == "line":
        return Expect(data, before | after, before, re.escape(imp.where(i, i)), reason)
    if imp.unit == "stream":  # XML: read up to the break, which is on record i's line
        return Expect(data, before, before, rf"line {i + imp.header_lines} column \d+", reason)
    if imp.unit == "items":  # streamed JSON: read up to the break, which is item i
        return Expect(data, before, before, re.escape(imp.where(i, i)), reason)
    return Expect(data, set(), set(), "", reason)  # read whole, refused whole


def bad_record(imp, data, i, n_total, reason, file_level=False):
    """Record i of n_total is well-formed but wrong: only it is lost."""
    before, after = set(range(1, i)), set(range(i + 1, n_total + 1))
    if file_level and imp.unit == "file":
        return Expect(data, set(), set(), "", reason)
    return Expect(data, before | after, before, re.escape(imp.where(i, i)), reason)


def encoded(imp, n, title=None, abstract=None, encoding="utf-8"):
    return imp.record(n, title=title, abstract=abstract).encode(encoding)


# --- the cases -------------------------------------------------------------------------

def empty(imp):
    return Expect(b"", set(), set(), "", r"^the file is empty$")


def truncated_mid_record(imp):
    """The third record is cut in the middle of a tag, a string or a quoted cell."""
    whole = [encoded(imp, n) for n in (1, 2, 3)]
    cut = whole[2].index(b"<title>") + 4 if imp.unit == "stream" else len(whole[2]) // 2
    # In XML, "<tit": inside a tag; in JSON inside a string; in CSV inside a quoted cell.
    data = imp.file(whole)
    data = data[:data.index(whole[2]) + cut]
    reason = {ATOM.name: "malformed XML: unclosed token", OAI.name: "malformed XML: unclosed token",
              CSV.name: "malformed CSV: unexpected end of data"}.get(imp.name)
    if reason is None:  # JSON Lines name the cut line's end; a JSON document the string
        return broken_at(imp, data, 3, 3, r"^malformed JSON: (the line ends inside a string "
                                          r"\(cut short|Unterminated string starting at)")
    return broken_at(imp, data, 3, 3, "^" + re.escape(reason))


def latin1_bytes(imp):
    """A UTF-8 file whose second record was written in Latin-1 (é is one byte, 0xe9)."""
    data = imp.file([encoded(imp, 1), encoded(imp, 2, title="Café Société", encoding="latin-1"),
                     encoded(imp, 3)])
    return _undecodable(imp, data, _not_utf8(imp, "0xe9"))


def invalid_utf8_sequences(imp):
    """An encoded surrogate and an overlong slash: bytes no UTF-8 decoder accepts."""
    line = encoded(imp, 2, title="Bad XXX bytes").replace(b"XXX", b"\xed\xa0\x80\xc0\xaf")
    data = imp.file([encoded(imp, 1), line, encoded(imp, 3)])
    return _undecodable(imp, data, _not_utf8(imp, "0xed"))


def _undecodable(imp, data, reason):
    """Record 2 of 3 has bytes that are not UTF-8: a streamed JSON file skips that item
    only (the bytes are inside one value), the others as broken_at says."""
    if imp.unit == "items":
        return bad_record(imp, data, 2, 3, reason)
    return broken_at(imp, data, 2, 3, reason)


def _not_utf8(imp, byte):
    if imp.unit == "stream":
        return r"^malformed XML: not well-formed \(invalid token\)$"
    if imp is CSV:
        return r"^bytes that are not valid utf-8$"
    whole = "file" if imp.unit in ("file", "items") else "line"
    return rf"^not UTF-8: byte {byte} at byte \d+ of the {whole}$"


def utf16(imp):
    """The whole file in UTF-16 with its byte-order mark: XML may be; the others may not."""
    lines = [encoded(imp, n) for n in (1, 2, 3)]
    if imp.unit == "stream":
        data = imp.file(lines, encoding="UTF-16").decode("utf-8").encode("utf-16")
        return Expect(data, {1, 2, 3}, errors=0)
    data = imp.file(lines).decode("utf-8").encode("utf-16")
    where = "" if imp.unit in ("file", "items") else "line 1"
    return Expect(data, set(), set(), where,
                  r"^the file is UTF-16 \(it starts with a UTF-16 byte-order mark\): save it "
                  r"as UTF-8$")


def utf8_bom(imp):
    """A UTF-8 byte-order mark first, as spreadsheets and some editors write: harmless."""
    return Expect(b"\xef\xbb\xbf" + imp.file_of(1, 2, 3), {1, 2, 3}, errors=0)


def binary_garbage(imp):
    """An image's signature and random bytes where records should be."""
    data = b"\x89PNG\r\n\x1a\n" + random.Random(7).randbytes(2048)
    reason = {"stream": r"^malformed XML: not well-formed \(invalid token\)$",
              "file": r"^not UTF-8: byte 0x89 at byte 1 of the file$",
              "items": r"^not UTF-8: byte 0x89 at byte 1 of the file$",
              "line": r"^not UTF-8: byte 0x89 at byte 1 of the line$"}[imp.unit]
    if imp is CSV:
        reason = r"^the header has bytes that are not valid utf-8$"
    where = {"stream": r"line 1 column \d+", "file": "", "items": "item 1"}.get(imp.unit, "line 1")
    return Expect(data, set(), set(), where, reason, errors=1 if imp.unit != "line" else None)


BILLION_LAUGHS = (b'<!DOCTYPE lolz [<!ENTITY lol "lol">'
                  + b"".join(f'<!ENTITY lol{k} "{("&lol" + str(k - 1) + ";") * 10}">'.encode()
                             for k in range(1, 10)).replace(b"&lol0;", b"&lol;")
                  + b"]>\n")


def billion_laughs(imp):
    """Nine levels of entities, each ten of the one before: a billion 'lol's if expanded."""
    data = imp.file([encoded(imp, 1), encoded(imp, 2).replace(
        imp.title(2).encode(), b"&lol9;")], doctype=BILLION_LAUGHS)
    return Expect(data, set(), set(), r"line \d+ column \d+",
                  r"^refused hostile XML \(DTDForbidden\): documents declaring a DTD or entities "
                  r"are not read$")


REFUSED = r"^refused hostile XML \(DTDForbidden\)"


def external_entity(imp):
    """XXE: an entity that would read a local file into the title."""
    doctype = b'<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
    data = imp.file([encoded(imp, 1).replace(imp.title(1).encode(), b"&xxe;")], doctype=doctype)
    return Expect(data, set(), set(), r"line \d+ column \d+", REFUSED)


def external_dtd(imp):
    """A DTD fetched from the network (an SSRF and a slow parse): refused, never fetched."""
    doctype = b'<!DOCTYPE x SYSTEM "http://example.invalid/x.dtd">\n'
    data = imp.file_of(1).replace(b"?>\n", b"?>\n" + doctype, 1)
    return Expect(data, set(), set(), r"line \d+ column \d+", REFUSED)


def wrong_root(imp):
    """An HTML error page saved where the response should be."""
    data = b"<html><body><h1>Rate exceeded.</h1></body></html>\n"
    what = "an Atom feed \\(an arXiv API response\\)" if imp is ATOM else "an OAI-PMH response"
    return Expect(data, set(), set(), "", rf"^not {what}: the root element is <html>$")


def other_xml_format(imp):
    """An OAI-PMH response given as an API response, and the other way round."""
    other = OAI if imp is ATOM else ATOM
    what = ("an Atom feed \\(an arXiv API response\\): the root element is <OAI-PMH>" if imp is ATOM
            else "an OAI-PMH response: the root element is <feed>")
    return Expect(other.file_of(1, 2), set(), set(), "", rf"^not {what}$")


def deep_nesting(imp):
    """The amplification of formats without entities: nesting that blows the stack or memory."""
    if imp.unit == "stream":
        deep = encoded(imp, 2).replace(b"</title>", b"</title>" + b"<x>" * 200 + b"</x>" * 200)
        data = imp.file([encoded(imp, 1), deep, encoded(imp, 3)])
        return Expect(data, {1}, {1}, rf"line 4 column \d+",
                      rf"^elements nested more than {MAX_DEPTH} deep$")
    line = imp.record(2).replace("{", '{"x": ' + "[" * 100_000 + "]" * 100_000 + ", ", 1)
    data = imp.file([encoded(imp, 1), line.encode(), encoded(imp, 3)])
    if imp.unit == "items":  # the decoder cannot find where it ends: the file ends there
        return Expect(data, {1}, {1}, re.escape(imp.where(2, 2)), r"^malformed JSON: nested too deeply$")
    return bad_record(imp, data, 2, 3, r"^malformed JSON: nested too deeply$", file_level=True)


def huge_field(imp):
    """An abstract (or issue body) one character over the per-field limit."""
    data = imp.file([encoded(imp, 1), encoded(imp, 2, abstract="a" * (MAX_TEXT_CHARS + 1)),
                     encoded(imp, 3)])
    reason = (rf"^field '{field_label(imp, 2)}' is {MAX_TEXT_CHARS + 1:,} characters, "
              rf"over the {LIMIT} limit$")
    return bad_record(imp, data, 2, 3, reason)


def field_at_the_limit(imp):
    """Exactly at the limit is still a field: the limit is where it says it is."""
    data = imp.file([encoded(imp, 1, abstract="a" * MAX_TEXT_CHARS)])
    return Expect(data, {1}, errors=0)


def huge_author_list(imp):
    """2,700 authors of 100 characters: each name is short, together they are over the limit."""
    surname = "Q" * 96  # "Ann QQQ…": 100 characters
    if imp is ATOM:
        line = encoded(imp, 2).replace(b"</entry>", f"<author><name>Ann {surname}</name></author>"
                                       .encode() * 2700 + b"</entry>")
    elif imp is OAI:
        line = encoded(imp, 2).replace(b"<authors>Ann Example</authors>",
                                       f"<authors>{f'Ann {surname}, ' * 2700}</authors>".encode())
    else:
        line = json.dumps({**imp.obj(2), "authors_parsed": [[surname, "Ann", ""]] * 2700})
        line = line.encode()
    data = imp.file([encoded(imp, 1), line, encoded(imp, 3)])
    # An Atom entry keeps its own author ("Ann Example", 11 characters) besides.
    size, count = (270_011, 2701) if imp is ATOM else (270_000, 2700)
    return bad_record(imp, data, 2, 3, rf"^field 'authors' is {size:,} characters in "
                      rf"{count:,} entries, over the {LIMIT} limit$")


def huge_line(imp):
    """A line over the per-line bound (16 MiB) is skipped without being held, and named;
    in XML, a text over the bound on bytes without a tag stops the reading there."""
    if imp.unit == "stream":
        data = imp.file([encoded(imp, 1), encoded(imp, 2, abstract="b" * (MAX_RUN + 1)),
                         encoded(imp, 3)])
        return Expect(data, {1}, {1}, r"line 4 column \d+",
                      rf"^a text longer than {MAX_RUN:,} characters: too long for any record's "
                      "field$")
    line = encoded(imp, 2, abstract="c" * (MAX_LINE_BYTES + 1))
    data = imp.file([encoded(imp, 1), line, encoded(imp, 3)])
    return bad_record(imp, data, 2, 3, rf"^line longer than {MAX_LINE_BYTES:,} bytes$")


def duplicate_record(imp):
    """The same record id twice: the later one is kept, and where both were is said."""
    data = imp.file([encoded(imp, 1), encoded(imp, 2), encoded(imp, 1, title="Revised Title One")])

    def check(imp):
        assert Document.objects.get(key=imp.key(1)).title == "Revised Title One"

    return Expect(data, {1, 2}, errors=0, check=check, warnings=[(
        re.escape(imp.where(3, 1)),
        rf"{re.escape(imp.key(1))} was read before, at .*{re.escape(imp.where(1, 1))}: "
        r"the later one is kept$")])


def duplicate_keys_in_one_object(imp):
    """One JSON object with the same key twice: which id is meant cannot be known."""
    text = imp.record(2)
    name = "number" if imp in (GITHUB, GITHUB_ARRAY) else "id"
    line = (text.replace('"issue": {', '"issue": {"number": 99, ', 1) if name == "number"
            else text.replace("{", '{"id": "2599.99999", ', 1))
    data = imp.file([encoded(imp, 1), line.encode(), encoded(imp, 3)])
    return bad_record(imp, data, 2, 3, rf"^duplicate key '{name}' in one JSON object$",
                      file_level=True)


def duplicate_xml_element(imp):
    """Two titles in one record: which one is meant cannot be known."""
    line = encoded(imp, 2).replace(b"</title>", b"</title><title>A Second Title</title>", 1)
    data = imp.file([encoded(imp, 1), line, encoded(imp, 3)])
    return bad_record(imp, data, 2, 3, r"^2 <title> elements where one is allowed$")


def duplicate_csv_column(imp):
    """A header naming the title column twice: which cell is the title cannot be known."""
    data = imp.file([encoded(imp, n) + b',"Other"' for n in (1, 2)],
                    header=imp.header + b",title")
    return Expect(data, set(), set(), "line 1",
                  r"^column 'title' appears 2 times in the header: which one to read is ambiguous$")


def wrong_cell_count(imp):
    data = imp.file([encoded(imp, 1), encoded(imp, 2) + b',"an extra cell"', encoded(imp, 3)])
    return bad_record(imp, data, 2, 3, r"^6 cells where the header has 5$")


def lone_carriage_returns(imp):
    """Old Mac line endings: one physical line, carriage returns inside unquoted cells."""
    data = b"\r".join([b"id,title,date,abstract,authors", b"h-1,One,2025-09-01,A,B"]) + b"\r"
    return Expect(data, set(), set(), "line 1", r"^the header is not CSV: a line break \(a lone "
                  r"carriage return\) inside an unquoted cell")


def nul_in_text(imp):
    """A NUL in a title: PostgreSQL refuses it in text, so it is dropped, on every database."""
    if imp.unit == "stream":  # XML has no way to carry one: the document is broken there
        line = encoded(imp, 2).replace(b"Title", b"Ti\x00tle")
        return broken_at(imp, imp.file([encoded(imp, 1), line, encoded(imp, 3)]), 2, 3,
                         r"^malformed XML: not well-formed \(invalid token\)$")
    line = (encoded(imp, 2).replace(b"Title", b"Ti\x00tle") if imp is CSV
            else encoded(imp, 2).replace(b"Title", b"Ti\\u0000tle"))

    def check(imp):
        assert Document.objects.get(key=imp.key(2)).title == imp.title(2)

    return Expect(imp.file([encoded(imp, 1), line, encoded(imp, 3)]), {1, 2, 3}, errors=0,
                  check=check)


def number_too_large(imp):
    """1e400 is infinity to Python and no JSON a database stores; 5,000 digits no int it reads."""
    one = imp.record(2).replace("{", '{"score": 1e400, ', 1).encode()
    two = imp.record(3).replace("{", '{"count": ' + "9" * 5000 + ", ", 1).encode()
    data = imp.file([encoded(imp, 1), one, two, encoded(imp, 4)])
    if imp.unit == "file":
        return Expect(data, set(), set(), "", r"^the number 1e400 is too large$")
    return Expect(data, {1, 4}, {1}, re.escape(imp.where(2, 2)), r"^the number 1e400 is too large$",
                  errors=2)


def broken_gzip(imp):
    """A .gz cut short: the records before the break are kept, the break is named."""
    noise = random.Random(3)  # incompressible, so the cut falls after the first record
    data = gzip.compress(imp.file([encoded(imp, n, abstract=noise.randbytes(20_000).hex())
                                   for n in (1, 2, 3)]))
    data = data[:len(data) * 2 // 3]

    def check(imp):  # whatever was read before the break is whole, never half a record
        keys = set(Document.objects.values_list("key", flat=True))
        assert keys in ({imp.key(1)}, {imp.key(1), imp.key(2)})

    return Expect(data, None, None, r"line \d", r"^the file cannot be read to the end \(EOFError: "
                  r"Compressed file ended before the end-of-stream marker was reached\)$",
                  suffix=imp.suffix + ".gz", check=check)


def not_gzip(imp):
    return Expect(imp.file_of(1), set(), set(), "" if imp.unit in ("file", "items") else "line 1",
                  r"^the file cannot be read to the end \(BadGzipFile: Not a gzipped file",
                  suffix=imp.suffix + ".gz")


# Wrong JSON types: (importer, what changes in record 2, the reason).
def _set(path, value):
    def change(obj):
        target = obj
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
        return obj
    return change


WRONG_TYPES = [
    (SNAPSHOT, "id is a number", _set(["id"], 2507.99917),
     r"^field 'id' should be a string, got float$"),
    (SNAPSHOT, "id is null", _set(["id"], None), r"^missing field 'id'$"),
    (SNAPSHOT, "title is a number", _set(["title"], 42),
     r"^field 'title' should be a string, got int$"),
    (SNAPSHOT, "versions is an object", _set(["versions"], {"v1": "Mon, 1 Sep 2025"}),
     r"^field 'versions' should be a list, got dict$"),
    (SNAPSHOT, "a version date is a number", _set(["versions", 0, "created"], 20250901),
     r"^versions\[0\]\.created should be a date string, got int$"),
    (SNAPSHOT, "categories is a list", _set(["categories"], ["cs.LG"]),
     r"^field 'categories' should be a string, got list$"),
    (SNAPSHOT, "the line is a list", lambda obj: [obj],
     r"^a line should hold a JSON object, got list$"),
    (SNAPSHOT, "the line is a string", lambda obj: "2599.10002",
     r"^a line should hold a JSON object, got str$"),
    (JSONL, "key is null", _set(["id"], None), r"^missing field 'id'$"),
    (JSONL, "key is a list", _set(["id"], ["h-2"]), r"^field 'id' should be a string, got list$"),
    (JSONL, "title is an object", _set(["title"], {"en": "x"}),
     r"^field 'title' should be a string, got dict$"),
    (JSONL, "date is a number", _set(["date"], 20250901),
     r"^date should be a date string, got int$"),
    (JSONL, "the line is a list", lambda obj: [obj],
     r"^a line should hold a JSON object, got list$"),
    (JSONL, "a mapped value too big as JSON", _set(["abstract"], ["z" * 1000] * 300),
     rf"^field 'abstract' is \d{{3}},\d{{3}} characters as JSON, over the {LIMIT} limit$"),
    (GITHUB, "number is a string", _set(["issue", "number"], "2"),
     r"^issue has no integer 'number'$"),
    (GITHUB, "issue is a list", _set(["issue"], []), r"^missing field 'issue'$"),
    (GITHUB, "comments is an object", _set(["comments"], {"0": {}}),
     r"^field 'comments' should be a list of objects$"),
    (GITHUB, "a login is a number", _set(["issue", "user", "login"], 12345),
     r"^a user's 'login' should be a string, got int$"),
    (GITHUB, "a timeline date is a number", _set(["timeline", 0, "created_at"], 1759309800),
     r"^field 'timeline\[0\]\.created_at' should be a string, got int$"),
    (GITHUB, "pull_request is a string", _set(["issue", "pull_request"], "yes"),
     r"^field 'pull_request' should be an object, got str$"),
    (GITHUB, "repository_url is a number", lambda obj: {**obj, "repository": None, "issue": {
        **obj["issue"], "repository_url": 7}}, r"^cannot tell the repository"),
    (GITHUB, "a comment id is null", _set(["comments", 0, "id"], None),
     r"^an item of 'comments' has no id$"),
    (GITHUB, "the state is a list", _set(["issue", "state"], ["open"]),
     r"^field 'state' should be a string, got list$"),
    (GITHUB, "a saved GitHub error", lambda obj: {"message": "Not Found\u0000",
                                                  "documentation_url": "https://docs.github.com"},
     r"^a GitHub error was saved instead of a thread: Not Found$"),
    (GITHUB_ARRAY, "an item is a string", lambda obj: "a thread",
     r"^a thread should be a JSON object, got str$"),
    (GITHUB_ARRAY, "a timeline date is a number", _set(["timeline", 0, "created_at"], 1759309800),
     r"^field 'timeline\[0\]\.created_at' should be a string, got int$"),
]


def wrong_types(imp, change, reason):
    line = json.dumps(change(imp.obj(2))).encode()
    return bad_record(imp, imp.file([encoded(imp, 1), line, encoded(imp, 3)]), 2, 3, reason)


CASES = [
    (empty, IMPORTERS),
    (truncated_mid_record, IMPORTERS),
    (latin1_bytes, IMPORTERS),
    (invalid_utf8_sequences, IMPORTERS),
    (utf16, IMPORTERS),
    (utf8_bom, IMPORTERS),
    (binary_garbage, IMPORTERS),
    (billion_laughs, XML),
    (external_entity, XML),
    (external_dtd, XML),
    (wrong_root, XML),
    (other_xml_format, XML),
    (deep_nesting, XML + JSON_IMPORTERS),
    (huge_field, IMPORTERS),
    (field_at_the_limit, IMPORTERS),
    (huge_author_list, [ATOM, OAI, SNAPSHOT]),
    (huge_line, XML + LINE_IMPORTERS),
    (duplicate_record, IMPORTERS),
    (duplicate_keys_in_one_object, JSON_IMPORTERS),
    (duplicate_xml_element, XML),
    (duplicate_csv_column, [CSV]),
    (wrong_cell_count, [CSV]),
    (lone_carriage_returns, [CSV]),
    (nul_in_text, IMPORTERS),
    (number_too_large, JSON_IMPORTERS),
    (broken_gzip, [SNAPSHOT, JSONL, GITHUB]),
    (not_gzip, [SNAPSHOT, JSONL, GITHUB, GITHUB_ARRAY]),
]


def corpus():
    for case, importers in CASES:
        for imp in importers:
            yield pytest.param(imp, case, id=f"{imp.name}-{case.__name__}")
    for imp, what, change, reason in WRONG_TYPES:
        def case(imp, change=change, reason=reason):
            return wrong_types(imp, change, reason)
        case.__name__ = f"wrong types: {what}"
        yield pytest.param(imp, case, id=f"{imp.name}-wrong_types-{what.replace(' ', '_')}")


# --- running one file through one importer --------------------------------------------

def keys():
    return set(Document.objects.values_list("key", flat=True))


def run(imp, path, strict=False):
    errors, warnings = [], []
    counts = run_import({**imp.params(path), "strict": strict}, log_error=errors.append,
                        log_warning=warnings.append)
    return counts, errors, warnings


def assert_located(error, path, expect):
    assert re.fullmatch(re.escape(str(path)) + (f" {expect.where}" if expect.where else ""),
                        error.location), (error.location, expect.where)
    assert re.search(expect.reason, error.reason), (error.reason, expect.reason)


def assert_whole_threads(imp):
    """Nothing half-written: every thread written has all its posts, and no post is orphaned."""
    if imp in (GITHUB, GITHUB_ARRAY):
        assert Post.objects.count() == 2 * Document.objects.count()


@pytest.mark.parametrize("imp, case", list(corpus()))
def test_a_hostile_file_is_reported_where_it_is_and_nothing_is_half_written(db, tmp_path, imp,
                                                                          case):
    expect = case(imp)
    path = tmp_path / f"hostile{expect.suffix or imp.suffix}"
    path.write_bytes(expect.data)

    # Lenient: every good record is written, every bad one is reported where it is.
    counts, errors, warnings = run(imp, path)
    if expect.errors is None:
        assert errors
    else:
        assert len(errors) == expect.errors, [str(e) for e in errors]
    if errors:
        assert_located(errors[0], path, expect)
    assert counts["failed"] == len(errors)
    if expect.imported is not None:
        assert keys() == {imp.key(n) for n in expect.imported}
        assert counts["added"] == len(expect.imported)
    for (where, reason), warning in zip(expect.warnings, warnings, strict=True):
        assert re.fullmatch(re.escape(str(path)) + " " + where, warning.location)
        assert re.search(reason, warning.reason), warning.reason
    assert_whole_threads(imp)
    if expect.check:
        expect.check(imp)

    # Strict: the good records before the first bad one are written, then it stops there.
    Document.objects.all().delete()
    if not errors:
        run(imp, path, strict=True)
        assert keys() == {imp.key(n) for n in expect.imported}
        return
    with pytest.raises(StrictModeError) as stopped:
        run(imp, path, strict=True)
    assert str(errors[0]) in str(stopped.value)
    if expect.strict is not None:
        assert keys() == {imp.key(n) for n in expect.strict}
    assert_whole_threads(imp)


# --- limits and requests checked on their own -------------------------------------------

def _peak_memory(read):
    import tracemalloc

    tracemalloc.start()
    try:
        result = read()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_saved_github_array_is_streamed_in_flat_memory(tmp_path):
    """`gh api --paginate` output of thousands of threads: read a thread at a time, never
    the whole file (it was parsed whole, and refused past 64 MiB)."""
    path = tmp_path / "threads.json.gz"
    item = json.dumps(GITHUB_ARRAY.obj(1, abstract="An invented body. " * 1_000)).encode()
    with gzip.open(path, "wb") as file:
        file.write(b"[" + b",\n".join([item] * 1_500) + b"]")
    size = len(gzip.decompress(path.read_bytes()))
    count, peak = _peak_memory(lambda: sum(1 for _ in github_source.read_path(path)))
    assert count == 1_500 and size > 25_000_000
    assert peak < 8_000_000  # a chunk (1 MiB) and a thread at a time, not the file


def test_a_compressed_file_that_unpacks_to_much_is_streamed_not_held(tmp_path):
    """A gzip bomb: a few KB that unpack to megabytes (to gigabytes in earnest)."""
    path = tmp_path / "threads.json.gz"
    path.write_bytes(gzip.compress(b"[" + b" " * 20_000_000 + b"]"))
    assert path.stat().st_size < 100_000
    items, peak = _peak_memory(lambda: list(github_source.read_path(path)))
    assert items == [] and peak < 5_000_000


def test_an_item_over_the_bound_ends_the_file_with_its_place(tmp_path):
    path = tmp_path / "threads.json"
    one = json.dumps(GITHUB_ARRAY.obj(1))
    path.write_text("[" + one + ", " + json.dumps({"x": "a" * 3_000_000}) + "]")
    items = list(github_source.read_path(path, max_line_bytes=1_000_000))
    assert [i.key for i in items[:1]] == [GITHUB_ARRAY.key(1)]
    assert str(items[1]) == f"{path} item 2: an item longer than 1,000,000 bytes"


def test_stray_xml_elements_do_not_pile_up_in_memory(tmp_path):
    """Elements outside any record are dropped as they end, like the records themselves."""
    import tracemalloc

    from ingest.sources import arxiv_atom

    path = tmp_path / "stray.xml"
    path.write_bytes(ATOM.file([b"<stray/>" * 20_000, encoded(ATOM, 1)]))
    tracemalloc.start()
    try:
        items = list(arxiv_atom.read_file(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [i.key for i in items] == [ATOM.key(1)]
    assert peak < 1_500_000  # 20,000 kept elements would be several MB


def test_an_xml_encoding_the_parser_cannot_read_is_named(db, tmp_path):
    path = tmp_path / "feed.xml"
    path.write_bytes(ATOM.file_of(1).replace(b"UTF-8", b"Shift_JIS", 1))
    _, errors, _ = run(ATOM, path)
    assert errors[0].reason == ("unsupported encoding (multi-byte encodings are not supported): "
                                "save the file as UTF-8")


def test_a_directory_without_saved_threads_is_named(db, tmp_path):
    (tmp_path / "notes.txt").write_text("nothing here")
    _, errors, _ = run(GITHUB, tmp_path)
    assert [str(e) for e in errors] == [f"{tmp_path}: no .json, .jsonl or .gz files in this "
                                        "directory"]


def test_a_csv_with_a_header_and_no_rows_says_so(db, tmp_path):
    path = tmp_path / "table.csv"
    path.write_bytes(CSV.header + b"\n\n")
    _, errors, _ = run(CSV, path)
    assert [str(e) for e in errors] == [f"{path}: the file has a header but no rows"]


@pytest.mark.parametrize("params, message", [
    ({"encoding": "utf-16"}, "the encoding 'utf-16' cannot be read line by line"),
    ({"encoding": "rot13"}, "unknown encoding 'rot13'"),
    ({"encoding": 8}, "unknown encoding 8"),
    ({"delimiter": ";;"}, "the delimiter must be one character"),
    ({"delimiter": '"'}, "the delimiter must be one character other than a quote"),
    ({"batch_size": 0}, "batch_size must be a whole number from 1 to 50,000"),
    ({"batch_size": "ten"}, "batch_size must be a whole number"),
    ({"path": None}, "csv_file needs an existing 'path', got None"),
    ({"path": ""}, "csv_file needs an existing 'path'"),
    ({"path": 17}, "csv_file needs an existing 'path', got 17"),
    ({"path": "/dev/zero"}, "csv_file needs a file, and '/dev/zero' is not a regular file"),
    ({"mapping": {"key": ["id"], "title": "title"}}, "mapping 'key' must be a column name"),
    ({"mapping": {"key": "id", "title": "title", "metadata": "abstract"}},
     "mapping 'metadata' must be an object of names to columns"),
    ({"mapping": {"key": "id", "title": "title", "split": {"authors": 5}}},
     "mapping 'split' must be an object of names to separators"),
])
def test_a_request_that_cannot_read_a_table_is_refused_before_reading(tmp_path, params, message):
    path = tmp_path / "table.csv"
    path.write_bytes(CSV.file_of(1))
    with pytest.raises(ValueError, match=re.escape(message)):
        check_params({**CSV.params(path), **params})


def test_a_directory_given_as_a_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="is not a regular file"):
        check_params(SNAPSHOT.params(tmp_path))


# --- the commands: a located error, never a traceback -------------------------------------

def command(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_the_commands_print_located_errors_for_hostile_files(db, tmp_path):
    atom = write(tmp_path, "feed.xml", billion_laughs(ATOM).data)
    out, err = command("ingest_arxiv", "atom", atom)
    assert out.startswith("1 read: 0 added") and f"error: {atom} line " in err
    assert "refused hostile XML (DTDForbidden)" in err

    snapshot = write(tmp_path, "papers.jsonl", duplicate_record(SNAPSHOT).data)
    out, err = command("ingest_arxiv", "snapshot", snapshot)
    assert "1 duplicates within a batch" in out
    assert (f"warning: {snapshot} line 3: arxiv 2599.10001 was read before, at {snapshot} "
            "line 1: the later one is kept") in err

    threads = write(tmp_path, "threads.jsonl", huge_field(GITHUB).data)
    out, err = command("ingest_github", "saved", threads)
    assert out.startswith("3 read: 2 added") and f"error: {threads} line 2: field 'issue" in err


def test_the_commands_stop_with_a_command_error_not_a_traceback(db, tmp_path):
    table = write(tmp_path, "table.csv", duplicate_csv_column(CSV).data)
    mapping = json.dumps(TABLE_MAPPING)
    with pytest.raises(CommandError, match=f"{re.escape(table)} line 1: column 'title' appears 2"):
        command("ingest_table", table, "--mapping", mapping, "--strict")
    with pytest.raises(CommandError, match="columns nowhere are not in the header"):
        command("ingest_table", table, "--mapping", json.dumps({**TABLE_MAPPING, "url": "nowhere"}))
    with pytest.raises(CommandError, match="cannot be read line by line"):
        command("ingest_table", table, "--mapping", mapping, "--encoding", "utf-32")


# --- the ingest job: the log names each bad record ----------------------------------------

def test_an_ingest_job_logs_where_each_hostile_record_was(db, tmp_path):
    from workbench import jobs

    latin1 = latin1_bytes(SNAPSHOT).data
    byte = latin1.split(b"\n")[1].index(b"\xe9") + 1
    path = write(tmp_path, "papers.jsonl", latin1 + duplicate_record(
        SNAPSHOT).data.replace(b"2599.1000", b"2599.2000"))
    job = Job.objects.create(kind="ingest", params=SNAPSHOT.params(path))
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE, job.error
    # The file by its own name: where the server keeps it is not the reader's business.
    assert list(job.events.values_list("level", "location", "message")) == [
        ("error", "papers.jsonl line 2", f"not UTF-8: byte 0xe9 at byte {byte} of the line"),
        ("warning", "papers.jsonl line 6", "arxiv 2599.20001 was read before, at papers.jsonl "
                                           "line 4: the later one is kept"),
    ]


# --- the web paths, as the study's owner ----------------------------------------------------

# One hostile file per importer, what the job's log must show, and the format's form fields.
WEB_CASES = [
    (ATOM, truncated_mid_record, "unclosed token"),
    (OAI, billion_laughs, "refused hostile XML (DTDForbidden)"),
    (SNAPSHOT, latin1_bytes, "not UTF-8: byte 0xe9"),
    (CSV, duplicate_csv_column, "column 'title' appears 2 times in the header"),
    (JSONL, duplicate_keys_in_one_object, "duplicate key 'id' in one JSON object"),
    (GITHUB, huge_field, f"over the {LIMIT} limit"),
    (GITHUB_ARRAY, binary_garbage, "not UTF-8: byte 0x89 at byte 1 of the file"),
]


@pytest.fixture
def uploads(stored_files):
    return stored_files / "uploads"


def upload(imp, expect):
    return SimpleUploadedFile(f"hostile{expect.suffix or imp.suffix}", expect.data)


def source(imp):
    params = {"format": imp.fmt}
    if imp in (CSV, JSONL):
        params["mapping"] = TABLE_MAPPING
    return params


def assert_job_shows(client, job, path, where, message):
    """The job page and the job API show the error with where it was; nothing answers 5xx."""
    page = client.get(f"/jobs/{job.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    # The upload by its own name, not the server path it was saved under.
    assert escape(message) in html and escape(path.name) in html
    api = client.get(f"/api/jobs/{job.pk}/")
    assert api.status_code == 200
    data = api.json()
    located = re.escape(path.name) + (f" {where}" if where else "")
    assert any(re.fullmatch(located, e["location"]) and message in e["message"]
               for e in data["events"]), data["events"]
    assert str(path.parent) not in json.dumps(data["events"]) and str(path.parent) not in html
    return data


@pytest.mark.parametrize("imp, case, message", [
    pytest.param(imp, case, message, id=imp.name) for imp, case, message in WEB_CASES])
def test_the_import_page_reports_a_hostile_upload_on_its_job(alpha, people, client_for, uploads,
                                                              django_capture_on_commit_callbacks,
                                                              imp, case, message):
    expect = case(imp)
    olive = client_for(people["olive"])
    form = {"format": imp.fmt, "file": upload(imp, expect)}
    if imp in (CSV, JSONL):
        form["mapping"] = json.dumps(TABLE_MAPPING)
    with django_capture_on_commit_callbacks(execute=True):
        response = olive.post(f"/studies/{alpha.slug}/import/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    job = Job.objects.get(kind="import_to_study")
    assert response["Location"] == f"/jobs/{job.pk}/"
    assert job.status == Job.Status.DONE, job.error  # lenient: the job finishes, errors logged
    saved = next(uploads.rglob("hostile*"))
    data = assert_job_shows(olive, job, saved, expect.where, message)
    assert data["result"]["counts"]["failed"] >= 1
    assert olive.get(f"/studies/{alpha.slug}/import/").status_code == 200  # the flow page


@pytest.mark.parametrize("imp, case, message", [
    pytest.param(imp, case, message, id=imp.name) for imp, case, message in WEB_CASES])
def test_the_import_api_reports_a_hostile_upload_on_its_job(alpha, people, client_for, uploads,
                                                             django_capture_on_commit_callbacks,
                                                             imp, case, message):
    expect = case(imp)
    olive = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        response = olive.post(f"/api/studies/{alpha.slug}/imports/", {
            "source": json.dumps({**source(imp), "strict": True}), "file": upload(imp, expect)})
    assert response.status_code == 202, response.content.decode()[:2000]
    job = Job.objects.get(pk=response.json()["id"])
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED  # strict: stopped at the first bad record
    assert job.error.startswith("Stopped at the first bad record: ")
    saved = next(uploads.rglob("hostile*"))
    data = assert_job_shows(olive, job, saved, expect.where, message)
    assert data["status"] == "failed" and message in data["error"] and saved.name in data["error"]
    assert str(saved.parent) not in data["error"]
    flow = olive.get(f"/api/studies/{alpha.slug}/screening/")
    assert flow.status_code == 200


def snapshot_source(**params):
    return {"format": "arxiv_snapshot_file", "path": str(FIXTURES / "arxiv" / "snapshot.jsonl"),
            **params}


@pytest.mark.parametrize("body, message", [
    ({"source": "not json at all"}, "expected a JSON object, got text that is not JSON"),
    ({"source": ["a", "list"]}, "expected a JSON object"),
    ({"source": {"format": "csv_file", "path": str(FIXTURES / "table" / "papers.csv"),
                 "mapping": {"key": "id", "title": "title", "metadata": "x"}}},
     "mapping 'metadata' must be an object"),
    ({"source": {"format": "csv_file", "path": str(FIXTURES / "table" / "papers.csv"),
                 "mapping": TABLE_MAPPING, "delimiter": "ab"}},
     "the delimiter must be one character"),
    ({"source": snapshot_source(batch_size=-1)}, "batch_size must be a whole number"),
    ({"source": snapshot_source(path="arxiv")}, "is not a regular file"),
    ({"source": snapshot_source(path="/dev/zero")}, "outside the server's import folder"),
    ({"source": snapshot_source(path="../../conftest.py")}, "outside the server's import folder"),
    ({"source": snapshot_source(path=["/etc"])}, "give the name of a file or folder in the import folder"),
    ({"source": snapshot_source(), "screening": {"categories": 5}}, "categories must be a list"),
    ({"source": snapshot_source(), "screening": {"query": ["a"]}}, "query must be text"),
    ({"source": snapshot_source(), "screening": {"date_from": [2025, 1, 1]}},
     "date_from must be a date"),
    ({"source": snapshot_source(), "screening": "{"}, "expected a JSON object"),
])
def test_a_hostile_import_request_is_a_400_that_says_why(alpha, people, client_for, body, message,
                                                         settings):
    settings.IMPORT_DIR = FIXTURES  # the folder an administrator fills; paths are read in it
    olive = client_for(people["olive"])
    response = olive.post(f"/api/studies/{alpha.slug}/imports/", body,
                          content_type="application/json")
    assert response.status_code == 400, response.content.decode()[:2000]
    assert message in json.dumps(response.json())
    assert not Job.objects.exists()


def test_a_multipart_source_that_is_not_json_is_a_400(alpha, people, client_for, uploads):
    response = client_for(people["olive"]).post(f"/api/studies/{alpha.slug}/imports/", {
        "source": "{not json", "file": SimpleUploadedFile("papers.jsonl", SNAPSHOT.file_of(1))})
    assert response.status_code == 400
    assert "Value must be valid JSON." in json.dumps(response.json())


def test_a_hostile_mapping_or_an_empty_upload_is_a_form_error(alpha, people, client_for, uploads):
    olive = client_for(people["olive"])
    page = olive.post(f"/studies/{alpha.slug}/import/", {
        "format": "csv_file", "file": SimpleUploadedFile("t.csv", CSV.file_of(1)),
        "mapping": json.dumps({"key": "id", "title": "title", "metadata": ["abstract"]})})
    assert page.status_code == 200
    refused = "mapping 'metadata' must be an object of names to columns"
    assert escape(refused) in page.content.decode()
    page = olive.post(f"/studies/{alpha.slug}/import/", {
        "format": "arxiv_snapshot_file", "file": SimpleUploadedFile("empty.jsonl", b"")})
    assert page.status_code == 200 and "The submitted file is empty." in page.content.decode()
    assert not Job.objects.exists()


@pytest.mark.parametrize("name", [
    "é" * 200 + ".jsonl",  # 200 characters, as Django allows; 406 bytes, as no file system does
    "a\x00b\nc.jsonl", "../../outside.jsonl", "papers.jsonl" + " " * 300,
])
def test_a_hostile_upload_name_is_saved_safely(alpha, people, client_for, uploads, name,
                                               django_capture_on_commit_callbacks):
    olive = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        response = olive.post(f"/studies/{alpha.slug}/import/", {
            "format": "arxiv_snapshot_file", "file": SimpleUploadedFile(name, SNAPSHOT.file_of(1))})
    assert response.status_code == 302
    job = Job.objects.get(kind="import_to_study")
    assert job.status == Job.Status.DONE, job.error
    assert job.result["counts"]["added"] == 1
    (saved,) = [p for p in uploads.rglob("*") if p.is_file()]
    assert saved.is_relative_to(uploads) and len(saved.name.encode()) <= 120

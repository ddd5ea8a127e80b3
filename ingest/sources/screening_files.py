"""The files screening teams already have: RIS (from Zotero, EndNote, Mendeley) and
ASReview-style CSV (`title`, `abstract`, optional `label_included`, `doi`, `authors`, `year`,
`record_id`), read as papers.

RIS is split into entries line by line (streamed: a file is never read whole) and each
entry is parsed by rispy, the maintained RIS parser; an entry without a title is a located
error naming the line the entry starts on. A record's key is its DOI (`doi:10.…`), else a
hash of its title and year (the files' own ids mean nothing outside their file), so the
same record imported twice, or from both kinds of file, is one document.

The CSV is read by the tabular reader (sources.tabular: its limits and located errors)
with a mapping chosen from the header. A `label_included` column is never stored with the
document, where coders would read it: the study side imports it as prior labels of an
outside rater (coding.screening.priors).
"""

import csv
import hashlib
from datetime import UTC, datetime

import rispy
from django.utils.translation import gettext as _

from ..records import BadRecord, DocumentRecord, RecordError, one_line, text, unforeseen
from . import tabular
from .lines import (
    BROKEN_FILE, broken_file_reason, line_format, not_utf8_reason, open_binary, wide_encoding,
)

SOURCE = "screening"
MAX_ENTRY_LINES = 10_000


def _key(doi, title, year):
    """`doi:…` (lower case), else `title:` and a hash of the title and year: the same record
    from a RIS file and a CSV, or imported twice, is one document."""
    if doi.strip():
        return "doi:" + doi.strip().lower()[:190]
    digest = hashlib.sha1(f"{' '.join(title.lower().split())}|{year}".encode()).hexdigest()
    return "title:" + digest[:16]


def _first(value):
    if isinstance(value, list):
        return value[0] if value else ""
    return value or ""


def _ris_record(entry, location):
    title = _first(entry.get("title") or entry.get("primary_title")
                   or entry.get("translated_title"))
    if not str(title).strip():
        raise BadRecord(_("the entry has no title (TI or T1)"))
    year = str(_first(entry.get("year") or entry.get("publication_year")) or "")[:4]
    doi = str(_first(entry.get("doi")))
    authors = [*entry.get("authors", []), *entry.get("first_authors", [])]
    metadata = {"abstract": text(_first(entry.get("abstract")) or "", "AB")}
    if authors:
        metadata["authors"] = [one_line(text(a, "AU")) for a in authors]
    if doi:
        metadata["doi"] = text(doi, "DO", limit=200)
    if entry.get("keywords"):
        metadata["keywords"] = [one_line(text(k, "KW")) for k in entry["keywords"]]
    if entry.get("type_of_reference"):
        metadata["reference_type"] = str(entry["type_of_reference"])[:16]
    url = _first(entry.get("urls") or entry.get("url"))
    return DocumentRecord(
        kind="paper", source=SOURCE, location=location,
        key=_key(doi, str(title), year),
        title=one_line(text(title, "TI", required=True)),
        url=text(url, "UR", limit=500) or "",
        published=_year(year), metadata={**metadata, **({"year": year} if year else {})})


def _year(year):
    """A publication year as the first of January (a year is all RIS and CSV say)."""
    if len(year) == 4 and year.isdigit() and 1000 <= int(year) <= 2999:
        return datetime(int(year), 1, 1, tzinfo=UTC)
    return None


def read_ris_file(path):
    """Yield a record or RecordError per RIS entry, each named by its first line."""
    name, where = str(path), line_format()
    number, found, entry, first = 0, 0, [], None
    try:
        with open_binary(path) as stream:
            for number, raw in enumerate(stream, start=1):
                if number == 1:
                    wide = wide_encoding(raw[:4])
                    if wide:
                        yield RecordError(name, not_utf8_reason(wide))
                        return
                    raw = raw.removeprefix(b"\xef\xbb\xbf")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    yield RecordError(where % {"file": name, "line": number}, _(
                        "the text is not UTF-8 (%(error)s)") % {"error": exc.reason})
                    return
                if not line.strip() and not entry:
                    continue
                if first is None:
                    first = number
                entry.append(line)
                if line.startswith("ER  -") or len(entry) > MAX_ENTRY_LINES:
                    found += 1
                    yield _parse(entry, where % {"file": name, "line": first})
                    entry, first = [], None
    except BROKEN_FILE as exc:
        yield RecordError(name, broken_file_reason(exc))
        return
    if number == 0:
        yield RecordError(name, _("the file is empty"))
    elif entry:
        yield RecordError(where % {"file": name, "line": first},
                          _("the entry does not end with an ER line"))
    elif not found:
        yield RecordError(name, _("no RIS entries (TY … ER) in the file"))


def _parse(lines, location):
    if len(lines) > MAX_ENTRY_LINES:
        return RecordError(location, _("the entry has over %(count)s lines") % {
            "count": f"{MAX_ENTRY_LINES:,}"})
    try:
        entries = rispy.loads("".join(lines))
        if not entries:
            return RecordError(location, _("not a RIS entry (no TY line)"))
        return _ris_record(entries[0], location)
    except BadRecord as exc:
        return RecordError(location, str(exc))
    except Exception as exc:  # rispy's own parse errors, whatever their class
        return RecordError(location, unforeseen(exc))


def asreview_mapping(path, encoding="utf-8", delimiter=","):
    """The tabular mapping for an ASReview-style CSV, chosen from its header; ValueError
    when it has no `title` column. `label_included` and `record_id` are left out (the
    first is prior labels, the second means nothing outside its file)."""
    with open_binary(path) as stream:
        head = stream.readline(1024 * 1024).decode(encoding, errors="replace").lstrip("\ufeff")
    columns = {c.strip().lower(): c for c in next(csv.reader([head], delimiter=delimiter), [])}
    if "title" not in columns:
        raise ValueError(_("an ASReview CSV needs a 'title' column; found %(columns)s") % {
            "columns": ", ".join(sorted(columns)) or _("no header")})
    metadata = {name: columns[name] for name in ("abstract", "authors", "keywords", "doi",
                                                 "year") if name in columns}
    mapping = {"source": SOURCE, "kind": "paper", "key": columns["title"],
               "title": columns["title"], "metadata": metadata,
               "split": {name: ";" for name in ("authors", "keywords") if name in metadata}}
    if "url" in columns:
        mapping["url"] = columns["url"]
    return mapping


def read_asreview_csv(path, encoding="utf-8", delimiter=","):
    """Yield a record or RecordError per row of an ASReview-style CSV."""
    try:
        mapping = tabular.Mapping.from_dict(asreview_mapping(path, encoding, delimiter))
    except (ValueError, OSError) as exc:
        yield RecordError(str(path), str(exc))
        return
    for found in tabular.read_csv_file(path, mapping, encoding=encoding, delimiter=delimiter):
        if isinstance(found, DocumentRecord):
            meta = found.metadata
            year = str(meta.get("year") or "").strip()[:4]
            meta = {k: v for k, v in meta.items() if v not in (None, "", [])}
            found.metadata = meta
            found.key = _key(str(meta.get("doi") or ""), found.title, year)
            found.published = _year(year)
        yield found


def record_key(fields):
    """The document key a screening file's record gets: for matching prior labels to it."""
    year = str(fields.get("year") or "").strip()[:4]
    return _key(str(fields.get("doi") or ""), one_line(str(fields.get("title") or "")), year)

"""arXiv OAI-PMH responses (ListRecords, GetRecord) in the `arXiv` and `arXivRaw` formats.

A `<header status="deleted">` has no metadata and becomes a `Deletion`. An OAI
`<error>` is data, not a crash: it lands in `OaiInfo.error_code` (the client
treats `noRecordsMatch` as an empty result). The resumption token is opaque and
passed back as received.
"""

from dataclasses import dataclass
from pathlib import Path

from django.utils.translation import gettext as _

from ..records import (
    UNFORESEEN, BadRecord, Deletion, RecordError, RecordWarning, SourceError, day, rfc2822,
    unforeseen,
)
from .papers import (
    SOURCE, author_entry, check_arxiv_id, paper_record, split_raw_authors, version_entry,
)
from .xml import child_text, children_text, read_xml_file, walk

OAI = "{http://www.openarchives.org/OAI/2.0/}"
RAW = "{http://arxiv.org/OAI/arXivRaw/}"
AX = "{http://arxiv.org/OAI/arXiv/}"
RECORD, TOKEN, ERROR = OAI + "record", OAI + "resumptionToken", OAI + "error"
ROOT = OAI + "OAI-PMH"
ID_PREFIX = "oai:arXiv.org:"


@dataclass
class OaiInfo:
    resumption_token: str | None = None
    error_code: str | None = None
    error_message: str = ""
    records: int = 0


def read_response(stream, name, info=None):
    """Yield a record, Deletion or RecordError per `<record>`; raises MalformedXml."""
    info = info if info is not None else OaiInfo()
    for elem in walk(stream, {RECORD, TOKEN, ERROR}, root=(ROOT, _("an OAI-PMH response"))):
        if elem.tag == RECORD:
            info.records += 1
            yield _record(elem, _("%(file)s record %(record)s") % {"file": name,
                                                                    "record": info.records})
        elif elem.tag == TOKEN:
            info.resumption_token = (elem.text or "").strip() or None
        else:
            info.error_code = elem.get("code", "")
            info.error_message = " ".join((elem.text or "").split())


def read_file(path):
    """A saved OAI-PMH response; an OAI error other than noRecordsMatch is reported too,
    and a resumption token (the list goes on past this page) as a warning naming it."""
    info = OaiInfo()
    yield from read_xml_file(path, lambda stream, name: read_response(stream, name, info))
    if info.error_code and info.error_code != "noRecordsMatch":
        yield SourceError(str(path), oai_error(info.error_code, info.error_message))
    if info.resumption_token:
        yield RecordWarning(Path(path).name, _(
            "the page ends with the resumption token %(token)s: the list goes on; the next "
            "page is ListRecords with resumptionToken=%(token)s") % {
            "token": info.resumption_token[:200]})


def oai_error(code, message):
    return _("OAI-PMH error %(code)s: %(message)s") % {"code": code, "message": message}


def _record(elem, location):
    header = elem.find(OAI + "header")
    try:
        if header is None:
            raise BadRecord(_("record without a header"))
        identifier = (child_text(header, OAI + "identifier") or "").strip()
        location = f"{location} ({identifier[:100]})" if identifier else location
        if header.get("status") == "deleted":
            return Deletion(SOURCE, _key(identifier), (child_text(header, OAI + "datestamp") or "").strip(),
                            location)
        return _metadata(elem.find(OAI + "metadata"), identifier, location)
    except BadRecord as exc:
        return RecordError(location, str(exc))
    except UNFORESEEN as exc:
        return RecordError(location, unforeseen(exc))


def _key(identifier):
    if not identifier.startswith(ID_PREFIX):
        raise BadRecord(_("identifier %(value)s is not an arXiv OAI identifier") % {
            "value": repr(identifier[:80])})
    return check_arxiv_id(identifier[len(ID_PREFIX):], "identifier")


def _metadata(metadata, identifier, location):
    body = metadata[0] if metadata is not None and len(metadata) else None
    if body is None:
        raise BadRecord(_("record without metadata"))
    if body.tag == RAW + "arXivRaw":
        return _raw(body, location)
    if body.tag == AX + "arXiv":
        return _arxiv(body, location)
    raise BadRecord(_("metadata format %(format)s is not arXiv or arXivRaw") % {
        "format": repr(body.tag)})


def _common(body, ns):
    return {
        "title": child_text(body, ns + "title"), "abstract": child_text(body, ns + "abstract"),
        "categories": (child_text(body, ns + "categories") or "").split(),
        "doi": child_text(body, ns + "doi"), "journal_ref": child_text(body, ns + "journal-ref"),
        "comments": child_text(body, ns + "comments"), "license": child_text(body, ns + "license"),
    }


def _raw(body, location):
    """arXivRaw: every version with its date, and the raw author line."""
    key = check_arxiv_id(child_text(body, RAW + "id"))
    versions, dates = [], []
    for n, version in enumerate(body.findall(RAW + "version"), 1):
        label = version.get("version") or f"v{n}"
        dates.append(rfc2822(child_text(version, RAW + "date"), f"version {label} date"))
        versions.append(version_entry(label, dates[-1]))
    if not versions:
        raise BadRecord(_("arXivRaw record without a version"))
    return paper_record(
        key=key, authors=split_raw_authors(child_text(body, RAW + "authors") or ""),
        versions=versions,
        published=dates[0], updated=dates[-1], location=location,
        **_common(body, RAW),
    )


def _arxiv(body, location):
    """The arXiv format: structured authors, but only day-precise v1 and latest dates."""
    key = check_arxiv_id(child_text(body, AX + "id"))
    created = child_text(body, AX + "created")
    published = day(created, "created") if created else None
    updated_text = child_text(body, AX + "updated")
    updated = day(updated_text, "updated") if updated_text else published
    authors = [author_entry(keyname=child_text(author, AX + "keyname"),
                            forenames=child_text(author, AX + "forenames"),
                            suffix=child_text(author, AX + "suffix"),
                            affiliations=children_text(author, AX + "affiliation"),
                            orcid=child_text(author, AX + "orcid"))
               for author in body.findall(f"{AX}authors/{AX}author")]
    return paper_record(
        key=key, authors=authors,
        versions=[version_entry("v1", published)] if published else [],
        published=published, updated=updated, location=location, **_common(body, AX),
    )


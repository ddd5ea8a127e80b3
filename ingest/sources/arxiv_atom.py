"""arXiv API responses (Atom 1.0 from export.arxiv.org/api/query), saved or live.

Elements are read by name, never by position (the API reorders them), in both
the current output and the legacy one (unversioned ids, offsets in dates). An
error feed's single entry (id `…/api/errors#…`) is never a paper: it is recorded
in `FeedInfo.api_error` and yielded as a RecordError.
"""

from dataclasses import dataclass

from django.utils.translation import gettext as _

from ..records import UNFORESEEN, BadRecord, RecordError, SourceError, rfc3339, unforeseen
from .papers import author_entry, paper_record, split_abs_url, version_entry
from .xml import child_text, read_xml_file, walk

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ENTRY, FEED = ATOM + "entry", ATOM + "feed"
TOTAL, START, PER_PAGE = (OPENSEARCH + n for n in ("totalResults", "startIndex", "itemsPerPage"))
ERROR_IDS = ("https://arxiv.org/api/errors#", "http://arxiv.org/api/errors#")


@dataclass
class FeedInfo:
    """The feed-level facts a client pages by."""

    total: int | None = None
    start: int | None = None
    items_per_page: int | None = None
    entries: int = 0
    api_error: str | None = None


def read_feed(stream, name, info=None):
    """Yield a record or RecordError per entry; raises MalformedXml if the XML breaks."""
    info = info if info is not None else FeedInfo()
    for elem in walk(stream, {ENTRY, TOTAL, START, PER_PAGE},
                     root=(FEED, _("an Atom feed (an arXiv API response)"))):
        if elem.tag == ENTRY:
            info.entries += 1
            yield _entry(elem, _("%(file)s entry %(entry)s") % {"file": name,
                                                                  "entry": info.entries}, info)
        else:
            setattr(info, _FEED_FIELDS[elem.tag], _count(elem.text))


def read_file(path):
    """A saved API response: every entry, and the broken XML itself as a last error."""
    yield from read_xml_file(path, read_feed)


_FEED_FIELDS = {TOTAL: "total", START: "start", PER_PAGE: "items_per_page"}


def _count(value):
    try:
        return int((value or "").strip())
    except ValueError:
        return None


def _entry(elem, location, info):
    try:
        entry_id = (child_text(elem, ATOM + "id") or "").strip()
        if entry_id.startswith(ERROR_IDS):
            info.api_error = " ".join((child_text(elem, ATOM + "summary") or entry_id).split())
            return SourceError(location, _("arXiv API error: %(error)s") % {
                "error": info.api_error})
        return _paper(elem, entry_id, location)
    except BadRecord as exc:
        return RecordError(location, str(exc))
    except UNFORESEEN as exc:
        return RecordError(location, unforeseen(exc))


def _paper(elem, entry_id, location):
    key, version = split_abs_url(entry_id)
    published = rfc3339(child_text(elem, ATOM + "published"), "published")
    updated_text = child_text(elem, ATOM + "updated")
    updated = rfc3339(updated_text, "updated") if updated_text else published
    authors = [author_entry(name=child_text(author, ATOM + "name"),
                            affiliations=[a.text or "" for a in author.findall(ARXIV + "affiliation")],
                            orcid=child_text(author, ARXIV + "orcid"))
               for author in elem.findall(ATOM + "author")]
    return paper_record(
        key=key, title=child_text(elem, ATOM + "title"),
        abstract=child_text(elem, ATOM + "summary"),
        authors=authors, categories=_categories(elem),
        versions=_versions(version, published, updated),
        doi=child_text(elem, ARXIV + "doi"), journal_ref=child_text(elem, ARXIV + "journal_ref"),
        comments=child_text(elem, ARXIV + "comment"),
        published=published, updated=updated, location=location,
    )


def _categories(elem):
    """The primary category first, then the others in feed order."""
    primary = elem.find(ARXIV + "primary_category")
    terms = [primary.get("term")] if primary is not None and primary.get("term") else []
    terms += [c.get("term") for c in elem.findall(ATOM + "category") if c.get("term")]
    return list(dict.fromkeys(terms))


def _versions(version, published, updated):
    """The API shows v1's date (published) and the served version's (updated) only."""
    versions = [version_entry("v1", published)]
    if version and version > 1:
        versions.append(version_entry(f"v{version}", updated))
    return versions

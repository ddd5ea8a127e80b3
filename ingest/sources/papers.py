"""One paper record, whichever arXiv format it came from.

All arXiv formats build their records here, so a paper has the same metadata keys
(`records.PAPER_METADATA_KEYS`) whether it arrived from the API, OAI-PMH or the
snapshot, and re-importing it from another format changes only what differs.
"""

import re

from ..records import MAX_TEXT_CHARS, BadRecord, DocumentRecord, one_line, text

SOURCE = "arxiv"

# New-style ids (2507.99917) and old-style ids with an archive (hep-th/9901001).
ARXIV_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z][a-z.-]*(\.[A-Z]{2})?/\d{7})$")
ABS_URL = re.compile(r"abs/(.+?)(v(\d+))?$")


def check_arxiv_id(value, what="id"):
    key = text(value, what, required=True).strip()
    if not ARXIV_ID.match(key):
        raise BadRecord(f"{what} {key[:60]!r} is not an arXiv identifier")
    return key


def split_abs_url(url):
    """'http://arxiv.org/abs/2507.99917v2' -> ('2507.99917', 2); version None when absent."""
    match = ABS_URL.search(url.strip())
    if not match:
        raise BadRecord(f"entry id {url[:80]!r} is not an arXiv abstract URL")
    version = int(match.group(3)) if match.group(3) else None
    return check_arxiv_id(match.group(1), "entry id"), version


def split_raw_authors(line):
    """The raw author line of arXivRaw and the snapshot, as (names, affiliations).

    "Ada Q. Placeholder (Example Institute), Bo Testwell and Chlo\\'e Mockford" gives
    three names and one affiliation. A heuristic: the raw line is kept by the caller
    only through these names, and structured sources are preferred when present.
    """
    affiliations = [" ".join(a.split()) for a in re.findall(r"\(([^()]*)\)", line)]
    names = re.sub(r"\([^()]*\)", " ", line)
    parts = re.split(r",|\band\b|;", " ".join(names.split()))
    return [p.strip() for p in parts if p.strip()], _unique(a for a in affiliations if a)


def _bounded(values, what):
    """A list field is bounded like a text field, over all its entries: a collaboration
    of thousands of authors fits, a raw author line of megabytes split at its commas
    does not."""
    size = sum(len(v) for v in values)
    if size > MAX_TEXT_CHARS:
        raise BadRecord(f"field {what!r} is {size:,} characters in {len(values):,} entries, "
                        f"over the {MAX_TEXT_CHARS:,} limit")
    return values


def _unique(values):
    return list(dict.fromkeys(values))


def version_entry(label, created):
    return {"version": label, "created": created.isoformat()}


def paper_record(*, key, title, abstract, authors, affiliations, categories, versions,
                 doi=None, journal_ref=None, comments=None, license=None,
                 published=None, updated=None, location=""):
    """Check the text fields and build the record; raises BadRecord."""
    metadata = {
        "abstract": text(abstract, "abstract") or "",
        "authors": _bounded([text(a, "authors") for a in authors], "authors"),
        "affiliations": _bounded(_unique(text(a, "affiliations") for a in affiliations),
                                 "affiliations"),
        "categories": _bounded(categories, "categories"),
        "versions": versions,
        "doi": text(doi, "doi"),
        "journal_ref": text(journal_ref, "journal_ref"),
        "comments": text(comments, "comments"),
        "license": text(license, "license"),
    }
    return DocumentRecord(
        kind="paper", source=SOURCE, key=key,
        title=one_line(text(title, "title", required=True)),
        url=f"https://arxiv.org/abs/{key}", published=published, updated=updated,
        metadata=metadata, location=location,
    )

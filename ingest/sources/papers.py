"""One paper record, whichever arXiv format it came from.

All arXiv formats build their records here, so a paper has the same metadata keys
(`records.PAPER_METADATA_KEYS`) whether it arrived from the API, OAI-PMH or the
snapshot, and re-importing it from another format changes only what differs.
"""

import re

from django.utils.translation import gettext as _
from pylatexenc.latex2text import LatexNodes2Text

from ..records import MAX_TEXT_CHARS, BadRecord, DocumentRecord, one_line, text

SOURCE = "arxiv"

# New-style ids (2507.99917) and old-style ids with an archive (hep-th/9901001).
ARXIV_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z][a-z.-]*(\.[A-Z]{2})?/\d{7})$")
ABS_URL = re.compile(r"abs/(.+?)(v(\d+))?$")


def check_arxiv_id(value, what="id"):
    key = text(value, what, required=True).strip()
    if not ARXIV_ID.match(key):
        raise BadRecord(_("%(field)s %(value)s is not an arXiv identifier") % {
            "field": what, "value": repr(key[:60])})
    return key


def split_abs_url(url):
    """'http://arxiv.org/abs/2507.99917v2' -> ('2507.99917', 2); version None when absent."""
    match = ABS_URL.search(url.strip())
    if not match:
        raise BadRecord(_("entry id %(value)s is not an arXiv abstract URL") % {
            "value": repr(url[:80])})
    version = int(match.group(3)) if match.group(3) else None
    return check_arxiv_id(match.group(1), "entry id"), version


def author_entry(*, name=None, keyname=None, forenames=None, suffix=None, affiliations=(),
                 orcid=None):
    """One author as the source gives them: name parts when it has them (OAI `arXiv`,
    the snapshot's `authors_parsed`), the affiliations that are this author's, an ORCID
    iD where given. The display name is derived from the parts (forenames, keyname,
    suffix) unless the source gives only a whole name (the Atom API, raw author lines)."""
    # Written out rather than looped over the three parts: a snapshot has millions of
    # authors, and this was the largest share of reading one (benchmarks/ingest.py).
    raw_key = _clean(keyname, "author keyname")
    raw_fore = _clean(forenames, "author forenames")
    raw_suffix = _clean(suffix, "author suffix")
    key, fore, suf = unlatex(raw_key), unlatex(raw_fore), unlatex(raw_suffix)
    derived = " ".join(filter(None, (fore, key, suf)))
    written = " ".join(filter(None, (raw_fore, raw_key, raw_suffix))) or \
        _clean(name, "author name") or ""
    display = derived or unlatex(_clean(name, "author name")) or ""
    entry = {"name": display}
    if written != display:  # the name as the source wrote it, when that was LaTeX
        entry["name_latex"] = written  # ("Bal\\'azs Kov\\'acs")
    entry["keyname"], entry["forenames"], entry["suffix"] = key, fore, suf
    entry["affiliations"] = _unique(a for a in (_clean(a, "affiliation") for a in affiliations)
                                    if a) if affiliations else []
    entry["orcid"] = _clean(orcid, "author orcid")
    return entry


# arXiv metadata is written in LaTeX: accents in names (Bal\'azs), escapes and braces in
# titles (50\%, {GRPO}). pylatexenc turns them into Unicode; math stays as written.
_LATEX = LatexNodes2Text(math_mode="verbatim", keep_comments=True)


def unlatex(value):
    """The text with LaTeX accents and escapes as Unicode ("Bal\\'azs" -> "Balázs"); text
    without a backslash is returned as it is, and so is text pylatexenc cannot read."""
    if not value or "\\" not in value:
        return value
    try:
        converted = _LATEX.latex_to_text(value)
    except Exception:  # noqa: BLE001  (lenient by design; the raw text is kept then)
        return value
    return " ".join(converted.split()) or value


def _clean(value, what):
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_TEXT_CHARS:
        text(value, what)  # raises the located error
    return " ".join(value.split()) or None


def split_raw_authors(line):
    """The raw author line of arXivRaw and the snapshot, as author entries.

    "Ada Q. Placeholder (Example Institute), Bo Testwell and Chlo\\'e Mockford" gives
    three authors, the first with one affiliation: what is in parentheses after a
    name is that author's. A heuristic: structured sources are preferred when present.
    """
    authors = []
    for part in re.split(r",(?![^()]*\))|\band\b(?![^()]*\))|;(?![^()]*\))", line):
        affiliations = [" ".join(a.split()) for a in re.findall(r"\(([^()]*)\)", part)]
        name = " ".join(re.sub(r"\([^()]*\)", " ", part).split())
        if name:
            authors.append(author_entry(name=name, affiliations=affiliations))
        elif affiliations and authors:  # "A, B ((1) X, (2) Y)": a list after the names
            authors[-1]["affiliations"] = _unique(authors[-1]["affiliations"] + affiliations)
    return authors


def _bounded(values, what):
    """A list field is bounded like a text field, over all its entries: a collaboration
    of thousands of authors fits, a raw author line of megabytes split at its commas
    does not."""
    size = sum(len(v) for v in values)
    if size > MAX_TEXT_CHARS:
        raise BadRecord(_("field %(field)s is %(size)s characters in %(count)s entries, over "
                          "the %(limit)s limit") % {
            "field": repr(what), "size": f"{size:,}", "count": f"{len(values):,}",
            "limit": f"{MAX_TEXT_CHARS:,}"})
    return values


def _unique(values):
    return list(dict.fromkeys(values))


def version_entry(label, created):
    return {"version": label, "created": created.isoformat()}


def paper_record(*, key, title, abstract, authors, categories, versions,
                 doi=None, journal_ref=None, comments=None, license=None,
                 published=None, updated=None, location=""):
    """Check the text fields and build the record; raises BadRecord.

    `authors` are author_entry dicts; `authors` (display names) and `affiliations`
    (every author's, once each) are derived from them for those who read the lists.
    """
    names = _bounded([a["name"] for a in authors], "authors")
    _bounded([f for a in authors for f in (a["affiliations"] + [a["keyname"] or "",
                                                                 a["forenames"] or ""])],
             "author_records")
    metadata = {
        "abstract": text(abstract, "abstract") or "",
        "authors": names,
        "affiliations": _bounded(_unique(f for a in authors for f in a["affiliations"]),
                                 "affiliations"),
        "author_records": authors,
        "categories": _bounded(categories, "categories"),
        "versions": versions,
        "doi": text(doi, "doi"),
        "journal_ref": text(journal_ref, "journal_ref"),
        "comments": text(comments, "comments"),
        "license": text(license, "license"),
    }
    written = one_line(text(title, "title", required=True))
    if unlatex(written) != written:
        metadata["title_latex"] = written  # the title as the source wrote it
    return DocumentRecord(
        kind="paper", source=SOURCE, key=key, title=unlatex(written),
        url=f"https://arxiv.org/abs/{key}", published=published, updated=updated,
        metadata=metadata, location=location,
    )

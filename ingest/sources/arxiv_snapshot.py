"""The arXiv metadata snapshot (Kaggle `arxiv-metadata-oai-snapshot.json`): JSON Lines.

Streamed line by line (the real file is several GB and millions of records); a
missing key and a null are treated alike, as the file mixes both.
"""

from django.utils.translation import gettext as _

from ..records import BadRecord, day, missing_field, rfc2822, should_be
from .lines import MAX_LINE_BYTES, open_binary, read_records
from .papers import author_entry, check_arxiv_id, paper_record, split_raw_authors, version_entry


def read_stream(stream, name, max_line_bytes=MAX_LINE_BYTES):
    return read_records(stream, name, snapshot_record, max_line_bytes)


def read_file(path, max_line_bytes=MAX_LINE_BYTES):
    with open_binary(path) as stream:
        yield from read_stream(stream, str(path), max_line_bytes)


def snapshot_record(obj, location=""):
    """One snapshot line (already parsed) as a paper record; raises BadRecord."""
    if not isinstance(obj, dict):
        raise BadRecord(_("a line should hold a JSON object, got %(type)s") % {
            "type": type(obj).__name__})
    if "id" not in obj:
        raise BadRecord(missing_field("id"))
    key = check_arxiv_id(obj["id"])
    versions, dates = _versions(obj.get("versions"))
    update_date = obj.get("update_date")
    return paper_record(
        key=key, title=obj.get("title"), abstract=obj.get("abstract"),
        authors=_authors(obj), categories=_categories(obj.get("categories")),
        versions=versions, doi=obj.get("doi"), journal_ref=obj.get("journal-ref"),
        comments=obj.get("comments"), license=obj.get("license"),
        published=dates[0] if dates else None,
        updated=dates[-1] if dates else (day(update_date, "update_date") if update_date else None),
        location=location,
    )


def _versions(value):
    if value is None:
        return [], []
    if not isinstance(value, list):
        raise BadRecord(should_be("versions", _("a list"), value))
    versions, dates = [], []
    for n, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("version"), str):
            raise BadRecord(_("%(field)s should be an object with a 'version' string") % {
                "field": f"versions[{n}]"})
        dates.append(rfc2822(item.get("created"), f"versions[{n}].created"))
        versions.append(version_entry(item["version"], dates[-1]))
    return versions, dates


def _authors(obj):
    """Structured `authors_parsed` (TeX already turned into UTF-8) when present, else the raw line."""
    parsed = obj.get("authors_parsed")
    if parsed is None:
        raw = obj.get("authors")
        if raw is not None and not isinstance(raw, str):
            raise BadRecord(should_be("authors", _("a string"), raw))
        return split_raw_authors(raw or "")
    if not isinstance(parsed, list):
        raise BadRecord(_authors_parsed())
    authors = []
    for author in parsed:  # [keyname, forenames, suffix, affiliation, …]
        if not isinstance(author, list) or not all(isinstance(p, str) for p in author):
            raise BadRecord(_authors_parsed())
        keyname, forenames, suffix = (author + ["", "", ""])[:3]
        authors.append(author_entry(keyname=keyname, forenames=forenames, suffix=suffix,
                                    affiliations=author[3:]))
    return authors


def _authors_parsed():
    return _("field %(field)s should be a list of lists of strings") % {
        "field": "'authors_parsed'"}


def _categories(value):
    if value is None:
        return []
    if not isinstance(value, str):
        raise BadRecord(should_be("categories", _("a string"), value))
    return value.split()

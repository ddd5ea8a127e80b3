"""The arXiv metadata snapshot (Kaggle `arxiv-metadata-oai-snapshot.json`): JSON Lines.

Streamed line by line (the real file is several GB and millions of records); a
missing key and a null are treated alike, as the file mixes both.
"""

from ..records import BadRecord, day, rfc2822
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
        raise BadRecord(f"a line should hold a JSON object, got {type(obj).__name__}")
    if "id" not in obj:
        raise BadRecord("missing field 'id'")
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
        raise BadRecord(f"field 'versions' should be a list, got {type(value).__name__}")
    versions, dates = [], []
    for n, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("version"), str):
            raise BadRecord(f"versions[{n}] should be an object with a 'version' string")
        dates.append(rfc2822(item.get("created"), f"versions[{n}].created"))
        versions.append(version_entry(item["version"], dates[-1]))
    return versions, dates


def _authors(obj):
    """Structured `authors_parsed` (TeX already turned into UTF-8) when present, else the raw line."""
    parsed = obj.get("authors_parsed")
    if parsed is None:
        raw = obj.get("authors")
        if raw is not None and not isinstance(raw, str):
            raise BadRecord(f"field 'authors' should be a string, got {type(raw).__name__}")
        return split_raw_authors(raw or "")
    if not isinstance(parsed, list):
        raise BadRecord("field 'authors_parsed' should be a list of lists of strings")
    authors = []
    for author in parsed:  # [keyname, forenames, suffix, affiliation, …]
        if not isinstance(author, list) or not all(isinstance(p, str) for p in author):
            raise BadRecord("field 'authors_parsed' should be a list of lists of strings")
        keyname, forenames, suffix = (author + ["", "", ""])[:3]
        authors.append(author_entry(keyname=keyname, forenames=forenames, suffix=suffix,
                                    affiliations=author[3:]))
    return authors


def _categories(value):
    if value is None:
        return []
    if not isinstance(value, str):
        raise BadRecord(f"field 'categories' should be a string, got {type(value).__name__}")
    return value.split()

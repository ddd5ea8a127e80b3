"""What every parser yields, and the checks a record passes before it is written.

Parsers never raise on one bad record: they yield a `RecordError` naming where it
was (file and line, page and entry, repository and number) and why, and go on.
`load.import_records` writes `DocumentRecord`s and `Deletion`s and counts the rest.

Where and why are put into words as they are made, in the active language (gettext,
named placeholders): a job runs its import in its owner's language (the job's log
keeps those words), the API and the management commands read English. The place a
message names (file and line, the field's own name) is the same in every language.
"""

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime

import orjson
from django.utils.translation import gettext as _

# A single text field (title, abstract, body) longer than this is a bad record,
# not something to truncate silently: GitHub refuses bodies over 65,536
# characters, so anything four times that came from an edited export or an attack.
MAX_TEXT_CHARS = 262_144

# The values of ingest.models.Document.Kind and Post.Kind (kept here so parsers need no Django).
DOCUMENT_KINDS = {"paper", "thread"}
POST_KINDS = {"opening", "comment", "review", "review_comment"}

PAPER_METADATA_KEYS = (
    "abstract", "authors", "affiliations", "author_records", "categories", "versions",
    "doi", "journal_ref", "comments", "license",
)


@dataclass
class PostRecord:
    kind: str  # ingest.models.Post.Kind: opening, comment, review, review_comment
    external_id: str
    author: str
    author_role: str
    created: datetime
    body: str
    # What the source says of the post beyond its text, kept as received: a review's
    # state, a comment's edit time, a review comment's file, line and reply chain, a
    # deleted author (ingest.models.Post.details).
    details: dict = field(default_factory=dict)


@dataclass
class DocumentRecord:
    kind: str  # "paper" or "thread"
    source: str
    key: str
    title: str
    url: str = ""
    published: datetime | None = None
    updated: datetime | None = None
    metadata: dict = field(default_factory=dict)
    posts: list[PostRecord] = field(default_factory=list)
    location: str = ""  # where the record was read, for errors found while writing it


@dataclass
class Deletion:
    """A source says this document was deleted (OAI-PMH `status="deleted"`)."""

    source: str
    key: str
    deleted_on: str = ""
    location: str = ""


@dataclass
class RecordError:
    location: str  # "papers.jsonl line 17", "page 3 entry 12", "owner/repo#42"
    reason: str

    def __post_init__(self):
        # Both are shown to people and stored in the job's log: a reason quoting
        # the file (a saved GitHub error's message) must not carry a NUL that
        # PostgreSQL refuses, or a lone surrogate.
        self.location, self.reason = storable(str(self.location)), storable(str(self.reason))

    def __str__(self):
        return located(self.location, self.reason)


def located(location, reason):
    """'papers.jsonl line 17: missing field 'title'', in the reader's punctuation."""
    return _("%(location)s: %(reason)s") % {"location": location, "reason": reason}


class SourceError(RecordError):
    """The source itself answered with an error instead of records (an arXiv API error
    feed, a GitHub error object saved in place of data, an OAI-PMH error): the import
    fails with the source's own message, after writing whatever else was read."""


@dataclass
class RecordWarning:
    """Something to tell about a record that was still written (a duplicate key)."""

    location: str
    reason: str

    def __str__(self):
        return located(self.location, self.reason)


class BadRecord(ValueError):
    """Raised inside a parser for one record; turned into a RecordError by its caller."""


# What a parser may still raise on input nobody foresaw (a wrong type deep in a
# nested object). Readers catch these around each record, as they catch
# BadRecord, so one such record is reported where it was and the rest are read.
UNFORESEEN = (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError,
              RecursionError)


def unforeseen(exc):
    return _("could not be read (%(error)s)") % {
        "error": f"{type(exc).__name__}: {str(exc)[:200]}"}


def record_or_error(location, build, *args):
    """build(*args), or the RecordError saying why that one record could not be made (a
    BadRecord, or a shape of data nobody foresaw): the rest of the source reads on."""
    try:
        return build(*args)
    except BadRecord as exc:
        return RecordError(location, str(exc))
    except UNFORESEEN as exc:
        return RecordError(location, unforeseen(exc))


def should_be(what, expected, value):
    """'field 'title' should be a string, got int': what a field should have been."""
    return _("field %(field)s should be %(expected)s, got %(type)s") % {
        "field": repr(what), "expected": expected, "type": type(value).__name__}


def over_limit(what, size, limit=MAX_TEXT_CHARS):
    return _("field %(field)s is %(size)s characters, over the %(limit)s limit") % {
        "field": repr(what), "size": f"{size:,}", "limit": f"{limit:,}"}


def missing_field(what):
    return _("missing field %(field)s") % {"field": repr(what)}


# --- dates -------------------------------------------------------------------

def _read_date(value, what, parse):
    """`parse(value)` for a date string, or a BadRecord naming the field."""
    if not isinstance(value, str):
        raise BadRecord(_not_a_date_string(what, value))
    try:
        return parse(value.strip())
    except ValueError:
        raise BadRecord(_bad_date(what, value)) from None


def _not_a_date_string(what, value):
    return _("%(field)s should be a date string, got %(type)s") % {
        "field": what, "type": type(value).__name__}


def _bad_date(what, value):
    return _("bad date in %(field)s: %(value)s") % {"field": what, "value": repr(value[:40])}


def rfc3339(value, what):
    """'2025-07-30T08:41:27Z' (or with an offset) as an aware UTC datetime."""
    return _utc(_read_date(value, what, datetime.fromisoformat), value, what)


def _utc(parsed, value, what):
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first representable day
        raise BadRecord(_("date out of range in %(field)s: %(value)s") % {
            "field": what, "value": repr(value[:40])}) from None


_MONTHS = {name: n for n, name in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}


def rfc2822(value, what):
    """'Wed, 30 Jul 2025 08:41:27 GMT' (arXivRaw, the snapshot's versions)."""
    parts = value.split() if isinstance(value, str) else ()
    if len(parts) == 6 and parts[5] == "GMT" and parts[2] in _MONTHS:
        # The one shape arXiv writes, read five times faster than the general parser:
        # a snapshot has millions of these.
        try:
            hour, minute, second = parts[4].split(":")
            return datetime(int(parts[3]), _MONTHS[parts[2]], int(parts[1]), int(hour),
                            int(minute), int(second), tzinfo=UTC)
        except ValueError:
            pass  # the general parser below says what is wrong
    if not isinstance(value, str):
        raise BadRecord(_not_a_date_string(what, value))
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        raise BadRecord(_bad_date(what, value)) from None
    return _utc(parsed, value, what)


def day(value, what):
    """'2025-07-30' as midnight UTC (OAI datestamps, the arXiv format's created)."""
    parsed = _read_date(value, what, date.fromisoformat)
    return datetime(parsed.year, parsed.month, parsed.day, tzinfo=UTC)


def any_date(value, what):
    """A date in any of the formats sources use; for mapped tables."""
    if isinstance(value, str) and len(value.strip()) == 10:
        return day(value, what)
    if isinstance(value, str) and value[:3].isalpha():
        return rfc2822(value, what)
    return rfc3339(value, what)


# --- field checks ------------------------------------------------------------

def text(value, what, *, required=False, limit=MAX_TEXT_CHARS):
    """A string field stored as received; None when absent and allowed."""
    if value is None:
        if required:
            raise BadRecord(missing_field(what))
        return None
    if not isinstance(value, str):
        raise BadRecord(should_be(what, _("a string"), value))
    if required and not value.strip():
        raise BadRecord(_("field %(field)s is empty") % {"field": repr(what)})
    if len(value) > limit:
        raise BadRecord(over_limit(what, len(value), limit))
    return value


def one_line(value):
    """Titles arrive wrapped ("Toy\\n  Transformers"); joining the lines changes no word."""
    return " ".join(value.split())


def version_number(label):
    """'v12' -> 12, for ordering versions; 0 for anything odd."""
    try:
        return int(str(label).lstrip("vV"))
    except ValueError:
        return 0


def merge_versions(old, new):
    """Versions known before plus those just read, one per label, oldest first.

    The arXiv API returns only the version it serves, so a paper keeps the
    versions an earlier import saw (the issue's "keeps its versions").
    """
    merged = {v["version"]: v for v in old or [] if isinstance(v, dict) and "version" in v}
    merged.update({v["version"]: v for v in new or []})
    return sorted(merged.values(), key=lambda v: version_number(v["version"]))


# --- checks the database would otherwise make, record by record -------------

# Text no database here can store: U+0000 (PostgreSQL refuses it in text and JSON)
# and lone UTF-16 surrogates (JSON may carry "\ud83d" from a cut emoji; they cannot
# be encoded). NULs are dropped and surrogates become U+FFFD: the only changes made
# to text that is otherwise stored as received.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def check_record(item):
    """Fit a record to the database columns; raises BadRecord. Unstorable characters go here.

    Run by the loader on every record, whatever parser made it, so a bad record
    is reported with its location instead of failing its whole batch.
    """
    if isinstance(item, Deletion):
        item.source, item.key = _fits(item.source, "source", 32), _fits(item.key, "key", 200)
        return None
    if not isinstance(item, DocumentRecord):
        raise BadRecord(_("not a record: %(type)s") % {"type": type(item).__name__})
    if item.kind not in DOCUMENT_KINDS:
        raise BadRecord(_("kind %(kind)s is not paper or thread") % {"kind": repr(item.kind)})
    item.source, item.key = _fits(item.source, "source", 32), _fits(item.key, "key", 200)
    item.url = _fits(item.url, "url", 500) if item.url else ""
    if not isinstance(item.title, str) or not item.title.strip():
        raise BadRecord(missing_field("title"))
    if len(item.title) > MAX_TEXT_CHARS:
        raise BadRecord(over_limit("title", len(item.title)))
    item.title = storable(item.title)
    if not isinstance(item.metadata, dict):
        raise BadRecord(_("metadata should be an object"))
    if _has_unstorable(item.metadata):
        item.metadata = _storable_json(item.metadata)
    for post in item.posts:
        _check_post(post)
    return None


def _fits(value, what, limit):
    if not isinstance(value, str) or not value or len(value) > limit:
        raise BadRecord(_("%(field)s must be text of 1 to %(limit)s characters, got %(value)s")
                        % {"field": what, "limit": limit, "value": repr(str(value)[:60])})
    return storable(value)


def _check_post(post):
    if post.kind not in POST_KINDS:
        raise BadRecord(_("post kind %(kind)s is unknown") % {"kind": repr(post.kind)})
    if post.created is None:
        raise BadRecord(_("post %(post)s has no date") % {"post": post.external_id})
    post.external_id = _fits(post.external_id, "post id", 64)
    post.author = _fits(post.author, "post author", 100)
    if len(post.author_role) > 32:
        raise BadRecord(_("post %(post)s author_role is too long") % {"post": post.external_id})
    post.author_role, post.body = storable(post.author_role), storable(post.body)
    if not isinstance(post.details, dict):
        raise BadRecord(_("post %(post)s details should be an object")
                        % {"post": post.external_id})
    if _has_unstorable(post.details):
        post.details = _storable_json(post.details)


def storable(text):
    if UNSTORABLE.search(text) is None:
        return text
    return UNSTORABLE.sub(lambda found: "" if found.group() == "\x00" else "\ufffd", text)


def _has_unstorable(value):
    """Whether a string anywhere in a JSON value holds U+0000 or a lone surrogate.

    Checked on the value's orjson encoding, one pass in C instead of a walk in Python
    (it was a fifth of an import's time): orjson refuses surrogates and writes U+0000
    as the escape \\u0000. A backslash in the text before "u0000" reads the same, and
    a value orjson cannot encode (an integer over 64 bits) is refused: the walk decides
    those, so only time differs."""
    try:
        encoded = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return _walk_unstorable(value)
    return b"\\u0000" in encoded and _walk_unstorable(value)


def _walk_unstorable(value):
    # A loop rather than recursion: values come from outside, nested arbitrarily deep.
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if UNSTORABLE.search(value):
                return True
        elif isinstance(value, dict):
            stack += value.keys()
            stack += value.values()
        elif isinstance(value, list):
            stack += value
    return False


def json_text(value):
    """A JSON value as text for the database: orjson's encoding (several times json's
    speed), json's for what orjson refuses (integers over 64 bits, keys that are not
    strings), so a value is stored as json.dumps would store it."""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value)


def _storable_json(value):
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable(k): _storable_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable_json(v) for v in value]
    return value

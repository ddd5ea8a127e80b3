"""GitHub issue and pull-request threads from REST API JSON, saved or just fetched.

A thread arrives as a *bundle*: the REST objects as GitHub sent them, gathered per
issue or pull request. The live client writes the same bundles, so a study can be
rebuilt offline from what was fetched:

    {"repository": "owner/repo",
     "issue": {…GET /repos/{o}/{r}/issues/{n}…},
     "pull": {…GET /repos/{o}/{r}/pulls/{n}…} or null,
     "comments": [...], "reviews": [...], "review_comments": [...], "timeline": [...]}

Saved as one bundle per `.json` file, as JSON Lines (`.jsonl`, one bundle a line),
or a directory of either. A bare issue object (no comments), and a JSON array of
bundles or issues (what `gh api --paginate` saves for a list), are accepted too.
"""

import os
from pathlib import Path

from ..records import (UNFORESEEN, BadRecord, DocumentRecord, PostRecord, RecordError, rfc3339,
                       text, unforeseen)
from .lines import (BROKEN_FILE, MAX_LINE_BYTES, broken_file_reason, not_utf8_reason, open_binary,
                    parse_json, read_records, wide_encoding)

SOURCE = "github"
MAX_FILE_BYTES = 64 * 1024 * 1024
# Timeline items that are posts already, or noise for coding.
NOT_EVENTS = {"commented", "line-commented", "commit-commented", "subscribed", "unsubscribed",
              "mentioned"}


def read_path(path, max_line_bytes=MAX_LINE_BYTES, max_file_bytes=MAX_FILE_BYTES):
    """Every bundle in a file or a directory of files, in name order."""
    path = Path(path)
    files = sorted(p for p in path.iterdir()
                   if p.suffix in (".json", ".jsonl", ".gz") and p.is_file()) \
        if path.is_dir() else [path]
    if not files:
        yield RecordError(str(path), "no .json, .jsonl or .gz files in this directory")
    for file in files:
        if file.name.endswith((".jsonl", ".jsonl.gz")):
            yield from _read_jsonl(file, max_line_bytes)
        else:
            yield from _read_json(file, max_file_bytes)


def _read_jsonl(path, max_line_bytes):
    with open_binary(path) as stream:
        yield from read_records(stream, str(path), thread_record, max_line_bytes)


def _read_json(path, max_bytes=MAX_FILE_BYTES):
    """One bundle, or a JSON array of bundles or issue objects (as `gh api` saves lists).

    The file is read whole, so it is bounded: by its size on disk and, for a
    `.gz`, by what it unpacks to (a small archive can unpack to gigabytes).
    """
    try:
        data = parse_json(_read_bounded(path, max_bytes), "the file")
    except BadRecord as exc:
        yield RecordError(str(path), str(exc))
        return
    items = enumerate(data, 1) if isinstance(data, list) else [(None, data)]
    for n, item in items:
        location = f"{path} item {n}" if n else str(path)
        try:
            yield thread_record(item, location)
        except BadRecord as exc:
            yield RecordError(location, str(exc))
        except UNFORESEEN as exc:
            yield RecordError(location, unforeseen(exc))


def _read_bounded(path, max_bytes):
    if os.path.getsize(path) > max_bytes:
        raise BadRecord(f"file larger than {max_bytes:,} bytes")
    try:
        with open_binary(path) as stream:
            raw = stream.read(max_bytes + 1)
    except BROKEN_FILE as exc:
        raise BadRecord(broken_file_reason(exc)) from None
    if len(raw) > max_bytes:
        raise BadRecord(f"file unpacks to more than {max_bytes:,} bytes")
    if not raw.strip():
        raise BadRecord("the file is empty")
    if encoding := wide_encoding(raw):
        raise BadRecord(not_utf8_reason(encoding))
    return raw


def thread_record(bundle, location=""):
    """One bundle (or a bare issue object) as a thread record; raises BadRecord."""
    bundle = _as_bundle(bundle)
    issue = bundle["issue"]
    number = issue.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise BadRecord("issue has no integer 'number'")
    repo = _repository(bundle, issue)
    location = location or f"{repo}#{number}"
    pull = _object(bundle.get("pull"), "pull")
    return DocumentRecord(
        kind="thread", source=SOURCE, key=f"{repo}#{number}",
        title=text(issue.get("title"), "title", required=True),
        url=text(issue.get("html_url"), "html_url", limit=500) or "",
        published=rfc3339(issue.get("created_at"), "created_at"),
        updated=rfc3339(issue["updated_at"], "updated_at") if issue.get("updated_at") else None,
        metadata=_metadata(repo, number, issue, pull, bundle),
        posts=_posts(issue, bundle), location=location,
    )


def _as_bundle(obj):
    if not isinstance(obj, dict):
        raise BadRecord(f"a thread should be a JSON object, got {type(obj).__name__}")
    if "message" in obj and "documentation_url" in obj:
        # `gh api` writes GitHub's error JSON to stdout, so exports can hold one.
        raise BadRecord(f"a GitHub error was saved instead of a thread: {str(obj['message'])[:200]}")
    if "issue" not in obj and "number" in obj:
        return {"issue": obj}
    if not isinstance(obj.get("issue"), dict):
        raise BadRecord("missing field 'issue'")
    return obj


def _repository(bundle, issue):
    repo = bundle.get("repository")
    if repo is None:
        url = issue.get("repository_url")
        repo = "/".join(url.split("/")[-2:]) if isinstance(url, str) and "/repos/" in url else None
    if not isinstance(repo, str) or repo.count("/") != 1 or len(repo) > 140:
        raise BadRecord("cannot tell the repository (no 'repository' or 'repository_url')")
    return repo


def _optional_text(value, what, limit=200):
    """A short string field kept in the metadata as received (state, dates), or None."""
    if value is not None and not isinstance(value, str):
        raise BadRecord(f"field {what!r} should be a string, got {type(value).__name__}")
    return text(value, what, limit=limit)


def _object(value, what):
    if value is not None and not isinstance(value, dict):
        raise BadRecord(f"field {what!r} should be an object, got {type(value).__name__}")
    return value


def _list(bundle, what):
    value = bundle.get(what) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise BadRecord(f"field {what!r} should be a list of objects")
    return value


def _login(user):
    # A deleted account comes as null (GraphQL) or "ghost" (REST).
    login = user.get("login") if isinstance(user, dict) else None
    if login is not None and not isinstance(login, str):
        raise BadRecord(f"a user's 'login' should be a string, got {type(login).__name__}")
    return login or "ghost"


def _metadata(repo, number, issue, pull, bundle):
    pull_request = _object(issue.get("pull_request"), "pull_request")
    is_pull = pull is not None or pull_request is not None
    merged_at = _optional_text(
        (pull or {}).get("merged_at") or (pull_request or {}).get("merged_at"), "merged_at")
    labels = issue.get("labels") or []
    if not isinstance(labels, list):
        raise BadRecord("field 'labels' should be a list")
    for field in ("state", "state_reason", "closed_at"):
        _optional_text(issue.get(field), field)
    return {
        "repository": repo, "number": number,
        "thread_type": "pull_request" if is_pull else "issue",
        "state": issue.get("state"), "state_reason": issue.get("state_reason"),
        "merged": bool(pull.get("merged", merged_at)) if pull else bool(merged_at),
        "merged_at": merged_at, "draft": bool(issue.get("draft") or (pull or {}).get("draft")),
        "labels": [label.get("name") if isinstance(label, dict) else label for label in labels],
        "closed_at": issue.get("closed_at"), "author": _login(issue.get("user")),
        "events": _events(_list(bundle, "timeline")),
    }


def _posts(issue, bundle):
    """The opening post, then comments, reviews and review comments by time."""
    opening = _post("opening", issue, issue.get("created_at"), "issue")
    others = {}
    for kind, field, date_field in (("comment", "comments", "created_at"),
                                    ("review", "reviews", "submitted_at"),
                                    ("review_comment", "review_comments", "created_at")):
        for item in _list(bundle, field):
            if kind == "review" and not _is_readable_review(item):
                continue
            # The same id twice (pages shifting while paging) is one post.
            others[(kind, str(item.get("id")))] = _post(kind, item, item.get(date_field), field)
    return [opening] + sorted(others.values(), key=lambda p: (p.created, p.kind, p.external_id))


def _is_readable_review(review):
    # A pending review has no submitted_at and only its author can see it; an
    # approval without words is kept as an event, not as an empty post.
    return bool(review.get("submitted_at")) and bool(review.get("body"))


def _post(kind, item, created, what):
    if item.get("id") is None:
        raise BadRecord(f"an item of {what!r} has no id")
    return PostRecord(
        kind=kind, external_id=text(str(item["id"]), f"{what} id", limit=64),
        author=text(_login(item.get("user")), f"{what} user", limit=100),
        author_role=text(item.get("author_association") or "", f"{what} author_association",
                         limit=32),
        created=rfc3339(created, f"{what} {item['id']} date"),
        body=text(item.get("body") or "", f"{what} {item['id']} body"),
    )


def _events(timeline):
    """Timeline events (closed, reopened, merged, labeled, referenced, …) in time order.

    Unknown event names are kept as they came: GitHub adds new ones without notice.
    """
    events = [_event(n, item) for n, item in enumerate(timeline)
              if item.get("event") not in NOT_EVENTS]
    return sorted(events, key=lambda e: e["created_at"] or "")


def _event(n, item):
    name = item.get("event")
    if not isinstance(name, str):
        raise BadRecord(f"timeline[{n}] has no 'event'")
    committer = item.get("committer")
    created = item.get("created_at") or item.get("submitted_at") or (
        committer.get("date") if isinstance(committer, dict) else None)
    event = {"event": _optional_text(name, f"timeline[{n}].event"),
             "actor": _login(item.get("actor") or item.get("user")),
             "created_at": _optional_text(created, f"timeline[{n}].created_at")}
    if isinstance(item.get("label"), dict):
        event["label"] = item["label"].get("name")
    for field in ("commit_id", "state_reason", "sha", "rename"):
        if item.get(field):
            event[field] = item[field]
    if name == "reviewed" and item.get("state"):
        event["state"] = str(item["state"]).lower()[:40]
    source = item.get("source")
    source = source.get("issue") if isinstance(source, dict) else None
    if name == "cross-referenced" and isinstance(source, dict):
        event["source"] = _cross_reference(source)
    return event


def _cross_reference(issue):
    url = issue.get("html_url") or ""
    return {"url": url, "number": issue.get("number"), "title": issue.get("title")}

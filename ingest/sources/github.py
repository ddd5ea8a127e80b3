"""GitHub issue, pull-request and discussion threads from saved API JSON, or just fetched.

What is read, as people have it on disk:

- *bundles*, the workbench's own format (the live client writes them), one thread
  each: {"repository": "owner/repo", "issue": {…GET …/issues/{n}…}, "pull": {…GET
  …/pulls/{n}…} or null, "comments": [...], "reviews": [...], "review_comments":
  [...], "timeline": [...]}; one per `.json` file, or a `.jsonl` of them;
- raw REST responses as GitHub returns them: issue or pull objects, lists of them
  (issue list pages), and per-thread files matched to their thread by endpoint and
  number in the file's name (`comments_41.json`, `timeline_41.json`, `reviews_42.json`,
  `review_comments_42.json`, `pull_42.json`, or the API's own path
  `repos/o/r/pulls/42/comments.json`); a folder of them is assembled into whole threads;
- whatever `gh api` saved: one array, one object, arrays back to back (`--paginate`),
  pages in an outer array (`--slurp`), streamed value by value (lines.iter_json_values);
- GitHub Discussions as GraphQL saves them (`{"data": {"repository": {"discussions":
  {"nodes": [...]}}}}` or `…{"discussion": {...}}`), with comments, replies and the answer.

A saved GitHub error object (`{"message", "documentation_url"}`, what `gh api` writes
on an HTTP error) or a GraphQL `errors` answer is the source failing: a SourceError.
"""

import re
from pathlib import Path

from django.utils.translation import gettext as _

from ..records import (
    UNFORESEEN, BadRecord, DocumentRecord, PostRecord, RecordError, SourceError, located,
    missing_field, record_or_error, rfc3339, should_be, text, unforeseen,
)
from .lines import (
    BROKEN_FILE, MAX_LINE_BYTES, broken_file_reason, iter_json_values, open_binary, read_records,
)

SOURCE = "github"
# Timeline items that are posts already, or noise for coding.
NOT_EVENTS = {"commented", "line-commented", "commit-commented", "subscribed", "unsubscribed",
              "mentioned"}
# What a deleted account is shown as: GitHub logins have no spaces, so no user has this name.
DELETED_ACCOUNT = "deleted account"
GHOST_ID = 10137  # the REST API's stand-in user for deleted accounts, login "ghost"
SUFFIXES = (".json", ".jsonl", ".gz")
PARTS = ("pull", "comments", "reviews", "review_comments", "timeline")


def read_path(path, max_line_bytes=MAX_LINE_BYTES):
    """Every thread in a file or a folder (read with its subfolders, in name order)."""
    path = Path(path)
    if not path.is_dir():
        yield from _read_file(path, path.name, max_line_bytes, {})
        return
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES))
    if not files:
        yield RecordError(str(path), _("no .json, .jsonl or .gz files in this directory"))
        return
    parts, main = {}, []
    for file in files:
        found = part_of(file.relative_to(path))
        if found:
            parts.setdefault(found[1], []).append((found[0], file, str(file.relative_to(path))))
        else:
            main.append(file)
    used = set()
    for file in main:
        yield from _read_file(file, str(file.relative_to(path)), max_line_bytes, parts, used)
    for number in sorted(set(parts) - used):
        yield from _orphan_parts(path, number, parts[number], max_line_bytes)


_WORDS = re.compile(r"[a-z]+|\d+")


def part_of(relative):
    """(endpoint, thread number) when a file's name says it holds one thread's part, else None.

    `comments_41.json`, `41/timeline.json`, `reviews-42.json`, `review_comments_42.json`,
    `pull_42.json`; in the API's own paths `issues/41/comments` are conversation
    comments and `pulls/42/comments` review comments.
    """
    tokens = _WORDS.findall(str(relative).lower())
    numbers = [t for t in tokens if t.isdigit()]
    words = [t for t in tokens if not t.isdigit()]
    known = [w for w in words if w in ("comments", "timeline", "reviews", "pull", "pulls",
                                       "issue", "issues", "page")]
    if not numbers or not known or known[-1] in ("issue", "issues", "page"):
        return None
    endpoint = known[-1]
    if endpoint == "comments" and ("review" in words or "pull" in words or "pulls" in words):
        endpoint = "review_comments"
    return ("pull" if endpoint == "pulls" else endpoint), int(numbers[-1])


def _read_file(path, name, max_line_bytes, parts, used=None):
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        with open_binary(path) as stream:
            yield from read_records(stream, str(path), _bundle_or_discussion, max_line_bytes)
        return
    try:
        with open_binary(path) as stream:
            for item in iter_json_values(stream, str(path), max_line_bytes):
                if isinstance(item, RecordError):
                    yield item
                    continue
                location, value = item
                yield from _main_value(value, location, parts, used, max_line_bytes)
    except BROKEN_FILE as exc:
        yield RecordError(str(path), broken_file_reason(exc))


def _main_value(value, location, parts, used, max_line_bytes):
    try:
        if _is_error(value):
            yield _source_error(value, location)
        elif isinstance(value, dict) and ("data" in value or "errors" in value):
            yield from _graphql(value, location)
        elif isinstance(value, dict) and "issue" not in value and isinstance(
                value.get("number"), int) and not _is_discussion(value):
            number = value["number"]
            if used is not None:
                used.add(number)
            bundle = _assemble(value, number, parts.get(number, ()), location, max_line_bytes)
            yield thread_record(bundle, location)
        else:
            yield _bundle_or_discussion(value, location)
    except BadRecord as exc:
        yield RecordError(location, str(exc))
    except UNFORESEEN as exc:
        yield RecordError(location, unforeseen(exc))


def _bundle_or_discussion(value, location=""):
    if _is_discussion(value):
        return discussion_record(value, None, location)
    if isinstance(value, dict) and ("data" in value or "errors" in value):
        records = list(_graphql(value, location))
        if len(records) != 1:
            raise BadRecord(_("a GraphQL answer of several discussions: save it as .json, not "
                              "a line"))
        if isinstance(records[0], RecordError):
            raise BadRecord(records[0].reason)
        return records[0]
    return thread_record(value, location)


def _is_error(value):
    return isinstance(value, dict) and "message" in value and "documentation_url" in value


def _source_error(value, location):
    message = str(value["message"])[:200]
    if value.get("status"):
        return SourceError(location, _("GitHub answered with an error instead of data: "
                                       "%(message)s (HTTP %(status)s)") % {
            "message": message, "status": value["status"]})
    return SourceError(location, _("GitHub answered with an error instead of data: "
                                   "%(message)s") % {"message": message})


def _assemble(obj, number, parts, location, max_line_bytes):
    """A bundle for an issue or pull object read from a list, with its parts' files."""
    bundle = {"issue": obj, "pull": obj if "head" in obj else None}
    for endpoint, file, name in parts:
        values = _part_values(file, name, max_line_bytes)
        if endpoint == "pull":
            bundle["pull"] = values[0] if values else None
        else:
            for value in values:
                field = ("review_comments" if endpoint == "comments" and "diff_hunk" in value
                         else endpoint)
                bundle.setdefault(field, []).append(value)
    if obj is bundle["pull"]:
        bundle["issue"] = _issue_from_pull(obj)
    return bundle


def _part_values(file, name, max_line_bytes):
    """The values of one thread's part file; a bad file is an error for its thread."""
    values = []
    with open_binary(file) as stream:
        for item in iter_json_values(stream, name, max_line_bytes):
            if isinstance(item, RecordError):
                raise BadRecord(located(item.location, item.reason))
            location, value = item
            if _is_error(value):
                raise BadRecord(located(location, _source_error(value, location).reason))
            if not isinstance(value, dict):
                raise BadRecord(located(location, _("should be a JSON object, got %(type)s") % {
                    "type": type(value).__name__}))
            values.append(value)
    return values


def _orphan_parts(folder, number, parts, max_line_bytes):
    """Parts of a thread whose issue is in no list: a pull object stands for it; else an error."""
    pulls = [(file, name) for endpoint, file, name in parts if endpoint == "pull"]
    if not pulls:
        names = ", ".join(name for _, _, name in parts)
        yield RecordError(located(folder, names),
                          _("parts of thread #%(number)s, but no issue or pull request "
                            "#%(number)s in the folder") % {"number": number})
        return
    location = str(pulls[0][0])
    try:
        pull = _part_values(*pulls[0], max_line_bytes)
        if not pull:
            raise BadRecord(_("the file holds no pull request"))
        yield thread_record(_assemble(pull[0], number, parts, location, max_line_bytes), location)
    except BadRecord as exc:
        yield RecordError(location, str(exc))
    except UNFORESEEN as exc:
        yield RecordError(location, unforeseen(exc))


def _issue_from_pull(pull):
    """A pull object as the issue it also is (what the issue list would have said)."""
    return {**pull, "pull_request": {"merged_at": pull.get("merged_at")}}


# --- one thread ----------------------------------------------------------------------

def thread_record(bundle, location=""):
    """One bundle (or a bare issue object) as a thread record; raises BadRecord."""
    bundle = _as_bundle(bundle)
    issue = bundle["issue"]
    number = issue.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise BadRecord(_("issue has no integer %(field)s") % {"field": "'number'"})
    pull = _object(bundle.get("pull"), "pull")
    repo = _repository(bundle, issue, pull)
    location = location or f"{repo}#{number}"
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
        raise BadRecord(_("a thread should be a JSON object, got %(type)s") % {
            "type": type(obj).__name__})
    if _is_error(obj):
        # `gh api` writes GitHub's error JSON to stdout, so exports can hold one.
        raise BadRecord(_("a GitHub error was saved instead of a thread: %(message)s") % {
            "message": str(obj["message"])[:200]})
    if "issue" not in obj and "number" in obj:
        return {"issue": _issue_from_pull(obj), "pull": obj} if "head" in obj else {"issue": obj}
    if not isinstance(obj.get("issue"), dict):
        if "issue_url" in obj or "pull_request_url" in obj:
            raise BadRecord(_("a comment or review, not a thread: name its file for its "
                              "thread and endpoint (comments_41.json, reviews_42.json) in a "
                              "folder with the issues"))
        raise BadRecord(missing_field("issue"))
    return obj


_REPO_IN_URL = re.compile(r"^https://(?:api\.)?github\.com/(?:repos/)?([^/\s]+/[^/\s]+)/")


def _repository(bundle, issue, pull=None):
    repo = bundle.get("repository")
    if repo is None:
        url = issue.get("repository_url")
        repo = "/".join(url.split("/")[-2:]) if isinstance(url, str) and "/repos/" in url else None
    if repo is None and "repository_url" not in issue:
        base = (pull or {}).get("base")
        base_repo = base.get("repo") if isinstance(base, dict) else None
        repo = base_repo.get("full_name") if isinstance(base_repo, dict) else None
        if repo is None and isinstance(issue.get("html_url"), str):
            found = _REPO_IN_URL.match(issue["html_url"])
            repo = found.group(1) if found else None
    if not isinstance(repo, str) or repo.count("/") != 1 or len(repo) > 140:
        raise BadRecord(no_repository("'repository'", "'repository_url'"))
    return repo


def no_repository(first, second):
    return _("cannot tell the repository (no %(first)s or %(second)s)") % {
        "first": first, "second": second}


def _optional_text(value, what, limit=200):
    """A short string field kept in the metadata as received (state, dates), or None."""
    if value is not None and not isinstance(value, str):
        raise BadRecord(should_be(what, _("a string"), value))
    return text(value, what, limit=limit)


def _object(value, what):
    if value is not None and not isinstance(value, dict):
        raise BadRecord(should_be(what, _("an object"), value))
    return value


def _list(bundle, what):
    value = bundle.get(what) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise BadRecord(_("field %(field)s should be a list of objects") % {"field": repr(what)})
    return value


def author(user):
    """(name, deleted): a deleted account comes as null (GraphQL, some REST) or as the
    REST stand-in user "ghost"; either is a deleted account, not a person named ghost."""
    if user is None:
        return DELETED_ACCOUNT, True
    login = user.get("login") if isinstance(user, dict) else None
    if login is not None and not isinstance(login, str):
        raise BadRecord(_("a user's %(field)s should be a string, got %(type)s") % {
            "field": "'login'", "type": type(login).__name__})
    if not login or (login == "ghost" and user.get("id") in (GHOST_ID, None)):
        return DELETED_ACCOUNT, True
    return login, False


def _metadata(repo, number, issue, pull, bundle):
    pull_request = _object(issue.get("pull_request"), "pull_request")
    is_pull = pull is not None or pull_request is not None
    merged_at = _optional_text(
        (pull or {}).get("merged_at") or (pull_request or {}).get("merged_at"), "merged_at")
    labels = issue.get("labels") or []
    if not isinstance(labels, list):
        raise BadRecord(_("field %(field)s should be a list") % {"field": "'labels'"})
    for field in ("state", "state_reason", "closed_at"):
        _optional_text(issue.get(field), field)
    name, deleted = author(issue.get("user"))
    metadata = {
        "repository": repo, "number": number,
        "thread_type": "pull_request" if is_pull else "issue",
        "state": issue.get("state"), "state_reason": issue.get("state_reason"),
        "merged": bool(pull.get("merged", merged_at)) if pull else bool(merged_at),
        "merged_at": merged_at, "draft": bool(issue.get("draft") or (pull or {}).get("draft")),
        "labels": [label.get("name") if isinstance(label, dict) else label for label in labels],
        "closed_at": issue.get("closed_at"), "author": name,
        "events": _events(_list(bundle, "timeline")),
    }
    if deleted:
        metadata["author_deleted"] = True
    if not deleted and (kind := account_type(issue.get("user"), "user")):
        metadata["author_type"] = kind
    if pull:
        metadata["head"] = _branch(pull.get("head"), "head")
        metadata["base"] = _branch(pull.get("base"), "base")
        if "merged_by" in pull:  # who merged it (null until merged)
            merger = _object(pull.get("merged_by"), "merged_by")
            metadata["merged_by"] = author(merger)[0] if merger is not None else None
    return metadata


def account_type(user, what):
    """The account's kind as GitHub gives it (User, Bot, Organization, Mannequin), or None
    when the answer does not say: a bot's replies are not a person's."""
    if not isinstance(user, dict) or user.get("type") is None:
        return None
    return text(user["type"], f"{what} type", limit=32)


def _branch(side, what):
    """A PR's head or base: label, ref, sha and repository; a deleted fork's repo is null."""
    side = _object(side, what)
    if side is None:
        return None
    repo = _object(side.get("repo"), f"{what}.repo")
    branch = {field: _optional_text(side.get(field), f"{what}.{field}")
              for field in ("label", "ref", "sha")}
    branch["repo"] = _optional_text(repo.get("full_name"), f"{what}.repo.full_name") if repo else None
    branch["repo_deleted"] = repo is None
    return branch


def _posts(issue, bundle):
    """The opening post, then comments, reviews and review comments by time."""
    opening = _post("opening", issue, issue.get("created_at"), "issue")
    others = {}
    for kind, field, date_field in (("comment", "comments", "created_at"),
                                    ("review", "reviews", "submitted_at"),
                                    ("review_comment", "review_comments", "created_at")):
        for item in _list(bundle, field):
            if kind == "review" and not item.get("submitted_at"):
                # A pending review has no submitted_at and only its author can see it.
                continue
            # The same id twice (pages shifting while paging) is one post.
            others[(kind, str(item.get("id")))] = _post(kind, item, item.get(date_field), field)
    return [opening] + sorted(others.values(), key=lambda p: (p.created, p.kind, p.external_id))


def _post(kind, item, created, what):
    if item.get("id") is None:
        raise BadRecord(_("an item of %(field)s has no id") % {"field": repr(what)})
    name, deleted = author(item.get("user"))
    details = {"author_deleted": True} if deleted else {}
    if not deleted and (kind_of_account := account_type(item.get("user"), f"{what} user")):
        details["author_type"] = kind_of_account
    if kind != "opening":
        updated = _optional_text(item.get("updated_at"), f"{what} {item['id']} updated_at")
        if updated and updated != created:
            details["updated"] = updated  # an edit: REST keeps its time, not its history
    if kind == "review":
        details.update(_review(item, what))
    elif kind == "review_comment":
        details.update(_review_comment(item, what))
    return PostRecord(
        kind=kind, external_id=text(str(item["id"]), f"{what} id", limit=64),
        author=text(name, f"{what} user", limit=100),
        author_role=text(item.get("author_association") or "", f"{what} author_association",
                         limit=32),
        created=rfc3339(created, f"{what} {item['id']} date"),
        body=text(item.get("body") or "", f"{what} {item['id']} body"), details=details,
    )


def _review(item, what):
    # The review list says APPROVED, the timeline says approved: one case.
    state = _optional_text(item.get("state"), f"{what} {item['id']} state", limit=40)
    details = {"state": state.upper() if state else None}
    if item.get("commit_id"):
        details["commit_id"] = _optional_text(item["commit_id"], f"{what} commit_id", limit=64)
    return details


REVIEW_COMMENT_TEXT = ("path", "diff_hunk", "side", "start_side", "subject_type", "commit_id",
                       "original_commit_id")
REVIEW_COMMENT_NUMBERS = ("line", "original_line", "start_line", "original_start_line",
                          "position", "original_position")


def _review_comment(item, what):
    where = f"{what} {item['id']}"
    details = {}
    for field in REVIEW_COMMENT_TEXT:
        value = _optional_text(item.get(field), f"{where} {field}",
                               limit=65_536 if field == "diff_hunk" else 1000)
        if value is not None:
            details[field] = value
    for field in REVIEW_COMMENT_NUMBERS:
        value = item.get(field)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise BadRecord(_("field %(field)s should be a whole number") % {
                "field": repr(f"{where} {field}")})
        if value is not None:
            details[field] = value
    details["outdated"] = item.get("line") is None and item.get("subject_type") != "file"
    for field, key in (("in_reply_to_id", "in_reply_to"), ("pull_request_review_id", "review")):
        if item.get(field) is not None:
            details[key] = text(str(item[field]), f"{where} {field}", limit=64)
    return details


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
        raise BadRecord(_("%(field)s has no %(key)s") % {"field": f"timeline[{n}]",
                                                        "key": "'event'"})
    committer = item.get("committer")
    created = item.get("created_at") or item.get("submitted_at") or (
        committer.get("date") if isinstance(committer, dict) else None)
    actor = item.get("actor") or item.get("user")
    if actor is None and name == "committed":  # a git commit: its author, not an account
        git_author = item.get("author")
        actor_name = git_author.get("name") if isinstance(git_author, dict) else None
    else:
        actor_name = author(actor)[0]
    event = {"event": _optional_text(name, f"timeline[{n}].event"),
             "actor": _optional_text(actor_name, f"timeline[{n}].actor"),
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


# --- discussions (GraphQL) -------------------------------------------------------------

def _is_discussion(value):
    return isinstance(value, dict) and isinstance(value.get("category"), dict) and \
        isinstance(value.get("number"), int)


def _graphql(value, location):
    """The discussions of a saved GraphQL answer; `errors` without data is the source failing."""
    data = value.get("data")
    if not isinstance(data, dict):
        errors = value.get("errors")
        first = errors[0] if isinstance(errors, list) and errors else {}
        message = first.get("message") if isinstance(first, dict) else None
        yield SourceError(location, _("GitHub GraphQL answered with an error: %(message)s")
                          % {"message": str(message or errors)[:200]})
        return
    repository = _object(data.get("repository"), "data.repository") or {}
    repo_name = repository.get("nameWithOwner")
    if isinstance(repository.get("discussion"), dict):
        nodes = [repository["discussion"]]
    else:
        connection = _object(repository.get("discussions"), "data.repository.discussions") or {}
        nodes = connection.get("nodes")
        if not isinstance(nodes, list):
            raise BadRecord(_("a GraphQL answer without %(nodes)s or %(one)s") % {
                "nodes": "data.repository.discussions.nodes",
                "one": "data.repository.discussion"})
    for n, node in enumerate(nodes, 1):
        where = (_("%(location)s discussion %(number)s") % {"location": location, "number": n}
                 if len(nodes) > 1 else location)
        yield record_or_error(where, discussion_record, node, repo_name, where)


def discussion_record(node, repo=None, location=""):
    """One GraphQL Discussion node (with comments and their replies) as a thread record."""
    if not isinstance(node, dict):
        raise BadRecord(_("a discussion should be a JSON object, got %(type)s") % {
            "type": type(node).__name__})
    number = node.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise BadRecord(_("discussion has no integer %(field)s") % {"field": "'number'"})
    url = text(node.get("url"), "url", limit=500) or ""
    if repo is None:
        found = _REPO_IN_URL.match(url)
        repo = found.group(1) if found else None
    if not isinstance(repo, str) or repo.count("/") != 1:
        raise BadRecord(no_repository("'url'", "'nameWithOwner'"))
    category = _object(node.get("category"), "category") or {}
    name, deleted = author(node.get("author"))
    comments = _nodes(node.get("comments"), "comments")
    answered = bool(node.get("answerChosenAt")) or any(c.get("isAnswer") for c in comments)
    metadata = {
        "repository": repo, "number": number, "thread_type": "discussion",
        "state": "closed" if node.get("closed") else "open",
        "category": _optional_text(category.get("name"), "category.name"),
        "answered": answered,
        "answer_chosen_at": _optional_text(node.get("answerChosenAt"), "answerChosenAt"),
        "labels": [], "closed_at": _optional_text(node.get("closedAt"), "closedAt"),
        "author": name, "events": [],
    }
    if deleted:
        metadata["author_deleted"] = True
    opening = _discussion_post("opening", node, "discussion")
    posts = []
    for comment in comments:
        posts.append(_discussion_post("comment", comment, "comment"))
        for reply in _nodes(comment.get("replies"), "replies"):
            posts.append(_discussion_post("comment", reply, "reply",
                                          reply_to=str(comment.get("id"))))
    posts.sort(key=lambda p: (p.created, p.external_id))
    return DocumentRecord(
        kind="thread", source=SOURCE, key=f"{repo}#{number}",
        title=text(node.get("title"), "title", required=True), url=url,
        published=rfc3339(node.get("createdAt"), "createdAt"),
        updated=rfc3339(node["updatedAt"], "updatedAt") if node.get("updatedAt") else None,
        metadata=metadata, posts=[opening] + posts, location=location,
    )


def _nodes(connection, what):
    """A GraphQL connection's nodes; a missing connection is none."""
    if connection is None:
        return []
    nodes = connection.get("nodes") if isinstance(connection, dict) else None
    if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
        raise BadRecord(_("field %(field)s should be a connection with a list of 'nodes'")
                        % {"field": repr(what)})
    return nodes


def _discussion_post(kind, node, what, reply_to=None):
    if node.get("id") is None:
        raise BadRecord(_("a %(what)s has no id") % {"what": what})
    name, deleted = author(node.get("author"))
    details = {"author_deleted": True} if deleted else {}
    if reply_to:
        details["reply_to"] = reply_to
    if kind != "opening":  # said of every comment, so a comment's id reaches its replies
        details["is_answer"] = bool(node.get("isAnswer"))
    edited = _optional_text(node.get("lastEditedAt"), f"{what} lastEditedAt")
    if edited:
        details["updated"] = edited
    if node.get("isMinimized"):
        details["minimized"] = _optional_text(node.get("minimizedReason"), "minimizedReason") or True
    return PostRecord(
        kind=kind, external_id=text(str(node["id"]), f"{what} id", limit=64),
        author=name, author_role=text(node.get("authorAssociation") or "",
                                      f"{what} authorAssociation", limit=32),
        created=rfc3339(node.get("createdAt"), f"{what} {node['id']} createdAt"),
        body=text(node.get("body") or "", f"{what} {node['id']} body"), details=details,
    )

"""GitHub: a repository's issues and pull requests since a date (REST, as thread bundles),
and its Discussions (GraphQL, which is the only API that has them).

Rules from GitHub's docs, all honoured here:
- follow the `Link` header (rel="next"), never build page URLs; per_page=100;
- serial requests; when `x-ratelimit-remaining` reaches 0, wait for `x-ratelimit-reset`;
- 403/429 with `retry-after`: wait that long; with remaining 0: wait for the reset;
  a secondary limit with neither: wait a minute, doubling; a 403 with no rate-limit
  signal is a permission error and is not retried;
- conditional requests: the ETag and body of each answer are kept
  (`ingest.models.CachedResponse`), a 304 reuses the body and costs no quota.
The token comes from GITHUB_TOKEN unless one is given.

Discussions come through GraphQL with the same rules: serial POSTs to /graphql, the same
rate-limit headers, 403/429 waits and back-off on 5xx, network errors and cut-short
answers. A 200 whose `errors` say RATE_LIMITED waits and asks again; any other GraphQL
error is the source failing. Pages follow `pageInfo.endCursor` (discussions newest
update first, so `since` stops the reading), and a discussion's comments, and a comment's
replies, past the first hundred are read page by page too. A repository without
Discussions has none: an empty list, not an error.
"""

import hashlib
import json
import os
import time

import httpx
from django.utils.translation import gettext as _

from ..models import CachedResponse
from ..records import RecordError, record_or_error
from ..sources.github import discussion_record, thread_record
from .http import FetchError, backoff, fetch, gave_up, make_http, network_error, retry_after

API_URL = "https://api.github.com"
ACCEPT = "application/vnd.github+json"
API_VERSION = "2022-11-28"
PER_PAGE = 100
DISCUSSIONS_PER_PAGE = 25  # each with up to PER_PAGE comments of up to PER_PAGE replies

_POST = ("id author { login } authorAssociation body createdAt lastEditedAt isMinimized "
         "minimizedReason")
_REPLIES = "replies(first: %d, after: $replies) { pageInfo { hasNextPage endCursor } " \
           "nodes { %s } }" % (PER_PAGE, _POST)
_COMMENT = f"{_POST} isAnswer {_REPLIES.replace('$replies', 'null')}"
_COMMENTS = "comments(first: %d, after: $comments) { pageInfo { hasNextPage endCursor } " \
            "nodes { %s } }" % (PER_PAGE, _COMMENT)
_DISCUSSION = ("id number title url createdAt updatedAt closed closedAt answerChosenAt "
               "author { login } authorAssociation category { name } body "
               + _COMMENTS.replace("$comments", "null"))
DISCUSSIONS_QUERY = (
    "query($owner: String!, $name: String!, $after: String) { repository(owner: $owner, "
    "name: $name) { nameWithOwner discussions(first: %d, after: $after, orderBy: {field: "
    "UPDATED_AT, direction: DESC}) { pageInfo { hasNextPage endCursor } nodes { %s } } } }"
    % (DISCUSSIONS_PER_PAGE, _DISCUSSION))
COMMENTS_QUERY = (
    "query($owner: String!, $name: String!, $number: Int!, $comments: String) { "
    "repository(owner: $owner, name: $name) { discussion(number: $number) { %s } } }"
    % _COMMENTS)
REPLIES_QUERY = ("query($id: ID!, $replies: String) { node(id: $id) { ... on "
                 "DiscussionComment { %s } } }" % _REPLIES)


class GitHubError(FetchError):
    def __init__(self, message, status=None):
        self.status = status
        super().__init__(message)


class ResponseCache:
    """ETag and body per URL, in the database. Keys hash the token: ETags vary with it."""

    def __init__(self, token):
        self.variant = hashlib.sha256(f"{ACCEPT}\n{token or ''}".encode()).hexdigest()

    def key(self, url):
        return hashlib.sha256(f"{self.variant}\n{url}".encode()).hexdigest()

    def get(self, url):
        return CachedResponse.objects.filter(key=self.key(url)).first()

    def put(self, url, response, body, next_url):
        CachedResponse.objects.update_or_create(key=self.key(url), defaults={
            "url": url, "etag": response.headers.get("etag", ""),
            "last_modified": response.headers.get("last-modified", ""),
            "next_url": next_url or "", "body": body})


class GitHubClient:
    def __init__(self, token=None, *, transport=None, sleep=time.sleep, clock=time.time,
                 max_retries=5, backoff_base=2.0, secondary_wait=60.0, cache=True,
                 api_url=API_URL):
        token = token if token is not None else os.environ.get("GITHUB_TOKEN", "")
        headers = {"Accept": ACCEPT, "X-GitHub-Api-Version": API_VERSION}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.http = make_http(transport, headers)
        self.sleep, self.clock, self.api_url = sleep, clock, api_url
        self.cache = ResponseCache(token) if cache else None
        self.max_retries, self.backoff_base, self.secondary_wait = max_retries, backoff_base, secondary_wait
        self.quota_resets_at = None  # set when a response says no requests remain

    # --- threads -------------------------------------------------------------

    def threads(self, repository, since=None, save_to=None, discussions=False):
        """Yield a record (or RecordError) per issue or PR updated since `since`, then,
        with `discussions`, per discussion updated since then.

        With save_to, each bundle (and each discussion as GraphQL gives it) is also
        written as a JSON line to that file (through a temporary file renamed when the
        harvest completes); `ingest_github saved` reads it back.
        """
        saver = _BundleWriter(save_to) if save_to else None
        yield from self._issue_threads(repository, since, saver)
        if discussions:
            yield from self._discussion_threads(repository, since, saver)
        if saver:
            saver.close()

    def _issue_threads(self, repository, since, saver):
        for bundle in self.bundles(repository, since):
            if isinstance(bundle, RecordError):
                yield bundle
                continue
            if saver:
                saver.write(bundle)
            yield record_or_error(f"{repository}#{bundle['issue'].get('number')}",
                                  thread_record, bundle)

    def _discussion_threads(self, repository, since, saver):
        for node in self.discussions(repository, since):
            if saver:
                saver.write(node)
            location = f"{repository} discussion {node.get('number')}"
            yield record_or_error(location, discussion_record, node, repository, location)

    # --- discussions (GraphQL) -------------------------------------------------

    def discussions(self, repository, since=None):
        """Every discussion updated since `since` (all of them without it), each node with
        all its comments and their replies, newest update first."""
        owner, name = repository.split("/", 1)
        after = None
        while True:
            data = self.graphql(DISCUSSIONS_QUERY, {"owner": owner, "name": name,
                                                    "after": after})
            found = _path(data, "repository", "discussions")
            for node in found.get("nodes") or []:
                if since and str(node.get("updatedAt") or "") < since:
                    return  # newest first: the rest are older still
                self._complete(owner, name, node)
                yield node
            info = found.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return
            after = info.get("endCursor")

    def _complete(self, owner, name, node):
        """Read the comments past the first page, and the replies past theirs, into `node`."""
        comments = node.get("comments") or {}
        while (comments.get("pageInfo") or {}).get("hasNextPage"):
            more = _path(self.graphql(COMMENTS_QUERY, {
                "owner": owner, "name": name, "number": node["number"],
                "comments": comments["pageInfo"]["endCursor"]}),
                "repository", "discussion", "comments")
            comments["nodes"] = [*comments.get("nodes", []), *(more.get("nodes") or [])]
            comments["pageInfo"] = more.get("pageInfo") or {}
        for comment in comments.get("nodes") or []:
            replies = comment.get("replies") or {}
            while (replies.get("pageInfo") or {}).get("hasNextPage"):
                more = _path(self.graphql(REPLIES_QUERY, {
                    "id": comment["id"], "replies": replies["pageInfo"]["endCursor"]}),
                    "node", "replies")
                replies["nodes"] = [*replies.get("nodes", []), *(more.get("nodes") or [])]
                replies["pageInfo"] = more.get("pageInfo") or {}

    def graphql(self, query, variables):
        """The `data` of a GraphQL answer, with the REST client's retries and waits; a
        RATE_LIMITED answer waits and asks again, any other error is GitHubError."""
        url = f"{self.api_url}/graphql"
        payload = {"query": query, "variables": variables}
        for attempt in range(self.max_retries + 1):
            result, problem, wait = self._try(url, {}, None, attempt, payload)
            if result is not None:
                answer = result[0] if isinstance(result[0], dict) else {}
                errors = answer.get("errors") or []
                if not errors and isinstance(answer.get("data"), dict):
                    return answer["data"]
                if any(isinstance(e, dict) and e.get("type") == "RATE_LIMITED" for e in errors):
                    problem = _("rate limited (GraphQL)")
                    wait = 0.0 if self.quota_resets_at else backoff(self.secondary_wait, attempt)
                else:
                    first = errors[0] if errors and isinstance(errors[0], dict) else {}
                    raise GitHubError(_("GitHub GraphQL answered with an error: %(message)s") % {
                        "message": str(first.get("message") or errors or answer)[:200]})
            if attempt < self.max_retries and wait:  # 0: the next try waits for the reset
                self.sleep(wait)
        raise GitHubError(gave_up(url, self.max_retries + 1, problem))

    def bundles(self, repository, since=None):
        """The REST objects of every issue and PR updated since `since`, one bundle each."""
        params = {"state": "all", "sort": "updated", "direction": "asc", "per_page": PER_PAGE}
        if since:
            params["since"] = since
        for issue in self.pages(f"{self.api_url}/repos/{repository}/issues", params):
            try:
                yield self.bundle(repository, issue)
            except GitHubError as exc:
                if exc.status not in (404, 410):
                    raise
                # Deleted or hidden since it was listed: this thread only.
                yield RecordError(f"{repository}#{issue.get('number')}", str(exc))

    def bundle(self, repository, issue):
        bundle = {"repository": repository, "issue": issue, "pull": None, "comments": [],
                  "reviews": [], "review_comments": [], "timeline": []}
        if issue.get("comments"):  # a count: no request for threads without comments
            bundle["comments"] = list(self.pages(issue["comments_url"], {"per_page": PER_PAGE}))
        bundle["timeline"] = list(self.pages(issue["timeline_url"], {"per_page": PER_PAGE}))
        pull_url = (issue.get("pull_request") or {}).get("url")
        if pull_url:
            bundle["pull"], _next = self.get_json(pull_url)
            bundle["reviews"] = list(self.pages(f"{pull_url}/reviews", {"per_page": PER_PAGE}))
            bundle["review_comments"] = list(self.pages(f"{pull_url}/comments",
                                                        {"per_page": PER_PAGE}))
        return bundle

    # --- requests ------------------------------------------------------------

    def pages(self, url, params=None):
        """Every item of a list endpoint, following Link rel="next" until there is none."""
        while url:
            data, next_url = self.get_json(url, params)
            if data is None:  # 204 No Content
                return
            if not isinstance(data, list):
                raise GitHubError(_("%(url)s: expected a list, got %(type)s") % {
                    "url": url, "type": type(data).__name__})
            yield from data
            url, params = next_url, None  # the next URL carries its own query

    def get_json(self, url, params=None):
        """(decoded JSON, next page URL) for a GET, conditional when cached."""
        full_url = str(httpx.URL(url, params=params)) if params else url
        cached = self.cache.get(full_url) if self.cache else None
        headers = {}
        if cached and cached.etag:
            headers["If-None-Match"] = cached.etag
        if cached and cached.last_modified:
            headers["If-Modified-Since"] = cached.last_modified
        for attempt in range(self.max_retries + 1):
            result, problem, wait = self._try(full_url, headers, cached, attempt)
            if result is not None:
                return result
            if attempt < self.max_retries:
                self.sleep(wait)
        raise GitHubError(gave_up(full_url, self.max_retries + 1, problem))

    def _try(self, url, headers, cached, attempt, payload=None):
        """((data, next_url), None, None), or (None, what went wrong, seconds to wait);
        with `payload`, a POST of it (GraphQL), never cached."""
        self._wait_for_quota()
        try:
            if payload is None:
                response, body = fetch(self.http, url, headers=headers)
            else:
                response, body = fetch(self.http, url, method="POST", json=payload)
        except httpx.TransportError as exc:
            return None, network_error(exc), backoff(self.backoff_base, attempt)
        self._note_quota(response)
        status = response.status_code
        if status == 304 and cached:
            return (json.loads(cached.body), cached.next_url or None), None, None
        if status in (200, 204):
            return self._decoded(url, response, body, attempt, cache=payload is None)
        if status in (403, 429):
            wait = self._rate_limit_wait(response, body, attempt)
            if wait is None:
                raise GitHubError(f"{url}: HTTP {status} {_message(body)}", status)
            return None, _("rate limited (HTTP %(status)s)") % {"status": status}, wait
        if status >= 500:
            return None, f"HTTP {status}", backoff(self.backoff_base, attempt)
        raise GitHubError(f"{url}: HTTP {status} {_message(body)}", status)

    def _decoded(self, url, response, body, attempt, cache=True):
        if response.status_code == 204 or not body.strip():
            return (None, None), None, None
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            # A page cut short in transit: fetch it again.
            return None, _("truncated or broken JSON: %(error)s") % {"error": exc}, backoff(
                self.backoff_base, attempt)
        next_url = response.links.get("next", {}).get("url")
        if cache and self.cache is not None and response.headers.get("etag"):
            self.cache.put(url, response, json.dumps(data), next_url)
        return (data, next_url), None, None

    def _rate_limit_wait(self, response, body, attempt):
        """Seconds to wait before retrying a 403/429, or None when it is a refusal."""
        asked = retry_after(response, self.clock)
        if asked is not None:
            return asked
        if response.headers.get("x-ratelimit-remaining") == "0":
            return self._until_reset(response)
        if response.status_code == 429 or "secondary rate limit" in _message(body).lower():
            return backoff(self.secondary_wait, attempt)
        return None

    def _note_quota(self, response):
        if response.status_code < 300 and response.headers.get("x-ratelimit-remaining") == "0":
            self.quota_resets_at = self.clock() + self._until_reset(response)

    def _until_reset(self, response):
        try:
            reset = float(response.headers.get("x-ratelimit-reset", ""))
        except ValueError:
            return self.secondary_wait
        return max(1.0, reset - self.clock() + 1)

    def _wait_for_quota(self):
        if self.quota_resets_at is not None:
            remaining = self.quota_resets_at - self.clock()
            if remaining > 0:
                self.sleep(remaining)
            self.quota_resets_at = None


def _path(data, *keys):
    """data[keys[0]][keys[1]]…, {} where a step is missing or null (a repository without
    Discussions, a comment deleted since): nothing there, not an error."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _message(body):
    try:
        return str(json.loads(body).get("message", ""))[:200]
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")


class _BundleWriter:
    """Bundles as JSON Lines, to a temporary file renamed once the harvest is complete."""

    def __init__(self, path):
        self.path = str(path)
        self.file = open(self.path + ".partial", "w", encoding="utf-8")

    def write(self, bundle):
        self.file.write(json.dumps(bundle) + "\n")

    def close(self):
        self.file.close()
        os.replace(self.path + ".partial", self.path)

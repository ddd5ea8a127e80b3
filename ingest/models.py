"""Documents from outside (arXiv papers, GitHub threads). Knows nothing of studies.

A Document is the live record, updated when a source is re-imported. A Snapshot
freezes its content at one moment; study items point at a snapshot, so what a
coder coded never changes under them.
"""

import hashlib
import json

from django.db import models


class Document(models.Model):
    class Kind(models.TextChoices):
        PAPER = "paper"
        THREAD = "thread"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    source = models.CharField(max_length=32, help_text="arxiv, github, csv, demo …")
    # Natural key: an arXiv identifier without version ("2503.01234"), or
    # "owner/repo#123" for a GitHub issue, pull request or discussion.
    key = models.CharField(max_length=200)
    title = models.TextField()
    url = models.URLField(max_length=500, blank=True)
    published = models.DateTimeField(null=True, blank=True)
    updated = models.DateTimeField(null=True, blank=True)
    # Paper: abstract, authors, affiliations, categories, versions, doi, …
    # Thread: repository, number, thread_type, state, merged, labels, closed_at, events, …
    metadata = models.JSONField(default=dict, blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)
    refreshed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "key"], name="document_natural_key")
        ]
        indexes = [models.Index(fields=["kind", "published"])]

    def __str__(self):
        return f"{self.key}: {self.title[:60]}"

    def content(self):
        """The document as a coder would read it: what a snapshot freezes."""
        data = {
            "kind": self.kind,
            "key": self.key,
            "title": self.title,
            "url": self.url,
            "published": self.published.isoformat() if self.published else None,
            "updated": self.updated.isoformat() if self.updated else None,
            **self.metadata,
        }
        if self.kind == self.Kind.THREAD:
            data["posts"] = [post.content() for post in self.posts.order_by("position")]
        return data

    def take_snapshot(self):
        """Return the snapshot of the current content, creating it only if the content changed."""
        content = self.content()
        digest = content_sha256(content)
        existing = self.snapshots.filter(sha256=digest).first()
        if existing:
            return existing
        number = (self.snapshots.aggregate(n=models.Max("number"))["n"] or 0) + 1
        return self.snapshots.create(number=number, content=content, sha256=digest)


class Post(models.Model):
    """One post of a thread: the opening issue or PR, a comment, a review, a review comment."""

    class Kind(models.TextChoices):
        OPENING = "opening"
        COMMENT = "comment"
        REVIEW = "review"
        REVIEW_COMMENT = "review_comment"

    document = models.ForeignKey(Document, related_name="posts", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()
    external_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    author = models.CharField(max_length=100)
    # GitHub's author_association: OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …
    author_role = models.CharField(max_length=32, blank=True)
    created = models.DateTimeField()
    body = models.TextField(blank=True)
    # What the source says of the post beyond its text, as received: a review's state
    # (APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED), a comment's `updated` (edit
    # time), a review comment's path, line, original_line, diff_hunk and `in_reply_to`
    # (the post it answers), a discussion reply's `reply_to` and `is_answer`, and
    # `author_deleted` when the account is gone (GitHub's "ghost", GraphQL's null).
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["document", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["document", "kind", "external_id"], name="post_natural_key"
            )
        ]

    def content(self):
        # The details come after the fixed keys and never replace them; a post without
        # any has the content (and snapshot hash) it had before details existed. A post
        # with details has its id too, which replies name (in_reply_to, reply_to).
        return {
            **({**self.details, "id": self.external_id} if self.details else {}),
            "kind": self.kind,
            "author": self.author,
            "author_role": self.author_role,
            "created": self.created.isoformat(),
            "body": self.body,
        }


class Snapshot(models.Model):
    """Frozen content of a document. Never edited: a change makes a new snapshot."""

    document = models.ForeignKey(Document, related_name="snapshots", on_delete=models.PROTECT)
    number = models.PositiveIntegerField()
    content = models.JSONField()
    sha256 = models.CharField(max_length=64)
    taken_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["document", "number"]
        constraints = [
            models.UniqueConstraint(fields=["document", "number"], name="snapshot_number"),
            models.UniqueConstraint(fields=["document", "sha256"], name="snapshot_content"),
        ]

    def __str__(self):
        return f"{self.document.key} v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("a snapshot is frozen; take a new one instead")
        super().save(*args, **kwargs)


def content_sha256(content):
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedResponse(models.Model):
    """The last answer to a GET, kept for conditional requests (ETag, Last-Modified).

    A 304 Not Modified carries no body and costs no GitHub rate limit, so the body
    that went with the ETag is kept here and reused: an update run re-fetches only
    what changed. Keyed by a hash of the URL, the media type and the token (ETags
    vary with both), never by the token itself.
    """

    key = models.CharField(max_length=64, unique=True)
    url = models.TextField()
    etag = models.CharField(max_length=300, blank=True)
    last_modified = models.CharField(max_length=100, blank=True)
    next_url = models.TextField(blank=True, help_text='The Link header\'s rel="next".')
    body = models.TextField()
    fetched_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.url} ({self.etag})"

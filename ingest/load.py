"""Writing records: batched upserts on the natural key (source, key).

Contract (`import_records`):

- Idempotent. A record whose content equals the stored document's is counted
  `unchanged` and nothing is written; importing the same data twice adds nothing.
- A changed record updates the document in place (title, dates, metadata, and
  for threads the posts, replaced whole). Snapshots are never touched here: the
  study side takes a new one when it wants the new content.
- A paper keeps its versions: the versions already stored are merged with those
  read, since the arXiv API shows only the version it serves.
- A record is written whole or not at all: each batch is one transaction, and if
  the database refuses it the batch is retried record by record, each in its own
  savepoint, so one bad row costs only itself.
- A duplicate is the same (source, key) twice within one batch: the later one
  wins, the earlier is counted under `duplicates`, and `log_warning` is told
  where both were (a RecordWarning; it is not an error). Across batches a repeated
  key is simply written again (as `updated` or `unchanged`): the end state is the
  same, and the run need not remember every key it saw, so memory stays flat.
"""

from dataclasses import dataclass, field
from itertools import islice

import orjson
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from workbench.copying import copy_rows, reserve_ids

from .models import Document, Post
from .records import (
    BadRecord, Deletion, DocumentRecord, RecordError, RecordWarning, SourceError, check_record,
    json_text, merge_versions,
)

BATCH_SIZE = 1000
UPDATED_FIELDS = ["kind", "title", "url", "published", "updated", "metadata", "refreshed_at"]
STORED_FIELDS = ["id", "source", "key", "kind", "title", "url", "published", "updated", "metadata"]
POST_FIELDS = ["kind", "external_id", "author", "author_role", "created", "body", "details"]
INSERTED_COLUMNS = ["kind", "source", "key", "title", "url", "published", "updated", "metadata",
                    "imported_at", "refreshed_at"]


class StrictModeError(ValueError):
    """Strict mode met a bad record; everything read before it was written."""

    def __init__(self, error):
        self.error = error
        super().__init__(_("stopped at the first bad record: %(error)s") % {"error": error})


class SourceFailed(ValueError):
    """The source answered with an error instead of records (records.SourceError): the
    import fails with the source's own message, once everything else read is written,
    so a partial success is kept and counted."""

    def __init__(self, error, counts):
        self.error, self.counts = error, counts
        super().__init__(_("the source failed: %(error)s (%(read)s read, %(written)s written "
                           "or unchanged, %(failed)s errors)") % {
            "error": error, "read": f"{counts['read']:,}", "failed": f"{counts['failed']:,}",
            "written": f"{counts['added'] + counts['updated'] + counts['unchanged']:,}"})


def new_counts():
    return {"read": 0, "added": 0, "updated": 0, "unchanged": 0, "deleted": 0,
            "deletions": 0, "duplicates": 0, "excluded": {}, "failed": 0}


def import_records(records, *, strict=False, batch_size=BATCH_SIZE, screen=None,
                   on_batch=None, progress=None, log_error=None, log_warning=None):
    """Write records (DocumentRecord, Deletion or RecordError) in batches; return the counts.
    A RecordWarning among them is a source's note (an OAI page's resumption token): logged
    as a warning, not counted as read.

    - screen(record) -> None to keep it, or the name of the rule that excludes it
      (excluded records are not written; counted under excluded[rule]).
    - on_batch(list of (document_id, outcome)) after each batch commits, outcome one
      of added, updated, unchanged: the documents records wrote, never a deletion's; it
      must be idempotent, as a re-run after a crash hands it the same documents again
      (then as unchanged).
    - Every record read is counted once as a duplicate, failed, excluded, or written:
      written records are added, updated or unchanged documents, or `deletions` (of
      which `deleted` marked a stored document; the rest named one this database does
      not hold, or one already marked). A deletion is never counted as unchanged.
    - progress(counts) after each batch; it may raise (a cancelled job) to stop.
    - log_error(RecordError) for each bad record; strict=True raises StrictModeError
      at the first one, after writing the good records read before it.
    - A records.SourceError (the source answered with an error) raises SourceFailed
      at the end, after the rest was written and counted.
    - log_warning(RecordWarning) for each duplicate key within a batch.
    """
    counts = new_counts()
    failed_sources = []

    def note_error(error):
        if isinstance(error, SourceError):
            failed_sources.append(error)
        if log_error:
            log_error(error)

    items = iter(records)
    while chunk := list(islice(items, batch_size)):
        batch, stop = _collect(chunk, counts, strict, screen, note_error, log_warning)
        written = _write_batch(batch, counts, log_error)
        if on_batch and written:
            on_batch(written)
        if progress:
            progress(counts)
        if stop:
            raise StrictModeError(stop)
    if failed_sources:
        raise SourceFailed(failed_sources[0], counts)
    return counts


def _collect(chunk, counts, strict, screen, log_error, log_warning=None):
    """Check, screen and de-duplicate one chunk; returns (batch, first error in strict mode)."""
    batch = {}
    for item in chunk:
        if isinstance(item, RecordWarning):  # a note about the source, not a record
            if log_warning:
                log_warning(item)
            continue
        counts["read"] += 1
        try:
            error = item if isinstance(item, RecordError) else check_record(item)
        except BadRecord as exc:
            error = RecordError(getattr(item, "location", "") or _name(item), str(exc))
        if error:
            _fail(error, counts, log_error)
            if strict:
                return batch, error
            continue
        rule = screen(item) if screen and isinstance(item, DocumentRecord) else None
        if rule:
            counts["excluded"][rule] = counts["excluded"].get(rule, 0) + 1
            continue
        _add(batch, item, counts, log_warning)
    return batch, None


def _add(batch, item, counts, log_warning=None):
    natural_key = (item.source, item.key)
    earlier = batch.get(natural_key)
    if earlier is not None:
        counts["duplicates"] += 1
        if log_warning:
            log_warning(RecordWarning(
                item.location or _name(item),
                _("%(source)s %(key)s was read before, at %(earlier)s: the later one is kept")
                % {"source": item.source, "key": item.key[:200],
                   "earlier": earlier.location or _("an earlier record")}))
        if _is_paper(earlier) and _is_paper(item):
            item.metadata["versions"] = merge_versions(earlier.metadata.get("versions"),
                                                       item.metadata.get("versions"))
        del batch[natural_key]  # re-inserted below so the batch keeps reading order
    batch[natural_key] = item


def _is_paper(item):
    """A paper with a version history (arXiv); mapped tables may have none."""
    return isinstance(item, DocumentRecord) and item.kind == "paper" and "versions" in item.metadata


def _name(item):
    return f"{getattr(item, 'source', '?')}:{getattr(item, 'key', '?')}"


def _fail(error, counts, log_error):
    counts["failed"] += 1
    if log_error:
        log_error(error)


# --- writing -----------------------------------------------------------------

def _write_batch(batch, counts, log_error):
    """Write one batch in a transaction; on a database error, retry record by record."""
    if not batch:
        return []
    items = list(batch.values())
    try:
        with transaction.atomic():
            written = _upsert(items)
    except DatabaseError:
        written = []
        for item in items:
            try:
                with transaction.atomic():
                    written += _upsert([item])
            except DatabaseError as exc:
                reason = _("the database refused it: %(error)s") % {
                    "error": str(exc).strip()[:300]}
                _fail(RecordError(item.location or _name(item), reason), counts, log_error)
    for _document, outcome, deletion in written:
        if outcome is not None:
            counts[outcome] += 1
        counts["deletions"] += deletion
    return [(doc_id, outcome) for doc_id, outcome, deletion in written
            if doc_id is not None and not deletion]


def _upsert(items):
    """Plan and write a list of records; returns [(document_id or None, outcome, whether it
    was a Deletion)] for each."""
    existing = _existing(items)
    now = timezone.now()
    added, changed, outcomes = [], [], []
    for item in items:
        stored = existing.get((item.source, item.key))
        if isinstance(item, Deletion):
            if stored is not None and not stored.metadata.get("deleted"):
                changed.append((_tombstone(stored, item, now), None))
                outcomes.append((stored.id, "deleted", True))
            else:  # unknown here, or a tombstone already: a deletion that writes nothing
                outcomes.append((stored and stored.id, None, True))
            continue
        if stored is None:
            added.append(item)
            continue
        if _is_paper(item):
            item.metadata["versions"] = merge_versions(stored.metadata.get("versions"),
                                                       item.metadata.get("versions"))
        if _same_content(stored, item):
            outcomes.append((stored.id, "unchanged", False))
            continue
        changed.append((_updated(stored, item, now), item.posts if item.kind == "thread" else None))
        outcomes.append((stored.id, "updated", False))
    created = _create(added, now)
    _update(changed)
    return outcomes + [(doc_id, "added", False) for doc_id in created]


@dataclass
class _Stored:
    """What a document holds now, read as plain values (no model instance per row)."""

    id: int
    source: str
    key: str
    kind: str
    title: str
    url: str
    published: object
    updated: object
    metadata: dict
    posts: list = field(default_factory=list)


def _existing(items):
    """The stored documents of these records by natural key, threads with their posts."""
    by_source = {}
    for item in items:
        by_source.setdefault(item.source, []).append(item.key)
    found = {}
    for source, keys in by_source.items():
        for start in range(0, len(keys), 500):  # keeps IN (...) within SQLite's limits
            for row in _stored_rows(source, keys[start:start + 500]):
                found[(row[1], row[2])] = _Stored(*row)
    threads = {doc.id: doc for doc in found.values() if doc.kind == Document.Kind.THREAD}
    posts = Post.objects.filter(document_id__in=list(threads)).order_by("document_id", "position")
    for document_id, *post in posts.values_list("document_id", *POST_FIELDS):
        threads[document_id].posts.append(tuple(post))
    return found


def _stored_rows(source, keys):
    if connection.vendor != "postgresql":
        return Document.objects.filter(source=source, key__in=keys).values_list(*STORED_FIELDS)
    # On PostgreSQL, `source = %s AND key IN (…)` is planned from statistics, and
    # during a first large import they say the table is small: the planner then
    # scans every row of the source for each batch (0.4 s a batch at 200,000
    # rows). One unique-index lookup per key does not depend on statistics.
    qn = connection.ops.quote_name
    columns = ", ".join(f"d.{qn(c)}" for c in STORED_FIELDS)
    sql = (f"SELECT {columns} FROM unnest(%s::text[]) AS wanted(key) CROSS JOIN LATERAL "
           f"(SELECT * FROM {qn(Document._meta.db_table)} WHERE {qn('source')} = %s "
           f"AND {qn('key')} = wanted.key LIMIT 1) AS d")
    with connection.cursor() as cursor:
        cursor.execute(sql, [keys, source])
        rows = cursor.fetchall()
    return [(*row[:8], orjson.loads(row[8]) if isinstance(row[8], str) else row[8])
            for row in rows]


def _post_tuple(post):
    return (post.kind, post.external_id, post.author, post.author_role, post.created, post.body,
            post.details)


def _same_content(stored, item):
    same = (stored.kind == item.kind and stored.title == item.title
            and stored.url == (item.url or "") and stored.published == item.published
            and stored.updated == item.updated and stored.metadata == item.metadata)
    if same and item.kind == "thread":
        return stored.posts == [_post_tuple(p) for p in item.posts]
    return same


def _updated(stored, item, now):
    return Document(pk=stored.id, kind=item.kind, title=item.title, url=item.url or "",
                    published=item.published, updated=item.updated, metadata=item.metadata,
                    refreshed_at=now)


def _tombstone(stored, deletion, now):
    """A deleted document is kept, marked, rather than dropped."""
    return Document(pk=stored.id, kind=stored.kind, title=stored.title, url=stored.url,
                    published=stored.published, updated=stored.updated, refreshed_at=now,
                    metadata={**stored.metadata, "deleted": True,
                              "deleted_on": deletion.deleted_on})


def _create(records, now):
    if not records:
        return []
    ids = _insert_documents(records, now)
    _create_posts([(doc_id, r.posts) for doc_id, r in zip(ids, records) if r.posts])
    return ids


def _insert_documents(records, now):
    """New documents written without a model instance per row; their ids in order.

    The records were checked against the columns already (check_record). Building and
    preparing a model per row was most of bulk_create's time; on PostgreSQL the rows go
    by COPY with ids reserved from the sequence first (workbench.copying), several times
    a pipelined INSERT's rate; elsewhere by multi-row INSERT … RETURNING.
    """
    rows = [(r.kind, r.source, r.key, r.title, r.url or "", r.published, r.updated,
             json_text(r.metadata), now, now) for r in records]
    if connection.vendor == "postgresql":
        ids = reserve_ids(Document, len(rows))
        copy_rows(Document._meta.db_table, ["id", *INSERTED_COLUMNS],
                  ((pk, *row) for pk, row in zip(ids, rows)))
        return ids
    return _insert_multirow(rows)


def _insert_sql(values):
    qn = connection.ops.quote_name
    return (f"INSERT INTO {qn(Document._meta.db_table)} ({', '.join(map(qn, INSERTED_COLUMNS))}) "
            f"VALUES {values} RETURNING {qn('id')}")


def _insert_multirow(rows):
    # 500 rows of 10 values stay within SQLite's limit on parameters.
    adapt = connection.ops.adapt_datetimefield_value
    ids = []
    for start in range(0, len(rows), 500):
        chunk = rows[start:start + 500]
        params = [value for row in chunk for value in
                  (*row[:5], adapt(row[5]), adapt(row[6]), row[7], adapt(row[8]), adapt(row[9]))]
        sql = _insert_sql(", ".join(["(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"] * len(chunk)))
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            ids += [found[0] for found in cursor.fetchall()]
    return ids


def _update(changed):
    if not changed:
        return
    Document.objects.bulk_update([doc for doc, _ in changed], UPDATED_FIELDS, batch_size=200)
    replaced = [(doc.pk, posts) for doc, posts in changed if posts is not None]
    Post.objects.filter(document_id__in=[doc_id for doc_id, _ in replaced]).delete()
    _create_posts(replaced)


def _create_posts(documents_and_posts):
    Post.objects.bulk_create([
        Post(document_id=doc_id, position=n, external_id=p.external_id, kind=p.kind,
             author=p.author, author_role=p.author_role, created=p.created, body=p.body,
             details=p.details)
        for doc_id, posts in documents_and_posts for n, p in enumerate(posts)
    ], batch_size=1000)

"""copy_create writes what bulk_create writes (workbench/copying.py): every field, its
default, JSON, foreign keys, auto_now_add, with the ids set on the objects."""

import pytest
from django.db import connection

from coding.codebooks.versions import create_codebook
from coding.models import Item, Study
from ingest.models import Document, Snapshot
from workbench.copying import copy_create

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql",
                                 reason="COPY is PostgreSQL's: SQLite keeps bulk_create")]
MOVING = {"id", "document_id", "snapshot_id", "key", "sha256", "imported_at", "refreshed_at",
          "added_at"}


def made(create, study, book, tag):
    documents = create(Document, [Document(
        kind=Document.Kind.PAPER, source="copy", key=f"{tag}.{n}", title=f"Invented {n}",
        metadata={"abstract": "An invented text with “quotes” and \\ and \t.",
                  "authors": ["Ann Example"], "n": n}) for n in range(3)])
    snapshots = create(Snapshot, [Snapshot(document=d, number=1, content=d.content(),
                                           sha256=f"{tag}{d.pk:063x}") for d in documents])
    return create(Item, [Item(study=study, document=d, snapshot=s, codebook=book,
                              random_key=0.25, reference_values={"kind": "method"})
                         for d, s in zip(documents, snapshots)])


def rows(model, pks):
    return [{k: v for k, v in row.items() if k not in MOVING}
            for row in model.objects.filter(pk__in=pks).order_by("pk").values()]


def test_copy_create_writes_what_bulk_create_writes():
    study = Study.objects.create(name="Copy", slug="copy")
    book = create_codebook(study, {"name": "B", "applies_to": "paper", "questions": [
        {"key": "kind", "kind": "single", "text": "Kind?", "options": [{"value": "method"}]}]})
    copied = made(copy_create, study, book, "a")
    bulk = made(lambda model, objs: model.objects.bulk_create(objs), study, book, "b")
    assert all(item.pk and not item._state.adding for item in copied)
    assert rows(Item, [i.pk for i in copied]) == rows(Item, [i.pk for i in bulk])
    assert (rows(Document, [i.document_id for i in copied])
            == rows(Document, [i.document_id for i in bulk]))
    assert Item.objects.get(pk=copied[0].pk).added_at is not None
    # The ids came from the sequence: an INSERT after them takes the next.
    assert Document.objects.create(kind="paper", source="copy", key="after").pk > max(
        i.document_id for i in bulk)

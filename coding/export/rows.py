"""Rows of each export shape, streamed from the database in a stable order.

Each generator yields plain dicts keyed by the shape's field names; nothing holds
more than one batch of rows. Coders appear under their study pseudonym.
"""

import json

from coding.blinding import KINDS
from coding.codebooks import is_shown
from coding.codings import independent_codings
from coding.landings import paper_inclusion
from coding.models import Coding, Decision, Item, Membership, Question, Role

from .fields import ANSWERED, MISSING, NOT_APPLICABLE, UNDECIDED

BATCH = 2000


def pseudonyms(study):
    """{user id: pseudonym}, stable within a study since memberships are never deleted:
    coder_1, coder_2 … in the order coders joined; anyone else by their role
    (adjudicator_1, owner_1 …), for the decisions they recorded."""
    names, counts = {}, {}
    memberships = list(Membership.objects.filter(study=study).order_by("created_at", "pk"))
    # Coders first, so a person who both codes and adjudicates is known as a coder.
    for membership in sorted(memberships, key=lambda m: m.role != Role.CODER):
        if membership.user_id not in names:
            counts[membership.role] = counts.get(membership.role, 0) + 1
            names[membership.user_id] = f"{membership.role}_{counts[membership.role]}"
    return names


def as_text(value):
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else str(value)


def joined(value):
    if isinstance(value, list):
        return "; ".join(map(str, value)) or None
    return value


def items(study, withheld):
    """Every item's metadata; `withheld` ({column: kinds}, fields.withheld_item_columns)
    empties what the requester may not receive, before any writer sees the row."""
    # Inclusion found in the frameworks' histories, for the method's source papers.
    landed = paper_inclusion(study) if not _withheld_everywhere(withheld, "frameworks_landed",
                                                               "first_landing",
                                                               "days_to_first_landing") else {}
    for item in (Item.objects.alive().filter(study=study).select_related("document", "snapshot")
                 .order_by("pk").iterator(chunk_size=BATCH)):
        content = item.snapshot.content
        inclusion = landed.get(item.document_id, {})
        row = {
            "item_id": item.pk, "document_key": item.document.key, "kind": item.document.kind,
            "source": item.document.source, "title": content.get("title"),
            "url": content.get("url"), "published": content.get("published"),
            "updated": content.get("updated"), "round": item.round,
            "in_reliability_sample": item.in_reliability_sample,
            "snapshot": item.snapshot.number, "snapshot_sha256": item.snapshot.sha256,
            "abstract": content.get("abstract"), "authors": joined(content.get("authors")),
            "affiliations": joined(content.get("affiliations")),
            "categories": joined(content.get("categories")),
            "included_in": joined(content.get("included_in")),
            "repository": content.get("repository"), "number": content.get("number"),
            "thread_type": content.get("thread_type"), "state": content.get("state"),
            "merged": content.get("merged"), "labels": joined(content.get("labels")),
            "closed_at": content.get("closed_at"),
            "n_posts": len(content["posts"]) if "posts" in content else None,
            "frameworks_landed": joined(inclusion.get("included_in")),
            "first_landing": inclusion.get("first_landing"),
            "days_to_first_landing": inclusion.get("days_to_first_landing"),
        }
        for column, kinds in withheld.items():
            if item.document.kind in kinds:
                row[column] = None
        yield row


def _withheld_everywhere(withheld, *columns):
    return all(set(withheld.get(c, ())) >= set(KINDS) for c in columns)


def long(study, names):
    """Every coding revision, one row per question."""
    independent = set(independent_codings(study).values_list("pk", flat=True))
    # Plain tuples of only the columns the rows need: five model instances per coding
    # (select_related), with every JSON and date column converted, were most of the time.
    codings = (Coding.objects.filter(assignment__item__study=study,
                                     assignment__item__deleted_at__isnull=True)
               .order_by("assignment__item_id", "assignment__coder_id", "revision", "pk")
               .values_list("pk", "assignment__item_id", "assignment__item__document__key",
                            "assignment__coder_id", "assignment__item__round",
                            "codebook_version_id", "codebook_version__number", "revision",
                            "phase", "submitted_at", "seconds_spent", "unsure", "values"))
    questions = {}
    for (pk, item_id, document_key, coder_id, round_, version_id, version, revision, phase,
         submitted_at, seconds_spent, unsure, values) in codings.iterator(chunk_size=BATCH):
        if version_id not in questions:
            questions[version_id] = list(Question.objects.filter(version_id=version_id)
                                         .prefetch_related("options"))
        common = {
            "item_id": item_id, "document_key": document_key, "coder": names.get(coder_id),
            "round": round_, "codebook_version": version, "revision": revision,
            "phase": phase, "independent": pk in independent, "submitted_at": submitted_at,
            "seconds_spent": seconds_spent, "unsure": unsure,
        }
        for question in questions[version_id]:
            status = coded_status(question, values)
            yield {**common, "question": question.key,
                   "value": as_text(values.get(question.key)) if status == ANSWERED else None,
                   "status": status}


def coded_status(question, values):
    if not is_shown(question, values):
        return NOT_APPLICABLE
    return MISSING if values.get(question.key) in (None, "", []) else ANSWERED


def decisions(study, names):
    current = set(Decision.objects.current().filter(item__study=study).values_list("pk", flat=True))
    rows = (Decision.objects.filter(item__study=study, item__deleted_at__isnull=True)
            .select_related("item__document").order_by("item_id", "question_key", "revision"))
    for decision in rows.iterator(chunk_size=BATCH):
        yield {
            "item_id": decision.item_id, "document_key": decision.item.document.key,
            "question": decision.question_key, "revision": decision.revision,
            "current": decision.pk in current, "value": as_text(decision.value),
            "method": decision.method, "decided_by": names.get(decision.decided_by_id),
            "rationale": decision.rationale or None, "decided_at": decision.decided_at,
        }


def wide(study, codebook, version):
    """One row per item of this codebook: the current decision of each question."""
    questions = list(version.questions.prefetch_related("options"))
    items_ = (Item.objects.alive().filter(study=study, codebook=codebook)
              .select_related("document").order_by("pk"))
    for chunk in _chunks(items_.iterator(chunk_size=BATCH), BATCH):
        decided = {}
        for d in Decision.objects.current().filter(item__in=[i.pk for i in chunk]):
            decided.setdefault(d.item_id, {})[d.question_key] = d
        for item in chunk:
            row = {"item_id": item.pk, "document_key": item.document.key, "round": item.round,
                   "in_reliability_sample": item.in_reliability_sample}
            final = decided.get(item.pk, {})
            values = {key: d.value for key, d in final.items()}
            for question in questions:
                row.update(_wide_cells(question, final.get(question.key), values))
            yield row


def _wide_cells(question, decision, values):
    key = question.key
    options = [o.value for o in question.options.all()]
    if decision is not None:
        status, value = (ANSWERED if decision.value is not None else MISSING), decision.value
    elif question.show_if and question.show_if["question"] in values and not is_shown(question, values):
        status, value = NOT_APPLICABLE, None
    else:
        status, value = UNDECIDED, None
    if question.kind == "number" and value in options:
        status, value = value, None
    cells = {f"{key}__status": status, f"{key}__method": decision.method if decision else None}
    if question.kind == "multiple":
        chosen = set(value or [])
        for option in options:
            cells[f"{key}__{option}"] = (option in chosen) if status == ANSWERED else None
    else:
        cells[key] = value
    return cells


def _chunks(iterable, size):
    chunk = []
    for row in iterable:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk

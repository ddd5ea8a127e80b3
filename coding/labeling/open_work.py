"""Coders' open work when a codebook version is published: their held items go back to the
pool or switch to the new version, and their drafts keep only what it still accepts.
Called in the publishing transaction (coding.actions.publish)."""

from coding.codebooks.editing import RELEASE
from coding.codebooks.versions import check_answer, questions_with_options
from coding.labeling import queue
from coding.models import Assignment


def handle_open_assignments(codebook, version, mode):
    """Release the active assignments of the codebook's items (mode "release"), and prune
    the drafts of unfinished ones to what `version` accepts. Returns the counts."""
    unfinished = Assignment.objects.filter(item__codebook=codebook)
    released = 0
    if mode == RELEASE:
        released = queue.release(
            unfinished.filter(status=Assignment.Status.ACTIVE).values_list("pk", "item_id"))
    pruned = 0
    with_drafts = (unfinished.filter(status__in=[Assignment.Status.ACTIVE,
                                                 Assignment.Status.RELEASED])
                   .exclude(draft=None).only("pk", "draft"))
    for assignment in with_drafts.iterator(chunk_size=500):
        kept = prune_draft(version, assignment.draft)
        if kept != assignment.draft:
            Assignment.objects.filter(pk=assignment.pk).update(draft=kept)
            pruned += 1
    return {"released": released, "drafts_pruned": pruned}


def prune_draft(version, draft):
    """A coder's draft with only the answers (and quotes) `version` still accepts."""
    if not isinstance(draft, dict):
        return None
    questions = {q.key: q for q in questions_with_options(version)}
    values = draft.get("values") if isinstance(draft.get("values"), dict) else {}
    kept = {}
    for key, answer in values.items():
        if key not in questions:
            continue
        try:
            kept[key] = check_answer(questions[key], answer)
        except ValueError:
            continue
    evidence = [quote for quote in draft.get("evidence") or []
                if isinstance(quote, dict) and quote.get("question") in questions]
    return {**draft, "values": kept, "evidence": evidence}

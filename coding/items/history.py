"""An item's whole history, for its page and the API: how it came into the study, who
held, skipped and coded it (every revision, with its answers), the decisions in every
revision, and the owners' actions on it. A fixed number of queries, whatever the item.

Names are the ones the reader is shown (coding.access.names.namer): owners and
adjudicators see names unless the study shows coders to its adjudicators by pseudonym.
"""

from coding.access.names import name_for
from coding.adjudication.decisions import answer
from coding.items.browse import row_states
from coding.items.curate import ACTIONS
from coding.models import Assignment, CodebookVersion, Coding, Decision, ItemChange


def answers(coding, questions):
    """[(question, answer)] of a coding: each question of its version the coder answered or
    was shown; NOT_APPLICABLE / MISSING as coding.adjudication.decisions.answer gives them."""
    return [(q, answer(coding, q)) for q in questions
            if q.key in coding.values or answer(coding, q) != "n/a"]


def history(study, item, viewer, roles=None):
    """{"item", "assignments", "codings", "decisions", "changes", "questions"} of one item,
    its state set as the list shows it."""
    row_states(study, [item])
    name = name_for(study, study.roles_of(viewer) if roles is None else roles)
    assignments = list(Assignment.objects.filter(item=item).select_related("coder")
                       .order_by("created_at", "pk"))
    codings = list(Coding.objects.filter(assignment__item=item)
                   .select_related("assignment__coder", "codebook_version")
                   .order_by("submitted_at", "pk"))
    current_version = item.codebook.current_version()
    versions = {c.codebook_version_id for c in codings}
    if current_version is not None:
        versions.add(current_version.pk)
    questions = {}
    for version in (CodebookVersion.objects.filter(pk__in=versions)
                    .prefetch_related("questions__options")):
        questions[version.pk] = list(version.questions.all())
    for coding in codings:
        coding.coder_name = name(coding.assignment.coder)
        coding.answers = answers(coding, questions.get(coding.codebook_version_id, []))
    for assignment in assignments:
        assignment.coder_name = name(assignment.coder)
    current = questions.get(current_version.pk, []) if current_version is not None else []
    by_key = {q.key: q for q in current}
    decisions = list(Decision.objects.filter(item=item).select_related("decided_by")
                     .order_by("question_key", "revision"))
    for decision in decisions:
        decision.question = by_key.get(decision.question_key)
        decision.by_name = name(decision.decided_by) if decision.decided_by else ""
    changes = list(ItemChange.objects.filter(item=item).select_related("actor")
                   .order_by("at", "pk"))
    for change in changes:
        change.action_words = ACTIONS.get(change.action.removeprefix("items."), change.action)
    return {"item": item, "assignments": assignments, "codings": codings,
            "decisions": decisions, "changes": changes, "questions": current}

"""Disagreements and decisions: the one home of "what is the final value, and how was it reached".

An item is settled question by question once all the codings it needs are in:
the same independent value from every coder is decided as unanimous (single when
one coder was asked for); differing values wait for an adjudicator. With the
study's discussion step, the coders of a disagreeing item first see each other's
values and may revise; if their revisions agree, the value is decided as
consensus. Reconciliation revisions never touch the independent codings that
reliability uses, and a decision an adjudicator made is never replaced by an
automatic one.
"""

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, Exists, F, Max, OuterRef, Q, Subquery
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from coding.access.archive import check_open
from coding.codebooks.versions import (
    check_answer, is_shown, published_version, questions_with_options,
)
from coding.labeling.codings import independent_codings, record_exposures
from coding.models import Assignment, Coding, Decision, Exposure, Item, Role, StoredDisagreement
from coding.models.tallies import kept, tallies
from workbench import paging
from workbench.paging import bounded_count, make_token
from workbench.prepared import Delete, Insert, Slot, Statement, fields, instance

NOT_APPLICABLE = "n/a"  # the question's condition was not met for this coder
MISSING = "missing"  # the question applied but the coder left it unanswered
AUTOMATIC = (Decision.Method.UNANIMOUS, Decision.Method.SINGLE, Decision.Method.CONSENSUS)
ORDERS = {"most": gettext_lazy("most coders disagreeing"), "oldest": gettext_lazy("oldest first"),
          "question": gettext_lazy("question order")}


@dataclass
class ItemCodings:
    """One item's codings: each coder's independent one and their latest (after discussion)."""

    item: Item
    independent: dict = field(default_factory=dict)  # coder -> Coding
    latest: dict = field(default_factory=dict)  # coder -> Coding


@dataclass
class Disagreement:
    item: Item
    question: object
    groups: list  # [(answer, [coders])], largest group first
    decision: Decision | None
    last_coded: object
    in_discussion: bool

    @property
    def coders(self):
        return sorted(c.username for _, coders in self.groups for c in coders)


def answer(coding, question):
    """A coder's answer to a question, or NOT_APPLICABLE / MISSING."""
    if not is_shown(question, coding.values):
        return NOT_APPLICABLE
    value = coding.values.get(question.key)
    return MISSING if value in (None, "", []) else value


def group_answers(codings, question):
    """[(answer, [coders])] with the most-chosen answer first, ties in coder order."""
    groups = {}
    for coder, coding in sorted(codings.items(), key=lambda pair: pair[0].username):
        value = answer(coding, question)
        groups.setdefault(_key(value), (value, []))[1].append(coder)
    return sorted(groups.values(), key=lambda group: -len(group[1]))


def _key(value):
    return tuple(value) if isinstance(value, list) else value


def questions_of(item):
    return list(item.codebook.current_version().questions.prefetch_related("options"))


def gather(items):
    """ItemCodings for each item, in two queries whatever the number of items."""
    by_item = {item.pk: ItemCodings(item) for item in items}
    latest = (Coding.objects.filter(assignment=OuterRef("assignment"))
              .order_by("-revision").values("pk")[:1])
    rows = [("independent", independent_codings(items[0].study) if items else Coding.objects.none()),
            ("latest", Coding.objects.filter(pk=Subquery(latest)))]
    for slot, codings in rows:
        for coding in (codings.filter(assignment__item__in=list(by_item))
                       .select_related("assignment__coder")):
            getattr(by_item[coding.assignment.item_id], slot)[coding.assignment.coder] = coding
    return by_item


# --- settling items as codings arrive ---------------------------------------------

def complete_items(study):
    """Main-round items whose submitted codings reached the number they need."""
    return (Item.objects.alive().filter(study=study, round=Item.Round.MAIN)
            .annotate(submitted=Count("assignments",
                                      filter=Q(assignments__status=Assignment.Status.SUBMITTED)))
            .filter(submitted__gte=F("target"), submitted__gt=0))


@transaction.atomic
def settle_item(item):
    """Record the automatic decisions of a complete item; open its discussion if the study
    has that step and the coders differ; keep its stored disagreements. Safe to run any
    number of times."""
    settle_locked(item)


def settle_locked(item, questions=None):
    """settle_item's work, for a caller already in a transaction (record_coding, which
    passes the questions it checked the answers against)."""
    given = item
    row = _LOCK_ITEM.first(item=item.pk)
    if row is None:
        raise Item.DoesNotExist(f"item {item.pk} no longer exists")
    item = instance(Item, row)
    # The study as the caller loaded it (the submit path has it); else read when needed.
    if Item.study.is_cached(given):
        item.study = given.study
    # After the lock, in statements of their own: one that waited for the lock sees what
    # the submission holding it committed.
    submitted, codings, stored, decided = item_codings(item)
    if not (item.deleted_at is None and item.round == Item.Round.MAIN
            and submitted >= item.target and submitted > 0):
        if stored:  # e.g. its target went up
            _CLEAR.run(item=item.pk)
        return
    # The item's newest decision per question, read once (when it has any); new ones
    # written in one insert.
    current = {}
    for decision in _DECISIONS.rows(item=item.pk) if decided else ():
        decision = instance(Decision, decision)
        current[decision.question_key] = decision
    settled, disputed = [], set()
    if questions is None:
        questions = questions_with_options(published_version(item.codebook_id))
    for question in questions:
        groups = group_answers(codings.independent, question)
        if len(groups) == 1:
            method = (Decision.Method.SINGLE if len(codings.independent) == 1
                      else Decision.Method.UNANIMOUS)
            settled.append((question.key, groups[0][0], method))
            continue
        if not question.is_adjudicated:
            # Both answers are kept and exported; nobody decides between them.
            settled.append((question.key, None, Decision.Method.NOT_ADJUDICATED))
            continue
        disputed.add(question.key)
        if item.discussion_opened_at:
            revised = group_answers(codings.latest, question)
            if len(revised) == 1:
                settled.append((question.key, revised[0][0], Decision.Method.CONSENSUS))
    created = _INSERT_DECISIONS.bulk_create(filter(None, (
        _automatic(item, current.get(key), key, value, method) for key, value, method in settled)))
    current.update((decision.question_key, decision) for decision in created)
    if disputed or any(d.method == NOT_APPLICABLE_METHOD for d in current.values()):
        _follow(item, questions, current, disputed)
    if disputed and item.study.discussion_step and not item.discussion_opened_at:
        item.discussion_opened_at = timezone.now()
        Item.objects.filter(pk=item.pk).update(discussion_opened_at=item.discussion_opened_at)
    _store(item, stored_rows(item, codings, questions, current), stored)


_LOCK_ITEM = Statement(Item, lambda item: (
    Item.objects.select_for_update(of=("self",)).filter(pk=item).order_by()
    .values_list(*fields(Item))),
    Slot("item"))
_CODINGS = (*fields(Coding), "assignment__coder_id", "assignment__coder__username")
_ITEM_CODINGS = Statement(Coding, lambda item: (
    Coding.objects.filter(assignment__item_id=item)
    .annotate(submitted=Subquery(
        Assignment.objects.filter(item_id=item, status=Assignment.Status.SUBMITTED).order_by()
        .values("item").annotate(n=Count("*")).values("n")),
        # Whether the item has stored disagreements and decisions: when it has none,
        # settling neither deletes the ones it has nor reads its decisions.
        stored=Exists(StoredDisagreement.objects.filter(item_id=OuterRef("assignment__item_id"))),
        decided=Exists(Decision.objects.filter(item_id=OuterRef("assignment__item_id"))))
    .order_by("assignment_id", "revision").values_list(*_CODINGS, "stored", "decided",
                                                      "submitted")),
    Slot("item"))
# Settling's writes, built once per process (workbench.prepared).
_CLEAR = Delete(StoredDisagreement, lambda item: StoredDisagreement.objects.filter(item_id=item),
                Slot("item"))
_INSERT_DECISIONS, _INSERT_STORED = Insert(Decision), Insert(StoredDisagreement)
_DECISIONS = Statement(Decision, lambda item: (
    Decision.objects.filter(item_id=item).order_by("question_key", "revision")
    .values_list(*fields(Decision))), Slot("item"))


def item_codings(item):
    """(submitted assignments, ItemCodings, has stored disagreements?, has decisions?) of
    one item, in one statement: what `gather` gives for many items (each coder's last
    independent and last revision), for settling."""
    found, submitted, coders = ItemCodings(item), 0, {}
    stored = decided = True  # not known without a coding: as if it had them
    width = len(fields(Coding))
    for row in _ITEM_CODINGS.rows(item=item.pk):
        coding = instance(Coding, row[:width])
        coder_id, username, stored, decided, submitted = row[width:]
        if coder_id not in coders:
            coders[coder_id] = get_user_model().from_db("default", ["id", "username"],
                                                        (coder_id, username))
        coder = coders[coder_id]
        found.latest[coder] = coding  # rows come by revision: the last one stays
        if coding.phase == Coding.Phase.INDEPENDENT:
            found.independent[coder] = coding
    return submitted or 0, found, stored, decided


# --- the stored disagreements (the review list's rows) ---------------------------------------

def stored_rows(item, codings, questions, decisions):
    """The StoredDisagreement rows the item has, from its codings and current decisions
    ({question key: Decision}): unsaved, one per question whose independent answers differ,
    and one per question that waits (`waiting`)."""
    if len(codings.independent) < 2:
        return []
    last = max(c.submitted_at for c in codings.independent.values())
    waits = waiting(questions, codings, decisions)
    rows = []
    for position, question in enumerate(questions):
        groups = group_answers(codings.independent, question)
        if question.key not in waits and (len(groups) < 2 or not question.is_adjudicated):
            continue
        decision = decisions.get(question.key)
        tokens = [str(v) for value, _ in groups for v in (value if isinstance(value, list) else [value])]
        row = StoredDisagreement(
            study_id=item.study_id, item=item, question_key=question.key, position=position,
            groups=[[value, [c.pk for c in coders]] for value, coders in groups],
            group_count=len(groups),
            coder_ids="," + ",".join(str(c.pk) for _, coders in groups for c in coders) + ",",
            answer_tokens="|" + "|".join(tokens) + "|", last_coded=last,
            in_discussion=item.discussion_opened_at is not None,
            decision=decision, decided=decided(decision))
        row.waits = question.key in waits
        rows.append(row)
    return rows


def waiting(questions, codings, decisions):
    """Keys of the questions no coder was shown (every answer not applicable) that may
    apply after all: their condition names a question still undecided, or one decided so
    that they apply, and they have no decision of their own. Nobody can agree on them, so
    the review list holds them open (the export says undecided) until the decision on
    what their condition names rules them out, or the adjudicator decides them. No query."""
    _, ruled_out = consequences(None, questions, decisions)
    return {q.key for q in questions
            if q.show_if and q.key not in ruled_out and not decided(decisions.get(q.key))
            and [value for value, _ in group_answers(codings.independent, q)]
            == [NOT_APPLICABLE]}


def current_decisions(items):
    """{(item id, question key): newest Decision} for the items, in one query."""
    newest = {}
    for decision in (Decision.objects.filter(item__in=items)
                     .order_by("item_id", "question_key", "revision")):
        newest[(decision.item_id, decision.question_key)] = decision
    return newest


def _store(item, rows, stored=True):
    """Replace the item's stored disagreements (`stored`: whether it has any now); under
    the item's row lock, in the transaction that settles it, so they change with its
    codings or not at all."""
    if stored:
        _CLEAR.run(item=item.pk)
    _INSERT_STORED.bulk_create(rows)


def rebuild_disagreements(study, batch=500, progress=None):
    """Recompute the study's stored disagreements from codings and decisions; returns how
    many rows it holds. What `manage.py rebuild_disagreements` and the job an overlap
    change starts (coding.jobs) run.

    The study's items in batches, each in a transaction of its own that first locks its
    items, as settle_locked does: a coding recorded meanwhile waits for its item's batch
    or comes after it, so every item's rows are right once its batch commits, and coders
    go on working while a large study is rebuilt. `progress(done, total)` after each
    batch, in items."""
    ids = list(Item.objects.filter(study=study).order_by("pk").values_list("pk", flat=True))
    questions, made = {}, 0
    for start in range(0, len(ids), batch):
        chunk = ids[start:start + batch]
        with transaction.atomic():
            list(Item.objects.select_for_update(of=("self",)).filter(pk__in=chunk)
                 .order_by("pk").values_list("pk", flat=True))
            StoredDisagreement.objects.filter(study=study, item_id__in=chunk).delete()
            items = list(complete_items(study).filter(pk__in=chunk, submitted__gt=1)
                         .select_related("codebook", "study").order_by("pk"))
            codings, by_item = gather(items), {}
            for (pk, key), decision in current_decisions(items).items():
                by_item.setdefault(pk, {})[key] = decision
            rows = []
            for item in items:
                if item.codebook_id not in questions:
                    questions[item.codebook_id] = questions_of(item)
                rows += stored_rows(item, codings[item.pk], questions[item.codebook_id],
                                    by_item.get(item.pk, {}))
            StoredDisagreement.objects.bulk_create(rows, batch_size=1000)
        made += len(rows)
        if progress:
            progress(start + len(chunk), len(ids))
    return made


def settle_study(study):
    """Settle every complete item (after a change of settings, or from the command line)."""
    settled = 0
    for item in complete_items(study).order_by("pk").iterator(chunk_size=500):
        settle_item(item)
        settled += 1
    return settled


def _automatic(item, current, question_key, value, method):
    """The next decision revision for an automatic value, or None when nothing changes.

    Not applicable for every coder needs no decision; left unanswered by every coder is
    decided as null, so "missing" stays distinct from "not decided yet". An adjudicated
    decision is never replaced."""
    if value == NOT_APPLICABLE:
        return None
    value = None if value == MISSING else value
    if current and (current.method in (Decision.Method.ADJUDICATED, NOT_APPLICABLE_METHOD) or
                    (current.method == method and current.value == value)):
        return None
    return Decision(item=item, question_key=question_key, value=value, method=method,
                    revision=current.revision + 1 if current else 1)


def _append(item, question_key, value, method, user=None, rationale=""):
    last = (Decision.objects.filter(item=item, question_key=question_key)
            .aggregate(n=Max("revision"))["n"] or 0)
    return Decision.objects.create(item=item, question_key=question_key, revision=last + 1,
                                   value=value, method=method, decided_by=user,
                                   rationale=rationale)


def current_decision(item, question_key):
    return (Decision.objects.filter(item=item, question_key=question_key)
            .order_by("-revision").first())


# --- what the codebook's conditions make of the decisions ---------------------------------

NOT_APPLICABLE_METHOD, REOPENED = Decision.Method.NOT_APPLICABLE, Decision.Method.REOPENED
NOT_ADJUDICATED = Decision.Method.NOT_ADJUDICATED


def decided(decision):
    """Whether a current decision settles its question: a reopened one waits again, and
    one the codebook left to the coders (not adjudicated) decides nothing."""
    return decision is not None and decision.method not in (REOPENED, NOT_ADJUDICATED)


def consequences(item, questions, current, disputed=(), user=None):
    """(unsaved decisions, {question key ruled out: (parent key, parent's value)}): what the
    current decisions ({question key: Decision}) make of the questions whose condition
    (show_if) names another. In codebook order, so a parent is settled before its
    children. A question whose parent's decision rules it out does not apply: a
    not_applicable revision if it has a decision or its coders' answers differ
    (`disputed`); one every coder skipped needs none. One that applies again once that
    decision changed, or whose parent waits again, gets a reopened revision: it waits for
    a decision of its own. Nothing while the parent is undecided. No query."""
    final, ruled_out, found = {}, {}, []
    for question in questions:
        decision = current.get(question.key)
        condition = question.show_if
        method = decision.method if decision else None
        if condition:
            parent = condition["question"]
            if parent in ruled_out or (parent in final and not is_shown(question, final)):
                ruled_out[question.key] = (parent, final.get(parent))
                if method != NOT_APPLICABLE_METHOD and (decision or question.key in disputed):
                    found.append(_consequence(item, decision, question.key,
                                              NOT_APPLICABLE_METHOD, user))
                continue
            if method == NOT_APPLICABLE_METHOD:
                found.append(_consequence(item, decision, question.key, REOPENED, user))
                continue
        if decided(decision) and method != NOT_APPLICABLE_METHOD:
            final[question.key] = decision.value
    return found, ruled_out


def _consequence(item, current, question_key, method, user):
    return Decision(item=item, question_key=question_key, value=None, method=method,
                    decided_by=user, revision=current.revision + 1 if current else 1)


def _follow(item, questions, current, disputed, user=None):
    """Record the consequences of the current decisions, and add them to `current`."""
    found, _ = consequences(item, questions, current, disputed, user)
    if found:
        current.update((d.question_key, d) for d in _INSERT_DECISIONS.bulk_create(found))


# --- adjudicating -------------------------------------------------------------------

def can_decide(item, user):
    """Adjudicators and owners decide; by default not on items they coded themselves."""
    roles = item.study.roles_of(user)
    if not roles & {Role.ADJUDICATOR, Role.OWNER}:
        return False
    coded = Assignment.objects.filter(item=item, coder=user).exists()
    return item.study.allow_self_adjudication or not coded


@transaction.atomic
def decide(item, question_key, value, user, rationale=""):
    """Record an adjudicator's value for one question; a later call adds a revision.

    A value that no coder gave needs a rationale.
    """
    check_open(item.study)
    if not can_decide(item, user):
        raise PermissionDenied(gettext("You coded this item; this study does not let coders "
                                       "decide their own items."))
    Item.objects.select_for_update(of=("self",)).get(pk=item.pk)
    questions = questions_of(item)
    question = next((q for q in questions if q.key == question_key), None)
    if question is None:
        raise ValidationError({"question": gettext("no question %(key)r in this codebook")
                               % {"key": question_key}})
    try:
        value = check_answer(question, value)
    except ValueError as error:
        raise ValidationError({question_key: str(error)}) from error
    current = {key: d for (_, key), d in current_decisions([item]).items()}
    _, ruled_out = consequences(item, questions, current)
    if question_key in ruled_out:
        parent, parent_value = ruled_out[question_key]
        raise ValidationError({question_key: gettext(
            "%(question)s does not apply: %(parent)s was decided as %(value)r. "
            "Decide %(parent)s again to make it apply.")
            % {"question": question_key, "parent": parent, "value": parent_value}})
    codings = gather([item])[item.pk]
    given = {_key(answer(c, question))
             for c in [*codings.independent.values(), *codings.latest.values()]}
    if _key(value) not in given and not rationale.strip():
        raise ValidationError({question_key: gettext("A value that no coder gave needs a "
                                                     "rationale.")})
    decision = _append(item, question_key, value, Decision.Method.ADJUDICATED, user,
                       rationale.strip())
    current[question_key] = decision
    # What the new value rules in or out through the codebook's conditions, recorded as
    # the consequence of this decision (its own revisions), and the review list with it.
    disputed = {q.key for q in questions
                if q.is_adjudicated and len(group_answers(codings.independent, q)) > 1}
    _follow(item, questions, current, disputed, user)
    # The rows the item has (settling decides which questions have one) say so too.
    listed = set(StoredDisagreement.objects.filter(item=item)
                 .values_list("question_key", flat=True))
    _store(item, [row for row in stored_rows(item, codings, questions, current)
                  if row.question_key in listed or row.waits], stored=bool(listed))
    return decision


# --- the disagreement queue ---------------------------------------------------------------

ORDER_FIELDS = {
    "most": ("-group_count", "last_coded", "item_id", "position", "pk"),
    "oldest": ("last_coded", "item_id", "position", "pk"),
    "question": ("position", "last_coded", "item_id", "pk"),
}


def disagreement_query(study, *, question=None, coders=None, category=None, status="open",
                       order="most"):
    """The study's stored disagreements, filtered and in the review list's order.

    `coders`: usernames that must all be among those who differ; `category`: an answer
    one of the coders gave; `status`: open, decided or all."""
    from django.contrib.auth import get_user_model

    rows = StoredDisagreement.objects.filter(study=study, item__deleted_at__isnull=True)
    if status == "open":
        rows = rows.filter(decided=False)
    elif status == "decided":
        rows = rows.filter(decided=True)
    if question:
        rows = rows.filter(question_key=question)
    if coders:
        ids = list(get_user_model().objects.filter(username__in=set(coders))
                   .values_list("pk", flat=True))
        if len(ids) < len(set(coders)):
            return rows.none()
        for pk in ids:
            rows = rows.filter(coder_ids__contains=f",{pk},")
    if category:
        rows = rows.filter(answer_tokens__contains=f"|{category}|")
    return rows.order_by(*ORDER_FIELDS[order])


def disagreement_count(study, *, question=None, coders=None, category=None, status="open",
                       **_):
    """(count, exact) of the review list's rows: from the study's tallies when no filter
    narrows the list beyond its status (kept as the rows are written: coding/models/
    tallies.py), else counted up to 10,000 rows (workbench.paging.bounded_count)."""
    if kept() and not (question or coders or category):
        counts = tallies(study)
        found = sum(n for name, n in counts.items() if name.startswith("disagreements:"))
        decided = sum(n for name, n in counts.items() if name.startswith("decided:"))
        return {"open": found - decided, "decided": decided}.get(status, found), True
    return bounded_count(disagreement_query(study, question=question, coders=coders,
                                            category=category, status=status))


def disagreements(study, *, after=None, limit=None, order="most", **filters):
    """Disagreement rows for display: the first `limit` after the page token `after`
    (all when no limit). Each row carries `token`, the page token that follows it."""
    rows = disagreement_query(study, order=order, **filters)
    if after:
        rows = rows.filter(after_token(ORDER_FIELDS[order], after))
    rows = rows.select_related("item__document", "item__codebook", "decision")
    return present(list(rows[:limit] if limit else rows), order)


def present(stored, order):
    """Disagreement objects for stored rows: coders and questions in a query or two per
    page (the questions of each codebook once), never per row."""
    from django.contrib.auth import get_user_model

    ids = {pk for row in stored for _, coders in row.groups for pk in coders}
    users = get_user_model().objects.in_bulk(ids)
    questions, found = {}, []
    for row in stored:
        item = row.item
        if item.codebook_id not in questions:
            questions[item.codebook_id] = {q.key: q for q in questions_of(item)}
        question = questions[item.codebook_id].get(row.question_key)
        if question is None:  # the codebook changed since: rebuild_disagreements catches up
            continue
        groups = [(value, [users[pk] for pk in coders if pk in users]) for value, coders in row.groups]
        found.append(Disagreement(item, question, groups, row.decision, row.last_coded,
                                  row.in_discussion))
        found[-1].position = row.position
        found[-1].token = make_token(ORDER_FIELDS[order], row)
    return found


def after_token(fields, token):
    """Q for the stored rows after the token's row in the order of `fields` (keyset
    paging, as every keyset-paged list: workbench.paging); ValueError for a token that
    is not one."""
    return paging.after_token(fields, token, StoredDisagreement)


# --- what coders may see after the fact -----------------------------------------------

def discussion_for(assignment):
    """For a coder of an item in discussion: the answers that differ, by coder.

    What is returned is shown to the coder, so it is recorded as their exposure."""
    item = assignment.item
    if not item.discussion_opened_at or assignment.status != Assignment.Status.SUBMITTED:
        return []
    codings = gather([item])[item.pk]
    shown = [(q, groups) for q in questions_of(item)
             if len(groups := group_answers(codings.latest, q)) > 1]
    record_exposures(Exposure.Kind.DISCUSSION, [
        (assignment.pk, q.key, {"answers": [value for value, _ in groups]}) for q, groups in shown])
    return shown


def feedback_for(study, coder):
    """Where the coder's independent answers differ from final decisions (if the study allows).

    Each row's decision holds the value and how it was reached; who decided and why only
    when the study's `feedback_shows_reasons` is on. Whoever shows rows to the coder passes
    them to `feedback_shown`, which records the exposure."""
    if not study.show_feedback:
        return []
    mine = {c.assignment.item_id: c for c in independent_codings(study)
            .filter(assignment__coder=coder).select_related("assignment__item__document",
                                                            "assignment__item__codebook")}
    from coding.access.names import namer  # names builds on access, which needs models only

    name = namer(study, coder) if study.feedback_shows_reasons else None
    rows, questions = [], {}
    for decision in (Decision.objects.current().filter(item__in=list(mine))
                     .select_related("item", "decided_by").order_by("item_id", "question_key")):
        coding = mine[decision.item_id]
        item = coding.assignment.item
        if item.codebook_id not in questions:
            questions[item.codebook_id] = {q.key: q for q in questions_of(item)}
        question = questions[item.codebook_id].get(decision.question_key)
        decided = MISSING if decision.value is None else decision.value
        if question and answer(coding, question) != decided:
            rows.append({"item": coding.assignment.item, "question": question,
                         "yours": answer(coding, question),
                         "decision": feedback_decision(study, name, decision),
                         "assignment_id": coding.assignment_id})
    return rows


def feedback_shown(rows):
    """Record that the coder was shown these feedback rows (the page of them a page or the
    API returns): a later revision of those items is informed, never independent."""
    record_exposures(Exposure.Kind.FEEDBACK, [
        (row["assignment_id"], row["question"].key,
         {"value": row["decision"]["value"], "method": row["decision"]["method"]})
        for row in rows])
    return rows


def feedback_decision(study, name, decision):
    """What a coder is shown of a decision: value and method; reasons only if the study says
    (`name`: the coder's namer, made once for all rows)."""
    shown = {"value": decision.value, "method": decision.method, "decided_at": decision.decided_at}
    if study.feedback_shows_reasons:
        shown["rationale"] = decision.rationale
        shown["decided_by"] = name(decision.decided_by) if decision.decided_by else ""
    return shown

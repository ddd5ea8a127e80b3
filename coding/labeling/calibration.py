"""Calibration as the owner sets it up: which items are in the calibration round, their
reference answers, the pass threshold, waivers, and who passed.

Every coder codes the calibration items first (`coding.labeling.queue.coder_round`). Once they
have finished them, their answers are compared with the reference answers question by
question (`coding.labeling.queue.calibration_score`); at the study's threshold they go on to the
main round. A waiver lets a coder go on after the calibration items whatever their score.

An item changes round only while nobody has coded it (no assignment but lapsed leases):
otherwise its codings would be counted in a round they were not made in. Refusals are
`ValidationError`s keyed by what they are about (a document key, a question, a field);
nothing is half done, and every change is audited in its own transaction.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext

from coding.access.archive import check_open
from coding.access.audit import record, target_of
from coding.codebooks.versions import check_values, shown_key
from coding.labeling import queue
from coding.labeling.codings import record_exposures
from coding.models import Assignment, Coding, Exposure, Item, Membership, Role

CALIBRATION, MAIN = Item.Round.CALIBRATION, Item.Round.MAIN
SUBMITTED, SKIPPED, ACTIVE, RELEASED = (
    Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED, Assignment.Status.ACTIVE,
    Assignment.Status.RELEASED)
# Items named in one request to add, and the pool picker's page.
MAX_ITEMS_PER_CHANGE = 500
PAGE = 25


def started_words(status, n):
    """Why an item that someone started cannot change round, by the assignment's status."""
    if status == ACTIVE:
        return ngettext("held by %(n)s coder right now", "held by %(n)s coders right now",
                        n) % {"n": n}
    if status == SKIPPED:
        return ngettext("skipped by %(n)s coder", "skipped by %(n)s coders", n) % {"n": n}
    return ngettext("coded by %(n)s coder", "coded by %(n)s coders", n) % {"n": n}


def started_assignments():
    """Assignments that tie an item to its round: every one but a lapsed lease."""
    return Assignment.objects.exclude(status=RELEASED)


# --- reading ----------------------------------------------------------------------------

def calibration_items(study):
    """The study's calibration items, oldest first, with their documents and how many
    coders finished (`finished`) or started (`started`) each: one query."""
    return list(
        Item.objects.alive().filter(study=study, round=CALIBRATION)
        .select_related("document").only("pk", "reference_values", "codebook_id", "added_at",
                                         "document__key", "document__title", "document__kind")
        .annotate(finished=Count("assignments", filter=Q(
                      assignments__status__in=[SUBMITTED, SKIPPED])),
                  started=Count("assignments", filter=~Q(assignments__status=RELEASED)))
        .order_by("pk"))


def access_calibration_item(study, item_id):
    """The study's calibration item with that id, or Http404 (an item of the main round
    has no reference answer to read or write)."""
    from django.http import Http404

    item = (Item.objects.alive().filter(study=study, round=CALIBRATION, pk=item_id)
            .select_related("document", "snapshot", "codebook").first())
    if item is None:
        raise Http404(_("No such calibration item in this study."))
    item.study = study
    return item


def pool_candidates(study, search="", after=None, limit=PAGE):
    """Main-round items nobody has started, by id from `after` (keyset: a deep page costs
    what the first does), matching `search` in the document key or title. Returns (items,
    the `after` of the next page or None). One query."""
    items = (Item.objects.alive().filter(study=study, round=MAIN)
             .exclude(Exists(started_assignments().filter(item=OuterRef("pk"))))
             .select_related("document")
             .only("pk", "added_at", "document__key", "document__title", "document__kind")
             .order_by("pk"))
    search = search.replace("\x00", "")  # PostgreSQL refuses NUL in any text it is sent
    if search:
        items = items.filter(Q(document__key__icontains=search)
                             | Q(document__title__icontains=search))
    if after is not None:
        items = items.filter(pk__gt=after)
    rows = list(items[:limit + 1])
    return rows[:limit], (rows[limit - 1].pk if len(rows) > limit else None)


def comparisons(study):
    """{coder id: [(item id, document key, question key, answer, reference answer)]}: each
    coder's first calibration coding of each item against its reference, question by
    question, as `coding.labeling.queue.calibration_score` compares them. One query: calibration
    items are few, and their codings are read whatever the size of the main round."""
    first = {}
    for coder_id, item_id, key, reference, values in (
            Coding.objects.filter(assignment__item__study=study,
                                  assignment__item__round=CALIBRATION,
                                  phase=Coding.Phase.INDEPENDENT)
            .order_by("revision").values_list(
                "assignment__coder", "assignment__item", "assignment__item__document__key",
                "assignment__item__reference_values", "values")):
        first.setdefault((coder_id, item_id), (key, reference or {}, values))
    compared = {}
    for (coder_id, item_id), (key, reference, values) in sorted(first.items()):
        compared.setdefault(coder_id, []).extend(
            (item_id, key, question, values.get(question), answer)
            for question, answer in reference.items())
    return compared


def score_shown(study, coder):
    """The coder's calibration score, to show them once they finished every calibration
    item; showing it is recorded as their exposure on each calibration item, so a later
    revision of one is `informed`, and it never changes the score, which counts first
    submissions (coding.labeling.queue.calibration_score)."""
    record_exposures(Exposure.Kind.CALIBRATION, [
        (pk, "", {"score": True}) for pk in Assignment.objects.filter(
            item__study=study, item__round=CALIBRATION, coder=coder,
            status=SUBMITTED).values_list("pk", flat=True)])
    return queue.calibration_score(study, coder)


def results(study):
    """Per coder of the study: calibration items finished of the total, score (the share
    of compared answers matching the reference), status, and per question the items on
    which they differed from the reference. Four queries whatever the number of coders,
    items or codings: the coders, the calibration items, the coders' finished calibration
    assignments by status, the calibration codings."""
    coders = list(Membership.objects.filter(study=study, role=Role.CODER,
                                            deleted_at__isnull=True)
                  .select_related("user").order_by("user__username"))
    total = Item.objects.alive().filter(study=study, round=CALIBRATION).count()
    finished = {}
    for coder_id, status, n in (
            Assignment.objects.filter(item__study=study, item__round=CALIBRATION,
                                      item__deleted_at__isnull=True,
                                      status__in=[SUBMITTED, SKIPPED])
            .values_list("coder", "status").order_by().annotate(n=Count("pk"))):
        finished.setdefault(coder_id, {})[status] = n
    compared = comparisons(study)
    return [_result(study, m, total, finished.get(m.user_id, {}), compared.get(m.user_id, []))
            for m in coders]


def _result(study, membership, total, finished, compared):
    matches = sum(answer == reference for *_, answer, reference in compared)
    score = matches / len(compared) if compared else None
    done = finished.get(SUBMITTED, 0) + finished.get(SKIPPED, 0)
    differences = {}
    for item_id, key, question, answer, reference in compared:
        if answer != reference:
            differences.setdefault(question, []).append(
                {"item": item_id, "document_key": key, "answer": answer, "reference": reference})
    return {
        "coder": membership.user, "waived": membership.calibration_waived,
        "submitted": finished.get(SUBMITTED, 0), "skipped": finished.get(SKIPPED, 0),
        "done": done, "total": total, "score": score, "compared": len(compared),
        "status": status(study, membership.calibration_waived, done, total, score),
        "differences": dict(sorted(differences.items())),
    }


# What each status means for the coder's queue (coding.labeling.queue.coder_round); in English
# for the API, translated on the page.
STATUSES = {
    "no_calibration": gettext_noop("no calibration items: codes the main round"),
    "not_started": gettext_noop("has not coded a calibration item yet"),
    "in_progress": gettext_noop("coding the calibration items"),
    "passed": gettext_noop("passed: codes the main round"),
    "waived": gettext_noop("waived: codes the main round after the calibration items, "
                           "whatever the score"),
    "below_threshold": gettext_noop("below the threshold: gets no main items until you waive "
                                    "calibration or lower the threshold"),
    "not_scored": gettext_noop("finished, but no answer could be compared (no reference "
                               "answers): gets no main items until you enter reference answers "
                               "or waive calibration"),
}
# Each status in a word or two, as the page's status column shows it.
STATUS_WORDS = {
    "no_calibration": gettext_noop("no calibration"), "not_started": gettext_noop("not started"),
    "in_progress": gettext_noop("in progress"), "passed": gettext_noop("passed"),
    "waived": gettext_noop("waived"), "below_threshold": gettext_noop("below threshold"),
    "not_scored": gettext_noop("not scored"),
}


def status(study, waived, done, total, score):
    """The coder's calibration status, by the rules of coding.labeling.queue.coder_round."""
    if not total:
        return "no_calibration"
    if done < total:
        return "in_progress" if done else "not_started"
    if waived:
        return "waived"
    if score is None:
        return "not_scored"
    return "passed" if score >= study.calibration_threshold else "below_threshold"


# --- changing -----------------------------------------------------------------------------

def _why_started(items):
    """{item id: why it cannot change round} for the items someone started."""
    why = {}
    for item_id, status_, n in (started_assignments().filter(item__in=items)
                                .values_list("item", "status").order_by("status")
                                .annotate(n=Count("pk"))):
        why.setdefault(item_id, []).append(started_words(status_, n))
    return {item_id: ", ".join(reasons) for item_id, reasons in why.items()}


@transaction.atomic
def add_items(study, actor, *, ids=(), keys=()):
    """Move main-round items nobody has started into calibration, named by item id or
    document key: all of them, or none (ValidationError naming each one refused).
    Returns {"added": [document keys], "already": [document keys already in calibration]}."""
    check_open(study)
    ids, keys = list(dict.fromkeys(ids)), list(dict.fromkeys(keys))
    unreadable = {shown_key(k): _("not a document key") for k in keys
                  if not isinstance(k, str) or "\x00" in k or len(k) > 300}
    if unreadable:
        raise ValidationError(unreadable)
    if not ids and not keys:
        raise ValidationError({"items": _("name at least one item, by id or document key")})
    if len(ids) + len(keys) > MAX_ITEMS_PER_CHANGE:
        raise ValidationError({"items": _("at most %(count)s items at once")
                               % {"count": MAX_ITEMS_PER_CHANGE}})
    # Locked in a fixed order: a coder's next_item skips a locked item, and one that
    # reserved it first is seen by the check below (it runs after the lock is ours).
    found = list(Item.objects.alive().filter(study=study)
                 .filter(Q(pk__in=ids) | Q(document__key__in=keys))
                 .select_related("document").select_for_update(of=("self",)).order_by("pk"))
    errors = {}
    for item_id in set(ids) - {i.pk for i in found}:
        errors[str(item_id)] = _("no such item in this study's pool")
    for key in set(keys) - {i.document.key for i in found}:
        errors[key] = _("no such document in this study's pool")
    moving = [i for i in found if i.round == MAIN]
    for item_id, why in _why_started(moving).items():
        item = next(i for i in moving if i.pk == item_id)
        errors[item.document.key] = _("%(why)s in the main round; only an item nobody has "
                                      "coded can move to calibration") % {"why": why}
    if errors:
        raise ValidationError(dict(sorted(errors.items())))
    # Calibration items are coded by every coder: no target (coding.labeling.queue.new_item_fields).
    Item.objects.filter(pk__in=[i.pk for i in moving]).update(round=CALIBRATION, target=0)
    added = [i.document.key for i in moving]
    if added:
        record(actor, study, "calibration.add", target_of("documents", keys=added), items=added)
    return {"added": added, "already": [i.document.key for i in found if i.round == CALIBRATION]}


@transaction.atomic
def remove_item(study, item, actor):
    """Move a calibration item nobody has started back to the main round, its reference
    answer dropped (kept in the audit entry); ValidationError says why not otherwise."""
    check_open(study)
    item = Item.objects.select_for_update(of=("self",)).select_related("document").get(pk=item.pk)
    key = item.document.key
    if item.round != CALIBRATION or item.deleted_at is not None:
        raise ValidationError({key: _("not a calibration item")})
    why = _why_started([item]).get(item.pk)
    if why:
        raise ValidationError({key: _("%(why)s in calibration; its codings count toward their "
                                      "scores, so it stays") % {"why": why}})
    target = study.overlap if item.in_reliability_sample else 1
    Item.objects.filter(pk=item.pk).update(round=MAIN, target=target, reference_values=None)
    record(actor, study, "calibration.remove", target_of("document", name=key),
           reference=item.reference_values)


@transaction.atomic
def set_reference(item, values, actor):
    """Store the item's reference answers: complete and valid for the current version of
    its codebook (coding.codebooks.versions.check_values), or ValidationError keyed by question."""
    check_open(item.study)
    # Under the item's lock, so an item moved back to the main round meanwhile is refused.
    locked = (Item.objects.select_for_update(of=("self",)).filter(pk=item.pk)
              .values("round", "deleted_at", "reference_values").first())
    if not locked or locked["round"] != CALIBRATION or locked["deleted_at"] is not None:
        raise ValidationError({"item": _("only a calibration item has reference answers")})
    version = item.codebook.current_version()
    if version is None:
        raise ValidationError({"item": _("its codebook has no published version to answer")})
    cleaned = check_values(version, values, complete=True)
    if not cleaned:
        raise ValidationError({"values": _("answer at least one question: an empty reference "
                                           "compares nothing")})
    before = locked["reference_values"]
    Item.objects.filter(pk=item.pk).update(reference_values=cleaned)
    item.reference_values = cleaned
    record(actor, item.study, "calibration.reference",
           target_of("document", name=item.document.key),
           **{"from": before, "to": cleaned, "codebook_version": version.number})
    return cleaned


def check_threshold(value):
    """The threshold as a share from 0 to 1, or ValidationError({"threshold": …})."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValidationError({"threshold": _("give a number from 0 to 1, e.g. 0.8 for 80%")})
    if not 0 <= value <= 1:
        raise ValidationError({"threshold": _("%(value)s is not between 0 and 1 (0%% to 100%%)")
                               % {"value": value}})
    return float(value)


@transaction.atomic
def change(study, actor, *, threshold=None, waived=None):
    """Set the pass threshold and waive (or require) calibration per coder, by username
    ({"cora": True}): all of it, or nothing (ValidationError naming each bad part)."""
    check_open(study)
    errors = {}
    if threshold is not None:
        try:
            threshold = check_threshold(threshold)
        except ValidationError as error:
            errors.update(error.message_dict)
    memberships = {}
    if waived:
        names = [n for n in waived if isinstance(n, str) and "\x00" not in n]
        memberships = {m.user.username: m for m in Membership.objects.filter(
            study=study, role=Role.CODER, deleted_at__isnull=True,
            user__username__in=names).select_related("user")}
        for name in waived:
            if name not in memberships:
                errors[f"waived.{shown_key(name)}"] = _("not a coder of this study")
    if errors:
        raise ValidationError(errors)
    if threshold is not None and threshold != study.calibration_threshold:
        record(actor, study, "calibration.threshold", target_of("study", name=study.name),
               **{"from": study.calibration_threshold, "to": threshold})
        study.calibration_threshold = threshold
        study.save(update_fields=["calibration_threshold"])
    for name, waive in sorted((waived or {}).items()):
        membership = memberships[name]
        if membership.calibration_waived != bool(waive):
            Membership.objects.filter(pk=membership.pk).update(calibration_waived=bool(waive))
            record(actor, study, "calibration.waive" if waive else "calibration.require",
                   target_of("member", role="coder", name=name))

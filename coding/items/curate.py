"""An owner's actions on chosen items, from the item browser, the API or `manage.py items`.

Each action takes item ids and applies to all of them or to none: an item it cannot
apply to is named with the reason (ValidationError keyed by document key), and nothing
is changed. Each writes one audit entry for the batch (coding.access.audit) and one
`ItemChange` per item (the item page's history), in the transaction of the change.

- exclude (a reason is required): the item leaves every queue, count, report and export
  (soft deletion, rule 4: its codings and decisions stay); a coder holding it loses it.
- restore: an excluded item comes back as it was.
- release: a coder's hold on the item ends; the item goes back to the pool (the coder's
  draft stays with the assignment, as when a lease lapses).
- return: back to the pool: the coders who skipped it may be given it again, and a
  calibration item nobody has started moves to the main round.
- calibration: main-round items nobody has started move to calibration
  (coding.labeling.calibration.add_items, which audits it).
- sample: main-round items join the reliability sample. They are chosen, not drawn, so
  the queue page counts them apart from the draw (`added_to_sample_by_hand`).
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coding.access.archive import check_open
from coding.access.audit import record, target_of
from coding.labeling import calibration, queue
from coding.models import Assignment, Item, ItemChange

MAX_ITEMS = calibration.MAX_ITEMS_PER_CHANGE
ACTIONS = {
    "exclude": gettext_lazy("Exclude from the study"),
    "restore": gettext_lazy("Restore"),
    "release": gettext_lazy("Release from the coder holding it"),
    "return": gettext_lazy("Return to the pool"),
    "calibration": gettext_lazy("Move to calibration"),
    "sample": gettext_lazy("Add to the reliability sample"),
}
ACTIVE, SKIPPED, RELEASED = (Assignment.Status.ACTIVE, Assignment.Status.SKIPPED,
                             Assignment.Status.RELEASED)


def apply(study, actor, action, ids, reason=""):
    """Run `action` on the items `ids`; returns {"action", "changed": [document keys]}."""
    if action not in ACTIONS:
        raise ValidationError({"action": _("%(value)s is not one of: %(choices)s") % {
            "value": str(action)[:40], "choices": ", ".join(ACTIONS)}})
    ids = _ids(ids)
    reason = (reason or "").strip()
    if len(reason) > 2000:
        raise ValidationError({"reason": _("at most 2,000 characters")})
    if action == "calibration":
        with transaction.atomic():
            moved = calibration.add_items(study, actor, ids=ids)["added"]
            _changes(Item.objects.filter(study=study, document__key__in=moved), action, actor,
                     reason)
        return {"action": action, "changed": moved}
    with transaction.atomic():
        check_open(study)
        items = _locked(study, ids, excluded=action == "restore")
        changed = ACTION_RUNS[action](study, actor, items, reason)
        keys = [i.document.key for i in changed]
        record(actor, study, f"items.{action}", target_of("documents", keys=keys[:50]),
               items=len(keys), **({"reason": reason} if reason else {}))
        _changes(changed, action, actor, reason)
    return {"action": action, "changed": keys}


def _ids(ids):
    if not isinstance(ids, list | tuple) or not ids:
        raise ValidationError({"items": _("choose at least one item")})
    if len(ids) > MAX_ITEMS:
        raise ValidationError({"items": _("at most %(count)s items at once") % {
            "count": MAX_ITEMS}})
    try:
        return list(dict.fromkeys(int(i) for i in ids))
    except (TypeError, ValueError):
        raise ValidationError({"items": _("items are named by their ids (whole numbers)")})


def _locked(study, ids, excluded=False):
    """The items, locked in id order (as every writer of items locks them); each id that is
    not an item of the study (or not excluded, for a restore) refused by id."""
    items = list(Item.objects.filter(study=study, pk__in=ids).select_related("document")
                 .select_for_update(of=("self",)).order_by("pk"))
    errors = {str(pk): _("no such item in this study") for pk in set(ids) - {i.pk for i in items}}
    for item in items:
        if excluded and item.deleted_at is None:
            errors[item.document.key] = _("not excluded")
        elif not excluded and item.deleted_at is not None:
            errors[item.document.key] = _("excluded; restore it first")
    if errors:
        raise ValidationError(dict(sorted(errors.items())))
    return items


def _refuse(items, why):
    """Refuse the batch when `why(item)` gives a reason for any item."""
    errors = {i.document.key: reason for i in items for reason in [why(i)] if reason}
    if errors:
        raise ValidationError(dict(sorted(errors.items())))


def _release_holds(items):
    held = Assignment.objects.filter(item__in=items, status=ACTIVE).values_list("pk", "item_id")
    return queue.release(held)


def _exclude(study, actor, items, reason):
    if not reason:
        raise ValidationError({"reason": _("Say why these items are excluded: the reason is "
                                           "kept with them and in the audit trail.")})
    _release_holds(items)
    Item.objects.filter(pk__in=[i.pk for i in items]).update(
        deleted_at=timezone.now(), excluded_reason=reason)
    return items


def _restore(study, actor, items, reason):
    Item.objects.filter(pk__in=[i.pk for i in items]).update(deleted_at=None, excluded_reason="")
    return items


def _release(study, actor, items, reason):
    held = set(Assignment.objects.filter(item__in=items, status=ACTIVE)
               .values_list("item_id", flat=True))
    _refuse(items, lambda i: None if i.pk in held else _("nobody holds it"))
    _release_holds(items)
    return items


def _return(study, actor, items, reason):
    skipped = set(Assignment.objects.filter(item__in=items, status=SKIPPED)
                  .values_list("item_id", flat=True))
    started = set(calibration.started_assignments().filter(item__in=items)
                  .values_list("item_id", flat=True))

    def why(item):
        if item.pk in skipped:
            return None
        if item.round == Item.Round.CALIBRATION and item.pk not in started:
            return None
        if item.round == Item.Round.CALIBRATION:
            return _("a calibration item someone has started stays in calibration")
        return _("nobody skipped it: it is in the pool already, or held or coded")
    _refuse(items, why)
    # A skip said "never to me again"; released, the item may come back to its coder.
    Assignment.objects.filter(item__in=items, status=SKIPPED).update(status=RELEASED)
    for item in items:
        if item.round == Item.Round.CALIBRATION and item.pk not in started:
            Item.objects.filter(pk=item.pk).update(
                round=Item.Round.MAIN, reference_values=None,
                target=study.overlap if item.in_reliability_sample else 1)
    return items


def _sample(study, actor, items, reason):
    _refuse(items, lambda i: (
        _("only a main-round item can join the reliability sample")
        if i.round != Item.Round.MAIN else
        _("already in the reliability sample") if i.in_reliability_sample else None))
    # Their targets follow in sync_targets, which rebuilds the stored disagreements.
    Item.objects.filter(pk__in=[i.pk for i in items]).update(in_reliability_sample=True)
    queue.sync_targets(study, actor)
    return items


ACTION_RUNS = {"exclude": _exclude, "restore": _restore, "release": _release,
               "return": _return, "sample": _sample}


def _changes(items, action, actor, reason):
    ItemChange.objects.bulk_create([
        ItemChange(item=item, action=f"items.{action}",
                   actor=actor if getattr(actor, "is_authenticated", False) else None,
                   reason=reason) for item in items])


def added_to_sample_by_hand(study):
    """How many items joined the study's reliability sample by an owner's choice, not by
    the draw (one indexed count of the items' changes)."""
    return ItemChange.objects.filter(item__study=study, action="items.sample").count()

"""Model-suggested answers in an assisted round (issue 16): opt-in, never in a blind round.

An owner marks a round as assisted and picks the model rater whose imported answers are
suggested. Whether a coder sees a suggestion is decided here, on the server, from the
round's state when the item is served (the coding page, the coder API); a parameter or
a field a client sends changes nothing. What was shown is written then as an Exposure of
kind `suggestion`, and every coding of that assignment recorded after it is assisted
(`was_assisted`, read by coding.labeling.codings.append_revision): never independent, never in
reliability (design brief, rules 8 and 10).

Blind stays blind: the calibration round can never be assisted (coders are checked
against the reference answers there), nor a main round whose every item is in the
reliability sample; items in the reliability sample never get a suggestion, even in an
assisted round.
"""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from coding.access import audit
from coding.models import AssistedRound, Exposure, Item, Rater, RaterCoding
from workbench.prepared import Slot, Statement

CALIBRATION, MAIN = Item.Round.CALIBRATION, Item.Round.MAIN


def check_may_assist(study, round_):
    """Refuse (ValidationError on `round`) a round that must stay blind."""
    if round_ not in Item.Round.values:
        raise ValidationError({"round": _("Choose the main or the calibration round.")})
    if round_ == CALIBRATION:
        raise ValidationError({"round": _(
            "The calibration round is blind: coders are checked against the reference answers, "
            "so it can never be assisted.")})
    if not study.reliability_sample:
        raise ValidationError({"round": _(
            "Every item of the main round is in the reliability sample, which is coded blind. "
            "Draw a reliability sample first: suggestions are shown only on the items outside it.")})


@transaction.atomic
def mark_assisted(study, user, round_, rater_name):
    """Make `round_` assisted with the model rater named `rater_name` (or change its rater)."""
    check_may_assist(study, round_)
    rater = Rater.objects.filter(study=study, name=str(rater_name or "")).first()
    if rater is None or rater.kind != Rater.Kind.MODEL:
        raise ValidationError({"rater": _("Choose one of the study's model raters.")})
    assisted, _created = AssistedRound.objects.update_or_create(
        study=study, round=round_, defaults={"rater": rater, "marked_by": user})
    audit.record(user, study, "round.assisted", audit.target_of(f"{round_}_round"),
                 rater=rater.name,
                 model_version=rater.model_version, config_hash=rater.config_hash)
    return assisted


@transaction.atomic
def mark_blind(study, user, round_):
    """Stop suggesting in `round_`. Codings already made with a suggestion stay assisted."""
    removed, _details = AssistedRound.objects.filter(study=study, round=round_).delete()
    if removed:
        audit.record(user, study, "round.blind", audit.target_of(f"{round_}_round"))
    return bool(removed)


def assisted_rounds(study):
    return list(AssistedRound.objects.filter(study=study).select_related("rater"))


def suggestions_for(assignment):
    """The suggestions to serve with this assignment now, {question key: suggestion}, each
    recorded as shown (an Exposure) before it is returned. Empty unless the item's round
    is assisted now and the item is outside the reliability sample."""
    item = assignment.item
    if item.in_reliability_sample or item.deleted_at is not None:
        return {}
    assisted = (AssistedRound.objects.filter(study_id=item.study_id, round=item.round)
                .select_related("rater").first())
    if assisted is None:
        return {}
    rater = assisted.rater
    found = {key: {"question": key, "value": value, "shown": shown_value(value),
                   "rater": rater.name,
                   "model_version": rater.model_version, "config_hash": rater.config_hash}
             for key, value in RaterCoding.objects.filter(rater=rater, item=item)
             .values_list("question_key", "value")}
    # Written before the page or response leaves: a coding made after it is assisted.
    Exposure.objects.bulk_create(
        [Exposure(assignment_id=assignment.pk, kind=Exposure.Kind.SUGGESTION, question_key=key,
                  shown=shown) for key, shown in found.items()], ignore_conflicts=True)
    return found


def attach_suggestions(assignment, questions):
    """Give each question of the coding page its suggestion (or None), served now."""
    found = suggestions_for(assignment)
    for question in questions:
        question.suggestion = found.get(question.key)


def shown_value(value):
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def was_assisted(assignment_id):
    """Whether the assignment's coder was ever served a suggestion on this item."""
    # On every submission (record_coding): compiled once per process (workbench/prepared.py).
    return _SERVED.first(assignment=assignment_id) is not None


_SERVED = Statement(Exposure, lambda assignment: (
    Exposure.objects.filter(assignment_id=assignment, kind=Exposure.Kind.SUGGESTION)
    .order_by().values_list("pk")[:1]), Slot("assignment"))

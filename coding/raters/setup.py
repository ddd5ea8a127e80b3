"""Adding raters and comparisons (owners), and the rater list a page shows.

Raters are an owner's business: coders never see them (coding.access.roles gives their pages
and API to owners, adjudicators and viewers only), and nothing here touches the queue.
"""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils.translation import gettext, pgettext

from coding.access import audit
from coding.access.archive import check_open
from coding.models import Codebook, Comparison, Membership, Rater
from coding.raters import comparisons

RATER_FIELDS = ("kind", "name", "model_version", "config_hash", "provenance")


def raters_of(study):
    """The study's raters with how many codings each has imported (one query)."""
    return Rater.objects.filter(study=study).select_related("member").annotate(
        imported=Count("codings"))


@transaction.atomic
def add_rater(study, user, *, kind, name, model_version="", config_hash="", provenance="",
              member=None):
    """A new rater; ValidationError naming the field when something is wrong."""
    check_open(study)
    if kind not in Rater.Kind.values:
        raise ValidationError({"kind": gettext("one of %(choices)s")
                               % {"choices": ", ".join(Rater.Kind.values)}})
    if kind == Rater.Kind.PERSON:
        if member is None or not Membership.objects.filter(
                study=study, user=member, deleted_at__isnull=True).exists():
            raise ValidationError({"member": gettext("a person rater is a member of the "
                                                     "study")})
    elif member is not None:
        raise ValidationError({"member": gettext("only a person rater is a member")})
    if kind == Rater.Kind.MODEL and not model_version.strip():
        raise ValidationError({"model_version": gettext("a model rater needs its version")})
    rater = Rater(study=study, kind=kind, name=name, model_version=model_version.strip(),
                  config_hash=config_hash.strip(), provenance=provenance.strip(),
                  member=member, created_by=user)
    rater.full_clean(exclude=["study", "member", "created_by"], validate_unique=False)
    try:
        with transaction.atomic():
            rater.save()
    except IntegrityError:
        raise ValidationError({"name": gettext("the study already has a rater %(name)r (or "
                                               "this member already is one)")
                               % {"name": name}}) from None
    audit.record(user, study, "rater.add", audit.target_of(f"{kind}_rater", name=name),
                 model_version=rater.model_version, config_hash=rater.config_hash)
    return rater


@transaction.atomic
def add_comparison(study, user, *, name, first, second, question, codebook=None,
                   weighting=None, weights=None):
    """A named comparison of rater `first` (rows) with `second` (columns; None for the
    final decisions) on the question keyed `question`; kappa weighted as
    coding.raters.comparisons.checked_weights allows (unweighted by default)."""
    check_open(study)
    first, second = (_rater(study, n, field) for n, field in ((first, "first"),
                                                                (second, "second")))
    if first is None:
        raise ValidationError({"first": gettext("choose a rater")})
    if second is not None and second.pk == first.pk:
        raise ValidationError({"second": gettext("compare a rater with another rater or with "
                                                 "the final decisions")})
    codebook = codebook or _codebook_with(study, question)
    if not name.strip():
        raise ValidationError({"name": pgettext("a field", "required")})
    weighting, weights = comparisons.checked_weights(
        comparisons.question_of(Comparison(codebook=codebook, question_key=question)),
        weighting, weights)
    try:
        with transaction.atomic():
            comparison = Comparison.objects.create(
                study=study, name=name.strip()[:200], codebook=codebook, question_key=question,
                first=first, second=second, created_by=user, weighting=weighting,
                weights=weights)
    except IntegrityError:
        raise ValidationError({"name": gettext("the study already has a comparison %(name)r")
                               % {"name": name}}) from None
    audit.record(user, study, "comparison.add", audit.target_of("comparison", name=name),
                 first=first.name,
                 second=second.name if second else "final decisions", question=question,
                 weighting=weighting)
    return comparison


def _rater(study, name, field):
    if name in (None, ""):
        return None
    rater = Rater.objects.filter(study=study, name=str(name)).first()
    if rater is None:
        raise ValidationError({field: gettext("no rater %(name)r in this study")
                               % {"name": str(name)[:100]}})
    return rater


def _codebook_with(study, key):
    """The study's codebook whose newest published version asks `key`."""
    for codebook in Codebook.objects.filter(study=study):
        version = codebook.current_version()
        if version and version.questions.filter(key=key).exists():
            return codebook
    raise ValidationError({"question": gettext("no codebook of this study asks %(key)r")
                           % {"key": str(key)[:100]}})

"""Calibration items, reference answers, pass threshold, who passed: pages (owners only).

One page lists the calibration items, picks more from the pool, sets the threshold and
waivers and shows each coder's results; a POST names its `action`. Reference answers are
entered on the coding form itself (`calibration/<item_id>/reference/`)."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods

from coding.access.blinding import coder_view, hidden_fields
from coding.access.roles import access_study
from coding.codebooks.versions import parse_form_answers, prune_not_applicable
from coding.labeling import calibration
from coding.labeling.views.code import as_errors, form_questions
from coding.models import Item, Role

OWNERS = {Role.OWNER}


class ThresholdForm(forms.Form):
    percent = forms.FloatField(
        label=gettext_lazy("Pass threshold (%)"), min_value=0, max_value=100,
        widget=forms.NumberInput(attrs={"step": "any", "class": "percent"}),
        help_text=gettext_lazy("Share of a coder's calibration answers that must match the "
                               "reference before they get main-round items."))


def errors_of(error):
    """A ValidationError as lines a person reads: "2599.00001: coded by 2 coders …"."""
    return [message if key == "__all__" else f"{key}: {message}"
            for key, messages_ in as_errors(error).items() for message in messages_]


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def calibration_page(request, slug):
    study = access_study(request.user, slug, roles=OWNERS)
    threshold_form = ThresholdForm(initial={"percent": f"{study.calibration_threshold * 100:g}"})
    errors = {}
    if request.method == "POST":
        action = request.POST.get("action", "")
        if action == "threshold":
            threshold_form = ThresholdForm(request.POST)
        try:
            done = act(request, study, action, threshold_form)
        except ValidationError as error:
            errors[action] = errors_of(error)
        else:
            messages.success(request, done)
            return redirect(reverse("calibration", args=[slug]) + keep_search(request.POST))
    return render(request, "coding/calibration.html",
                  page_context(request, study, threshold_form, errors),
                  status=400 if errors else 200)


def act(request, study, action, threshold_form):
    """Carry out one of the page's forms; the message to show, or ValidationError."""
    data = request.POST
    if action == "add":
        ids = [int(v) for v in data.getlist("item") if v.isdigit()]
        keys = data.get("keys", "").replace(",", " ").split()
        added = calibration.add_items(study, request.user, ids=ids, keys=keys)
        done = ngettext("Added %(count)s item to calibration.",
                        "Added %(count)s items to calibration.",
                        len(added["added"])) % {"count": len(added["added"])}
        if added["already"]:
            done += " " + _("Already there: %(keys)s.") % {"keys": ", ".join(added["already"])}
        return done
    if action == "remove":
        item = calibration.access_calibration_item(study, as_id(data.get("item")))
        calibration.remove_item(study, item, request.user)
        return _("%(key)s is back in the main round.") % {"key": item.document.key}
    if action == "threshold":
        if not threshold_form.is_valid():
            raise ValidationError({field: list(messages_) for field, messages_
                                   in threshold_form.errors.items()})
        calibration.change(study, request.user,
                           threshold=threshold_form.cleaned_data["percent"] / 100)
        return _("Pass threshold set to %(percent)s%%.") % {
            "percent": f"{threshold_form.cleaned_data['percent']:g}"}
    if action == "waive":
        name, waive = data.get("coder", ""), data.get("waived") == "1"
        calibration.change(study, request.user, waived={name: waive})
        if waive:
            return _("%(name)s goes on to the main round after the calibration items, whatever "
                     "the score.") % {"name": name}
        return _("%(name)s must pass calibration again.") % {"name": name}
    raise ValidationError({"action": _("choose add, remove, threshold or waive")})


def as_id(value):
    if not (value or "").isdigit():
        raise ValidationError({"item": _("name the item by its id")})
    return int(value)


def keep_search(data):
    """The pool search to return to after a change, as a query string."""
    from urllib.parse import urlencode

    kept = {k: data[k] for k in ("q", "after") if data.get(k)}
    return "?" + urlencode(kept) if kept else ""


def page_context(request, study, threshold_form, errors):
    search = request.GET.get("q", "").strip()[:200]
    after = request.GET.get("after", "")
    after = int(after) if after.isdigit() else None
    candidates, next_after = calibration.pool_candidates(study, search, after)
    items = calibration.calibration_items(study)
    results = calibration.results(study)
    for row in results:
        row["score_percent"] = None if row["score"] is None else f"{row['score'] * 100:.0f}"
        row["status_text"] = _(calibration.STATUSES[row["status"]])
        row["status_words"] = _(calibration.STATUS_WORDS[row["status"]])
    return {
        "study": study, "items": items, "candidates": candidates, "next_after": next_after,
        "search": search, "after": after, "results": results, "errors": errors,
        "threshold_form": threshold_form,
        "threshold_percent": f"{study.calibration_threshold * 100:g}",
        "missing_reference": sum(1 for i in items if not i.reference_values),
        "coders_started": any(r["done"] for r in results),
        "import_url": reverse("import", args=[study.slug]) + "?round=calibration",
    }


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def reference_page(request, slug, item_id):
    """The item on the coding form, pre-filled with its reference answer; saving checks
    it as a complete coding would be checked."""
    study = access_study(request.user, slug, roles=OWNERS)
    item = calibration.access_calibration_item(study, item_id)
    version = item.codebook.current_version()
    values, errors = item.reference_values or {}, {}
    if request.method == "POST":
        # A radio left checked under a question whose condition no longer holds is dropped,
        # as the coding page does; anything else wrong is named by its question.
        values = prune_not_applicable(version, parse_form_answers(version, request.POST))
        try:
            calibration.set_reference(item, values, request.user)
        except ValidationError as error:
            errors = as_errors(error)
        else:
            messages.success(request, _("Reference answer saved for %(key)s.")
                             % {"key": item.document.key})
            return redirect(after_reference(study, item))
    questions = form_questions(version, {"values": values}, errors)
    content = item.snapshot.content
    hidden = sorted(hidden_fields(study, content.get("kind")) & set(content))
    return render(request, "coding/calibration_reference.html", {
        "study": study, "item": item, "version": version, "questions": questions,
        "content": coder_view(study, content), "hidden": [(k, content[k]) for k in hidden],
        "errors": errors,
        "general_errors": [m for key, ms in errors.items()
                           if key not in {q.key for q in questions} for m in ms],
        "question_errors": sum(1 for q in questions if q.errors),
    }, status=400 if errors else 200)


def after_reference(study, item):
    """The next calibration item still without a reference answer, or the calibration page."""
    following = (Item.objects.alive().filter(study=study, round=Item.Round.CALIBRATION,
                                             reference_values__isnull=True)
                 .exclude(pk=item.pk).order_by("pk").values_list("pk", flat=True).first())
    if following:
        return reverse("calibration-reference", args=[study.slug, following])
    return reverse("calibration", args=[study.slug])


urlpatterns = [
    path("studies/<slug:slug>/calibration/", calibration_page, name="calibration"),
    path("studies/<slug:slug>/calibration/<int:item_id>/reference/", reference_page,
         name="calibration-reference"),
]

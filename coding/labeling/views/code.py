"""The coding page: next item, submit, skip, drafts, previous item.

Everything a coder receives here comes from their own assignment and the
blinded view of the item (coding.access.blinding.coder_view); nothing from other coders.
"""

import json
import uuid
from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from coding.access.blinding import coder_view
from coding.access.names import named_groups, namer
from coding.access.roles import access_assignment, access_study
from coding.actions.submit import submit
from coding.adjudication import decisions as adjudication
from coding.codebooks import translations as codebook_translations
from coding.codebooks.versions import link_conditions, number_shown, parse_form_answers
from coding.labeling import calibration, queue
from coding.labeling.codings import NotHeld, latest_coding, phase_for, save_draft
from coding.labeling.suggestions import attach_suggestions
from coding.models import Assignment, Role


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def code_next(request, slug):
    """GET: the item the coder holds, or a button that reserves the next one. Reserving
    changes state, so it takes a POST: a prefetching link or crawler reserves nothing."""
    study = access_study(request.user, slug, roles={Role.CODER})
    if request.method == "POST":
        return go_next(request, study)
    held = queue.current_assignment(study, request.user)
    if held is not None:
        return redirect("code-item", slug=slug, pk=held.pk)
    waiting = queue.coder_round(study, request.user) is None
    return render(request, "coding/code_done.html", {
        "study": study, "waiting_for_calibration": waiting, "start": not waiting,
        "nothing_left": request.GET.get("done") == "1",
        "score": calibration.score_shown(study, request.user) if waiting else None,
        "progress": progress(study, request.user, request),
    })


def go_next(request, study):
    """After a POST: reserve the next item and open it, or say nothing is left."""
    assignment = queue.next_item(study, request.user)
    if assignment is not None:
        return redirect("code-item", slug=study.slug, pk=assignment.pk)
    return redirect(reverse("code-next", args=[study.slug]) + "?done=1")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def code_item(request, slug, pk):
    study = access_study(request.user, slug, roles={Role.CODER})
    assignment = access_assignment(request.user, study, pk)
    version = assignment.item.codebook.current_version()
    form = {"values": {}, "notes": "", "evidence": [], "unsure": False}
    errors = {}
    status = 200
    if request.method == "POST":
        form, errors = posted_work(version, request.POST)
        try:
            if errors:
                raise ValidationError(errors)
            coding = submit(assignment, form["values"], notes=form["notes"],
                            evidence=form["evidence"], unsure=form["unsure"],
                            started_at=revision_start(assignment, request.POST),
                            submission=page_submission(request.POST))
        except ValidationError as error:
            errors, status = as_errors(error), 400
        except NotHeld as refused:
            # The answers stay on the page and were kept as the draft.
            errors, status = {"__all__": [str(refused)]}, 409
            assignment.refresh_from_db()
        else:
            if not getattr(coding, "repeated", False):
                count_in_sitting(request, study, assignment)
            return go_next(request, study)
    elif assignment.status == Assignment.Status.SUBMITTED:
        form = submitted_work(assignment) or form
    else:
        queue.extend_lease(assignment)
        form = assignment.draft or form
    context = page_context(study, assignment, version, form, errors, request)
    return render(request, "coding/code_item.html", context, status=status)


def as_errors(error):
    return error.message_dict if hasattr(error, "error_dict") else {"__all__": error.messages}


@login_required
@require_POST
def save_draft_view(request, slug, pk):
    study = access_study(request.user, slug, roles={Role.CODER})
    assignment = access_assignment(request.user, study, pk)
    work, errors = posted_work(assignment.item.codebook.current_version(), request.POST)
    try:
        if errors:
            raise ValidationError(errors)
        save_draft(assignment, work)
    except ValidationError as error:
        return HttpResponse(_("Draft not saved: %(problems)s")
                            % {"problems": "; ".join(error.messages)}, status=400)
    saved = _("Draft saved")  # as the page says it (code_item.html), then the time
    return HttpResponse(f"{saved} {timezone.localtime():%H:%M:%S}")


@login_required
@require_POST
def skip_item(request, slug, pk):
    study = access_study(request.user, slug, roles={Role.CODER})
    assignment = access_assignment(request.user, study, pk)
    try:
        queue.skip(assignment, request.POST.get("reason", ""))
    except ValueError as error:
        version = assignment.item.codebook.current_version()
        context = page_context(study, assignment, version, posted_work(version, request.POST)[0],
                               {"skip": [str(error)]}, request)
        return render(request, "coding/code_item.html", context, status=400)
    return go_next(request, study)


@login_required
@require_safe
def code_previous(request, slug):
    """The coder's most recently finished item before the given one (or their latest)."""
    study = access_study(request.user, slug, roles={Role.CODER})
    finished = (Assignment.objects.filter(item__study=study, coder=request.user,
                                          status__in=[Assignment.Status.SUBMITTED,
                                                      Assignment.Status.SKIPPED])
                .exclude(finished_at=None).order_by("-finished_at", "-pk"))
    before = request.GET.get("before")
    if before and before.isdigit():
        current = finished.filter(pk=before).first()
        if current:
            finished = finished.filter(finished_at__lt=current.finished_at)
    previous = finished.first()
    if previous is None:
        return redirect("code-next", slug=slug)
    return redirect("code-item", slug=slug, pk=previous.pk)


def posted_work(version, data):
    """(work, errors): the posted answers, notes and quotes, and what could not be read."""
    errors = {}
    try:
        evidence = json.loads(data.get("evidence") or "[]")
    except json.JSONDecodeError:
        evidence, errors["evidence"] = [], [_("the quotes could not be read (not JSON)")]
    if not isinstance(evidence, list) or not all(isinstance(q, dict) for q in evidence):
        evidence, errors["evidence"] = [], [_("the quotes must be a list of objects")]
    work = {"values": parse_form_answers(version, data), "notes": data.get("notes", ""),
            "evidence": evidence, "unsure": data.get("unsure") == "on"}
    return work, errors


def submitted_work(assignment):
    coding = latest_coding(assignment)
    if coding is None:
        return None
    return {"values": coding.values, "notes": coding.notes, "evidence": coding.evidence,
            "unsure": coding.unsure}


def page_submission(data):
    """The form's submission key, if it is one the page writes (32 hex digits)."""
    key = data.get("submission", "")
    return key if len(key) == 32 and all(c in "0123456789abcdef" for c in key) else ""


def revision_start(assignment, data):
    """Time spent on a revision counts from when the page was opened for it (`opened`, an
    ISO 8601 time with its zone, as the page sends it); anything else is a named error."""
    if assignment.status != Assignment.Status.SUBMITTED:
        return None
    raw = data.get("opened", "")
    if not raw:
        return timezone.now()  # not sent (a hand-made form): the time spent is unknown
    try:
        opened = datetime.fromisoformat(raw)
    except ValueError:
        raise ValidationError({"opened": _("not a date and time: %(given)r")
                               % {"given": raw[:40]}}) from None
    if timezone.is_naive(opened):
        raise ValidationError({"opened": _("give a date and time with its time zone")})
    return opened


# What code.js writes on the page, in the reader's language (sent as JSON).
JS_STRINGS = (
    gettext_noop("Show it in the text"), gettext_noop("remove"),
    gettext_noop("Select text in the item first, then press E."),
    gettext_noop("Quotes come from the title, abstract or posts."), gettext_noop("Saving draft…"),
    gettext_noop("Offline: your draft is kept in this browser and will be sent when you are back."),
    gettext_noop("The draft could not be saved on the server; it is kept in this browser."))


# A sitting ends after this long without a submission; the next one starts afresh.
SITTING_GAP = 30 * 60


def count_in_sitting(request, study, assignment):
    """This sitting's submissions and time, kept in the session (no query): the coding
    page shows them and estimates the time left from the coder's own pace."""
    now = timezone.now().timestamp()
    sitting = request.session.get("sitting") or {}
    if sitting.get("study") != study.pk or now - sitting.get("last", 0) > SITTING_GAP:
        sitting = {"study": study.pk, "count": 0, "seconds": 0.0}
    opened = assignment.opened_at.timestamp() if assignment.opened_at else now
    sitting.update(count=sitting["count"] + 1, last=now,
                   seconds=sitting["seconds"] + min(max(now - opened, 0), SITTING_GAP))
    request.session["sitting"] = sitting


def sitting_for(request, study):
    sitting = (request.session.get("sitting") if request is not None else None) or {}
    if sitting.get("study") != study.pk or timezone.now().timestamp() - sitting.get("last", 0) > SITTING_GAP:
        return None
    return sitting


def progress(study, coder, request=None):
    """The coder's own counts only: never anything derived from other coders' work.
    `left` is bounded (queue.left_for); `minutes_left` comes from this sitting's pace."""
    round_ = queue.coder_round(study, coder)
    # The counts of the round being coded, in one grouped query over the study's own
    # assignments; the item held now is one of those left (it is not done yet).
    mine = Assignment.objects.filter(study=study, coder=coder, status__in=[
        Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED, Assignment.Status.ACTIVE])
    if round_:
        mine = mine.filter(item__round=round_)
    counts = dict(mine.order_by().values_list("status").annotate(n=Count("*")))
    left = (queue.left_for(study, coder, round_) + counts.get(Assignment.Status.ACTIVE, 0)
            if round_ else 0)
    sitting = sitting_for(request, study)
    pace = sitting["seconds"] / sitting["count"] if sitting and sitting["count"] else None
    return {"submitted": counts.get(Assignment.Status.SUBMITTED, 0),
            "skipped": counts.get(Assignment.Status.SKIPPED, 0),
            "round": round_, "left": left, "left_capped": left >= 1000,
            "sitting": sitting and sitting["count"],
            "minutes_per_item": pace and round(pace / 60, 1),
            "minutes_left": round(pace * left / 60) if pace and left < 1000 else None}


def form_questions(version, form, errors):
    """The version's questions as coding/_question.html shows them: each with its answer
    from `form["values"]`, its errors and its quotes."""
    questions = list(version.questions.prefetch_related("options"))
    values = form.get("values", {})
    number_shown(questions, values)
    link_conditions(questions)
    for question in questions:
        question.show_if_json = json.dumps(question.show_if) if question.show_if else ""
        question.option_values = [o.value for o in question.options.all()]
        question.answer = values.get(question.key)
        question.answers = question.answer if isinstance(question.answer, list) else [question.answer]
        question.errors = [_("This question needs an answer.") if e == "required" else e
                           for e in errors.get(question.key, [])]
        question.quotes = [q for q in form.get("evidence", []) if q.get("question") == question.key]
    return questions


def page_context(study, assignment, version, form, errors, request=None):
    item = assignment.item
    name = namer(study, assignment.coder)
    content = coder_view(study, item.snapshot.content)
    questions = form_questions(version, form, errors)
    # The codebook's texts in the coder's language, the original one click away; the form's
    # values stay the option values whatever language the page is in.
    translated = codebook_translations.apply(version, questions, translation.get_language())
    shown_as = {q.key: q for q in questions}
    attach_suggestions(assignment, questions)  # an assisted round only; recorded as shown
    newer = item.document.snapshots.filter(number__gt=item.snapshot.number).exists()
    return {
        "study": study, "assignment": assignment, "item": item, "content": content,
        "questions": questions, "form": form, "errors": errors,
        # Errors not about one question, each named by its field (opened, notes, evidence).
        "general_errors": [message if key == "__all__" else f"{key}: {message}"
                           for key, messages in errors.items()
                           if key not in {q.key for q in questions} and key != "skip"
                           for message in messages],
        "evidence_json": json.dumps(form.get("evidence", [])),
        "js_strings": {text: _(text) for text in JS_STRINGS},
        "is_revision": assignment.status == Assignment.Status.SUBMITTED,
        "opened": timezone.now().isoformat(), "newer_snapshot": newer,
        # This page's submission key: sent twice (a double click, a resent form), it is
        # recorded once (coding.labeling.codings.append_revision).
        "submission": uuid.uuid4().hex,
        "progress": progress(study, assignment.coder, request),
        "error_summary": [(f"question-{q.key}", f"{q.number}. {q.tr.get('text') or q.text}"
                           if q.number else q.tr.get("text") or q.text, e)
                          for q in questions for e in q.errors],
        "codebook_translated": translated,
        "draft_saved_at": assignment.draft_saved_at,
        # Named as the form names them: in the coder's language where the codebook has it.
        "discussion": [(shown_as.get(q.key, q), named_groups(groups, name))
                       for q, groups in adjudication.discussion_for(assignment)],
        # What a revision would be recorded as: the coder is told before they submit.
        "revision_phase": phase_for(assignment) if assignment.status == Assignment.Status.SUBMITTED else None,
    }

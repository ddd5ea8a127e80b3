"""Reviewing disagreements: the queue, the side-by-side review page, coder feedback."""

import json
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_safe

from coding.access.blinding import coder_view, view_for
from coding.access.names import members_named, name_for, sees_names
from coding.access.roles import access_study
from coding.adjudication import decisions as adjudication
from coding.codebooks import translations as codebook_translations
from coding.codebooks.versions import parse_form_answers
from coding.labeling.codings import record_reads
from coding.labeling.queue import rebuilding
from coding.models import Decision, OthersWorkRead, Role

REVIEWERS = {Role.ADJUDICATOR, Role.OWNER}
FILTERS = ("question", "coders", "category", "status", "order")
PAGE_SIZE = 50
# Coder styles on the review page (review.css: by-0 … by-3), reused past four coders.
CODER_STYLES = 4


def queue_filters(request, study):
    """The review list's filters from the query string. `coders` are named as the reader
    is shown them: pseudonyms where the study hides names from them (an unknown name
    matches nothing)."""
    raw = {name: request.GET.get(name, "").strip() for name in FILTERS}
    coders = [c.strip() for c in raw["coders"].split(",") if c.strip()] or None
    if coders and not sees_names(study, study.my_roles):
        usernames = {pseudonym: user.username for user, pseudonym in members_named(study)}
        # A name not shown to them matches nothing: " " is no username (PostgreSQL
        # refuses a NUL in text, so that cannot stand in).
        coders = [usernames.get(c, " ") for c in coders]
    return {
        "question": raw["question"] or None, "coders": coders,
        "category": raw["category"] or None,
        "status": raw["status"] if raw["status"] in ("open", "decided", "all") else "open",
        "order": raw["order"] if raw["order"] in adjudication.ORDERS else "most",
    }, raw


def counted(total, exact):
    """The list's count as the review page shows it: exact (from the tallies, or up to
    10,000 rows counted), and past that "more than 10,000" (disagreement_count)."""
    return {"total": total, "total_exact": exact,
            "total_shown": f"{total if exact else total - 1:,}"}


DAY_COUNTED = 1000


def decided_today(study, user):
    n = Decision.objects.filter(
        item__study=study, decided_by=user, method=Decision.Method.ADJUDICATED,
        decided_at__gte=timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0),
    ).order_by()[:DAY_COUNTED + 1].count()
    return {"decided_today": min(n, DAY_COUNTED), "decided_today_more": n > DAY_COUNTED}


@login_required
@require_safe
def review_queue(request, slug):
    study = access_study(request.user, slug, roles=REVIEWERS)
    filters, raw = queue_filters(request, study)
    shown_name = name_for(study, study.my_roles)
    after = request.GET.get("after", "")
    try:
        rows = adjudication.disagreements(study, after=after, limit=PAGE_SIZE + 1, **filters)
    except ValueError:
        return HttpResponseBadRequest(_("after: not a page token of this list; start from its "
                                        "first page."))
    page, more = rows[:PAGE_SIZE], len(rows) > PAGE_SIZE
    codebook_translations.apply_to_questions([row.question for row in page],
                                             translation.get_language())
    kept = request.GET.copy()
    kept.pop("after", None)
    if more:
        kept["after"] = page[-1].token
    return render(request, "coding/review_queue.html", {
        "study": study, "rows": page, "raw": raw, "filters": filters, "shown_name": shown_name,
        # Counted up to 10,000, as the disagreements API counts (workbench.paging).
        **counted(*adjudication.disagreement_count(study, **filters)),
        "next_query": kept.urlencode() if more else "", "first_page": not after,
        "codebook_translated": any(row.question.tr for row in page),
        "first_query": urlencode({k: v for k, v in raw.items() if v}),
        "orders": adjudication.ORDERS, "question_choices": question_choices(study),
        "statuses": ("open", "decided", "all"),
        # The reviewer's own day: decisions they recorded since midnight, counted up to
        # DAY_COUNTED (a person's day is far fewer; a bulk load's is not, and counting
        # all of it took 300 ms at 1M items); what those ruled in or out through
        # conditions is not a decision of its own.
        **decided_today(study, request.user),
        "query": request.GET.urlencode(),
        "rebuilding": rebuilding(study),  # after an overlap change (coding.labeling.queue.sync_targets)
    })


def question_choices(study):
    """(key, text) of every question in the study's codebooks' current versions, the text
    in the reader's language where the codebook has it."""
    choices, language = set(), translation.get_language()
    for codebook in study.codebooks.all():
        version = codebook.current_version()
        if version is not None:
            choices |= {(key, codebook_translations.label(version, key, text, language))
                        for key, text in version.questions.values_list("key", "text")}
    return sorted(choices)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def review_item(request, slug, item_id):
    study = access_study(request.user, slug, roles=REVIEWERS)
    item = get_object_or_404(study.items.alive().select_related("snapshot", "codebook", "document"),
                             pk=item_id)
    questions = adjudication.questions_of(item)
    errors, left_open = {}, []
    if request.method == "POST":
        # All of the form's decisions or none: a refused page comes back with every choice
        # kept, and posting it again must not record the accepted ones twice.
        with transaction.atomic():
            errors, recorded = record_decisions(item, questions, request)
            # Deciding some questions and leaving others open is asked first: the page
            # comes back with the choices kept, naming what would stay open, and its
            # confirm button posts them again with `partial`.
            if not errors and recorded and not request.POST.get("partial"):
                left_open = still_open(item, questions)
            if errors or left_open:
                transaction.set_rollback(True)
        if not errors and not left_open:
            return redirect(next_review_url(study, item, request))
    record_reads(study, request.user, OthersWorkRead.Kind.REVIEW, [item.pk])
    context = review_context(study, item, questions, errors, request)
    context["left_open"] = left_open
    return render(request, "coding/review_item.html", context, status=400 if errors else 200)


def still_open(item, questions):
    """The item's questions its stored disagreements still hold open, in codebook order:
    the review list's own open set for the item."""
    keys = set(item.disagreements.filter(decided=False)
               .values_list("question_key", flat=True))
    return [q for q in questions if q.key in keys]


def record_decisions(item, questions, request):
    """Decide each question the form chose a value for: (errors keyed by question, how
    many were recorded)."""
    others = parse_form_answers(item.codebook.current_version(), request.POST)
    errors, recorded = {}, 0
    for question in questions:
        choice = request.POST.get(f"d-{question.key}", "")
        if not choice:
            continue
        try:
            value = others.get(question.key) if choice == "other" else json.loads(choice)
        except json.JSONDecodeError:
            errors[question.key] = [_("Choose one of the values offered.")]
            continue
        if choice == "other" and value in (None, "", []):
            errors[question.key] = [_("Enter the other value, or choose one of the coders' values.")]
            continue
        try:
            adjudication.decide(item, question.key, value, request.user,
                                request.POST.get(f"why-{question.key}", ""))
            recorded += 1
        except ValidationError as error:
            errors.update(error.message_dict)
        except PermissionDenied as error:
            errors["__all__"] = [str(error)]
            break
    return errors, recorded


def next_review_url(study, item, request):
    """The next open disagreement in the queue as filtered, or the queue itself."""
    filters, _ = queue_filters(request, study)
    filters["status"] = "open"
    query = request.GET.urlencode()
    rows = adjudication.disagreement_query(study, **filters).exclude(item=item)
    if not study.allow_self_adjudication:  # can_decide's rule, as a filter
        rows = rows.exclude(item__assignments__coder=request.user)
    following = rows.values_list("item_id", flat=True).first()
    if following is not None:
        return reverse("review-item", args=[study.slug, following]) + (f"?{query}" if query else "")
    return reverse("review-queue", args=[study.slug]) + (f"?{query}" if query else "")


def waits_on(question, decisions, by_key):
    """(parent question, its decided value) when the parent's decision makes this
    question apply and it has no decision of its own yet: the page says it waits."""
    condition = question.show_if
    parent = condition and decisions.get(condition["question"])
    if not parent or not adjudication.decided(parent) \
            or parent.method == Decision.Method.NOT_APPLICABLE:
        return None
    if adjudication.decided(decisions.get(question.key)):
        return None
    if not adjudication.is_shown(question, {condition["question"]: parent.value}):
        return None
    return by_key.get(condition["question"]), parent.value


def review_context(study, item, questions, errors, request):
    codings = adjudication.gather([item])[item.pk]
    # In the order of the names this reviewer is shown (pseudonyms where names are hidden:
    # an order by username would tell them apart).
    shown_name = name_for(study, study.my_roles)
    coders = sorted(codings.independent, key=shown_name)
    decisions = {q.key: adjudication.current_decision(item, q.key) for q in questions}
    # After a refused POST the page comes back as the reviewer left it: each choice, the
    # other value typed and the rationale (nothing typed is lost).
    posted = request.POST if request.method == "POST" else {}
    others = parse_form_answers(item.codebook.current_version(), posted) if posted else {}
    rows, by_key = [], {q.key: q for q in questions}
    # Questions no coder was shown that may apply after all wait on the list too, with
    # only "another value" to choose (adjudication.waiting).
    waits = adjudication.waiting(questions, codings, decisions)
    for question in questions:
        groups = [(value, sorted(group, key=shown_name))
                  for value, group in adjudication.group_answers(codings.independent, question)]
        question.answer = others.get(question.key)
        question.answers = question.answer if isinstance(question.answer, list) else [question.answer]
        question.option_values = [o.value for o in question.options.all()]
        rows.append({
            "question": question, "groups": groups,
            "differs": len(groups) > 1 or question.key in waits,
            "choices": [(json.dumps(value), value, group) for value, group in groups
                        if value not in (adjudication.NOT_APPLICABLE, adjudication.MISSING)],
            "cells": [adjudication.answer(codings.independent[c], question) for c in coders],
            "revised": ([adjudication.answer(codings.latest[c], question) for c in coders]
                        if item.discussion_opened_at else None),
            "decision": decisions[question.key], "errors": errors.get(question.key, []),
            "chosen": posted.get(f"d-{question.key}", ""), "why": posted.get(f"why-{question.key}", ""),
            "history": list(item.decisions.filter(question_key=question.key)
                            .order_by("-revision").select_related("decided_by")),
            "waits_on": waits_on(question, decisions, by_key),
        })
    # The item as coders saw it, and apart from it whatever blinded fields this
    # reviewer's roles may see (blinding.view_for, the projection every export uses too).
    content = coder_view(study, item.snapshot.content)
    hidden = {key: value for key, value in view_for(study, study.my_roles, item.snapshot.content).items()
              if key not in content}
    # Each coder's quotes, listed under the item and marked in its text by review.js: one
    # colour and underline style per coder (`by`, in name order; the legend numbers them),
    # the question named. A coder's page never gets these (coding.labeling.views.code reads the
    # coder's own evidence only).
    # The codebook's texts in the reader's language, the original one click away (as on
    # the coding page); decisions still store the option values.
    translated = codebook_translations.apply(item.codebook.current_version(), questions,
                                             translation.get_language())
    for n, coder in enumerate(coders):
        coding = codings.independent[coder]
        coding.by, coding.number = n % CODER_STYLES, n + 1
        coding.quotes = [{**quote, "q": by_key.get(quote.get("question"))}
                         for quote in coding.evidence if isinstance(quote, dict)]
    return {
        "study": study, "item": item, "content": content, "hidden": hidden, "coders": coders,
        "differing": any(row["differs"] for row in rows),
        "codings": [codings.independent[c] for c in coders], "rows": rows,
        "quoted": any(codings.independent[c].quotes for c in coders),
        "errors": errors.get("__all__", []),
        "error_summary": [(f"question-{row['question'].key}",
                           row["question"].tr.get("text") or row["question"].text, message)
                          for row in rows for message in row["errors"]],
        "codebook_translated": translated,
        "can_decide": adjudication.can_decide(item, request.user),
        "query": request.GET.urlencode(), "shown_name": shown_name,
    }


@login_required
@require_safe
def feedback(request, slug):
    """A coder's differences from the final decisions, when the study allows it."""
    study = access_study(request.user, slug, roles={Role.CODER})
    page = Paginator(adjudication.feedback_for(study, request.user), PAGE_SIZE).get_page(
        request.GET.get("page"))
    adjudication.feedback_shown(page.object_list)
    codebook_translations.apply_to_questions([row["question"] for row in page.object_list],
                                             translation.get_language())
    return render(request, "coding/feedback.html", {
        "study": study, "rows": page, "page": page,
        "codebook_translated": any(row["question"].tr for row in page.object_list)})

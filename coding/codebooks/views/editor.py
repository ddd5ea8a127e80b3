"""The codebook editor: drafts, publishing, version diffs, live preview: pages.

The editor is one server-rendered form. Its structural actions (add, remove, move a
question or an option, choose a condition's question) are submit buttons named `op`:
the server reads the whole form, applies the action and renders the form again,
saving nothing; htmx makes that a swap of the form, and without JavaScript it is a plain
POST. Only `op=save` writes, through coding.codebooks.spec (all or nothing).

Fields are named by a token per question and per option (`q-<t>-key`,
`q-<t>-o-<u>-value`) and the lists `question` and `q-<t>-option` give their order, so
moving a card in the page (drag and drop) reorders what is posted.
"""

import json
import re
from types import SimpleNamespace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop, ngettext, pgettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from coding.access.roles import access_study
from coding.actions.publish import publish_draft
from coding.codebooks.diff import is_empty
from coding.codebooks.editing import (
    OPEN_ASSIGNMENTS, Conflict, InvalidSpec, NothingToPublish, draft_of, new_codebook, revision,
    save_spec, start_draft, version_diff,
)
from coding.codebooks.spec import spec_of, validate
from coding.codebooks.versions import default_level, link_conditions, number_shown
from coding.models import Assignment, Codebook, Question, Role
from coding.models.codebooks import adjudicated_by_default
from coding.templatetags.codebook_diff import APPLIES_WORDS, KIND_WORDS, LEVEL_WORDS

TOKEN = re.compile(r"[a-z0-9]{1,12}")
WITH_OPTIONS = {"single", "multiple", "number"}
QUESTION_TEXT = ("key", "text", "definition", "unit")
OPTION_TEXT = ("value", "label", "definition", "examples", "counter_examples", "shortcut")
# questions[2].options[0].value, questions[1].show_if.in: question, option, field.
PATH = re.compile(r"questions\[(\d+)\](?:\.options\[(\d+)\])?(?:\.(\w+))?(?:\.\w+)?")
OWNERS = {Role.OWNER}


# --- the form as a spec, and back -------------------------------------------------------

def parse_form(data):
    """(spec, tokens) from a posted editor form; tokens is [(question token, [option
    tokens])] in the spec's order. Nothing is checked here but the shape of the names."""
    spec = {"name": data.get("name", "").strip(), "applies_to": data.get("applies_to", ""),
            "description": data.get("description", "").strip(), "questions": []}
    tokens = []
    for t in _tokens(data.getlist("question")):
        p = f"q-{t}-"
        q = {field: data.get(p + field, "").strip() for field in QUESTION_TEXT}
        kind = data.get(p + "kind", "")
        adjudicated = data.get(p + "adjudicated") == "on"
        q.update(kind=kind, level=data.get(p + "level", "nominal"),
                 required=data.get(p + "required") == "on",
                 # Kept only where the owner departs from the kind's way (Question.adjudicated).
                 adjudicated=None if adjudicated == adjudicated_by_default(kind) else adjudicated,
                 min_value=_number(data.get(p + "min_value", "")),
                 max_value=_number(data.get(p + "max_value", "")), show_if=None, options=[])
        if kind != "number":  # hidden for other kinds, so never sent on
            q.update(min_value=None, max_value=None, unit="")
        elif q["level"] == "nominal":
            # A kind changed to Number keeps no nominal level (numbers are not categories):
            # the kind's own default, which the owner may change.
            q["level"] = default_level(kind)
        parent = data.get(p + "show_if_question", "")
        if parent:
            q["show_if"] = {"question": parent, "in": data.getlist(p + "show_if_in")}
        option_tokens = _tokens(data.getlist(p + "option")) if kind in WITH_OPTIONS else []
        kept = []
        for u in option_tokens:
            o = {field: data.get(f"{p}o-{u}-{field}", "").strip() for field in OPTION_TEXT}
            # A number's special answers are optional: a row left empty (the one a new
            # question starts with, kept through a change of kind) is no answer at all.
            if kind == "number" and not any(o.values()):
                continue
            o["label"] = o["label"] or o["value"]
            o["exclusive"] = data.get(f"{p}o-{u}-exclusive") == "on"
            q["options"].append(o)
            kept.append(u)
        spec["questions"].append(q)
        tokens.append((t, kept))
    return spec, tokens


def _tokens(posted):
    seen = []
    for t in posted:
        if TOKEN.fullmatch(t) and t not in seen:
            seen.append(t)
    return seen[:500]


def _number(raw):
    raw = raw.strip().replace(",", ".")
    if not raw:
        return None
    try:
        number = float(raw)
    except ValueError:
        return raw  # the validator names it: "a finite number or null"
    return int(number) if number.is_integer() and "." not in raw and "e" not in raw.lower() else number


def fresh_tokens(spec):
    return [(f"q{i}", [f"o{j}" for j in range(len(q.get("options") or []))])
            for i, q in enumerate(spec["questions"])]


def _new_token(taken, prefix):
    n = len(taken)
    while f"{prefix}{n}" in taken:
        n += 1
    return f"{prefix}{n}"


def blank_question(kind="single"):
    return {"key": "", "text": "", "kind": kind, "definition": "", "level": default_level(kind),
            "required": True, "unit": "", "min_value": None, "max_value": None,
            "show_if": None, "options": [blank_option()]}


def blank_option():
    return {"value": "", "label": "", "definition": "", "examples": "",
            "counter_examples": "", "shortcut": "", "exclusive": False}


def apply_op(op, spec, tokens):
    """Apply a structural action ('add_question', 'up:q3', 'remove_option:q3:o1', …) to
    the parsed form; returns the id of the field to put the cursor in next, or None (a
    move keeps it on the button pressed)."""
    name, _, rest = op.partition(":")
    args = rest.split(":") if rest else []
    questions, index = spec["questions"], [t for t, _ in tokens]
    if name == "add_question":
        token = _new_token(index, "n")
        questions.append(blank_question())
        tokens.append((token, ["o0"]))
        return f"q-{token}-key"
    if not args or args[0] not in index:
        return None
    i, t = index.index(args[0]), args[0]
    if name in ("up", "down"):
        j = i - 1 if name == "up" else i + 1
        if 0 <= j < len(questions):
            questions[i], questions[j] = questions[j], questions[i]
            tokens[i], tokens[j] = tokens[j], tokens[i]
        return None
    if name == "remove_question":
        del questions[i], tokens[i]
        return "add-question"
    if name == "add_option":
        questions[i]["options"].append(blank_option())
        u = _new_token(tokens[i][1], "o")
        tokens[i][1].append(u)
        return f"q-{t}-o-{u}-value"
    if len(args) == 2 and args[1] in tokens[i][1]:
        options, option_tokens = questions[i]["options"], tokens[i][1]
        k = option_tokens.index(args[1])
        if name == "remove_option":
            del options[k], option_tokens[k]
            return f"{t}-add-option"
        if name in ("option_up", "option_down"):
            m = k - 1 if name == "option_up" else k + 1
            if 0 <= m < len(options):
                options[k], options[m] = options[m], options[k]
                option_tokens[k], option_tokens[m] = option_tokens[m], option_tokens[k]
    return None


def located(errors):
    """{path: [messages]} from SpecErrors."""
    found = {}
    for error in errors:
        found.setdefault(error.path, []).append(error.message)
    return found


def cards(spec, tokens, errors):
    """What the template draws: each question with its token, options, located errors,
    the earlier questions a condition may name and the answers it may tick."""
    by_question, general, summary = {}, [], []
    for where, texts in errors.items():
        match = PATH.fullmatch(where)
        if where in ("name", "description"):
            continue  # shown beside their fields
        if match is None:
            general += [f"{where}: {m}" if where not in ("", "questions") else m for m in texts]
            continue
        slot = by_question.setdefault(int(match[1]), {"fields": {}, "options": {}})
        if match[2] is None:
            slot["fields"].setdefault(match[3] or "question", []).extend(texts)
        else:
            option = slot["options"].setdefault(int(match[2]), {})
            option.setdefault(match[3] or "option", []).extend(texts)
    rows = []
    for i, (q, (token, option_tokens)) in enumerate(zip(spec["questions"], tokens)):
        slot = by_question.get(i, {"fields": {}, "options": {}})
        _summarise(summary, i, q, token, option_tokens, slot)
        earlier = spec["questions"][:i]
        condition = q.get("show_if") or {}
        parent = next((p for p in spec["questions"] if p.get("key") == condition.get("question")),
                      None)
        rows.append(SimpleNamespace(
            token=token, q=q, number=i + 1, errors=slot["fields"],
            has_errors=bool(slot["fields"] or slot["options"]),
            options=[SimpleNamespace(token=u, o=o, errors=slot["options"].get(k, {}),
                                     messages=_option_messages(slot["options"].get(k, {})))
                     for k, (o, u) in enumerate(zip(q.get("options") or [], option_tokens))],
            earlier=[(p.get("key"), p.get("text")) for p in earlier if p.get("key")
                     and p.get("kind") in ("single", "multiple", "yes_no", "number")],
            condition_question=condition.get("question", ""),
            condition_later=bool(condition) and condition.get("question") not in
            [p.get("key") for p in earlier],
            condition_answers=_answers_of(parent, condition.get("in") or []),
        ))
    return rows, general, summary


QUESTION_WORDS = {"key": gettext_lazy("Key"), "kind": gettext_lazy("Kind"),
                  "level": gettext_lazy("Level"), "text": gettext_lazy("Question"),
                  "definition": gettext_lazy("Definition"), "min_value": gettext_lazy("Minimum"),
                  "max_value": gettext_lazy("Maximum"), "unit": gettext_lazy("Unit"),
                  "options": gettext_lazy("Options"), "show_if": gettext_lazy("Condition")}


def _summarise(summary, i, q, token, option_tokens, slot):
    """Each problem of question i for the list at the top: (anchor, where, message), where
    names the question by its number and key and the option by its place and value."""
    name = _("Question %(number)s (%(key)s)") % {"number": i + 1, "key": q.get("key") or "–"}
    for field, texts in slot["fields"].items():
        for text in texts:
            summary.append((f"card-{token}", name, f"{QUESTION_WORDS.get(field, '')}: {text}"
                            if field in QUESTION_WORDS else text))
    for k, fields in sorted(slot["options"].items()):
        if k >= len(option_tokens):
            continue
        option = (q.get("options") or [])[k]
        place = (_("special answer %(n)s") if q.get("kind") == "number" else
                 _("option %(n)s")) % {"n": k + 1}
        if option.get("value"):
            place += f" ({option['value']})"
        for field, texts in fields.items():
            for text in texts:
                summary.append((f"card-{token}-{option_tokens[k]}", f"{name}, {place}",
                                f"{OPTION_WORDS[field]}: {text}" if field in OPTION_WORDS
                                else text))


# An option's fields as its row names them.
OPTION_WORDS = {"value": gettext_lazy("Value"), "label": gettext_lazy("Label"),
                "shortcut": pgettext_lazy("keyboard key", "Key"), "exclusive": gettext_lazy("Alone"),
                "definition": gettext_lazy("Definition"), "examples": gettext_lazy("Example"),
                "counter_examples": gettext_lazy("Counter-example")}

# What codebook_editor.js writes on the page, in the reader's language (sent as JSON).
JS_STRINGS = (
    gettext_noop("Saving…"), gettext_noop("Unsaved changes"),
    gettext_noop("Not sent: the server did not answer. Your edits are still in the form."),
    gettext_noop("Save the draft first: publishing takes the saved draft."))


def _option_messages(errors):
    return [f"{OPTION_WORDS[field]}: {text}" if field in OPTION_WORDS else text
            for field, texts in errors.items() for text in texts]


def _answers_of(parent, ticked):
    if parent is None:
        return []
    if parent.get("kind") == "yes_no":
        choices = [("yes", _("Yes")), ("no", _("No"))]
    else:
        choices = [(o.get("value"), o.get("label") or o.get("value"))
                   for o in parent.get("options") or [] if o.get("value")]
    known = {value for value, _ in choices}
    choices += [(value, _("%(value)s (no longer an answer)") % {"value": value})
                for value in ticked if value not in known]
    return [SimpleNamespace(value=v, label=label, ticked=v in ticked) for v, label in choices]


# --- the preview: the coding page's widgets, from the draft ------------------------------

class Options(list):
    def all(self):
        return self


def preview_questions(spec):
    """Question-like objects for coding/_answer_widget.html, as coding.labeling.views.code builds
    them for a coder who has answered nothing yet."""
    found = []
    for q in spec["questions"]:
        options = Options(SimpleNamespace(**o) for o in q.get("options") or []
                          if isinstance(o, dict))
        condition = q.get("show_if")
        found.append(SimpleNamespace(
            key=q.get("key", ""), text=q.get("text", ""), kind=q.get("kind", ""),
            definition=q.get("definition", ""), required=q.get("required", True),
            unit=q.get("unit", ""), min_value=q.get("min_value"), max_value=q.get("max_value"),
            show_if=condition, show_if_json=json.dumps(condition) if condition else "",
            options=options, option_values=[o.value for o in options],
            answer=None, answers=[None], errors=[], quotes=[]))
    number_shown(found, {})
    link_conditions(found)
    return found


# --- pages ------------------------------------------------------------------------------

def access_codebook(user, slug, codebook_id, roles=None):
    study = access_study(user, slug, roles=roles)
    return study, get_object_or_404(study.codebooks, pk=codebook_id)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def codebook_list(request, slug):
    """The study's codebooks, each with its versions; owners make a new one here."""
    study = access_study(request.user, slug)
    is_owner = Role.OWNER in study.my_roles
    form = {"name": "", "applies_to": "paper", "description": ""}
    errors, status = {}, 200
    if request.method == "POST":
        if not is_owner:
            access_study(request.user, slug, roles=OWNERS)  # 403
        form = {field: request.POST.get(field, "").strip() for field in form}
        try:
            codebook = new_codebook(study, request.user, **form)
        except InvalidSpec as invalid:
            errors, status = invalid.as_dict(), 400
        else:
            messages.success(request, _("%(name)s made: add its questions, then publish v1.")
                             % {"name": codebook.name})
            return redirect("codebook-edit", slug=slug, codebook_id=codebook.pk)
    codebooks = list(study.codebooks.prefetch_related("versions").order_by("name", "pk"))
    for codebook in codebooks:
        codebook.version_list = sorted(codebook.versions.all(), key=lambda v: v.number)
        newest = codebook.version_list[-1] if codebook.version_list else None
        codebook.draft = newest if newest is not None and not newest.is_published else None
        codebook.published = [v for v in codebook.version_list if v.is_published]
    return render(request, "coding/codebook_list.html", {
        "study": study, "codebooks": codebooks, "is_owner": is_owner, "form": form,
        "errors": errors,
        "applies_to": [(value, APPLIES_WORDS[value]) for value in Codebook.AppliesTo.values],
    }, status=status)


@login_required
@require_POST
def codebook_start_draft(request, slug, codebook_id):
    """Start editing: the codebook's draft, made from its newest version if needed."""
    codebook = access_codebook(request.user, slug, codebook_id, roles=OWNERS)[1]
    draft, made = start_draft(codebook, request.user)
    if made:
        messages.success(request, _("Draft v%(number)s started from v%(previous)s; coders keep "
                                    "v%(previous)s until you publish.")
                         % {"number": draft.number, "previous": draft.number - 1})
    return redirect("codebook-edit", slug=slug, codebook_id=codebook.pk)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def codebook_edit(request, slug, codebook_id):
    study, codebook = access_codebook(request.user, slug, codebook_id, roles=OWNERS)
    draft = draft_of(codebook)
    if draft is None:
        return render(request, "coding/codebook_no_draft.html", {
            "study": study, "codebook": codebook, "current": codebook.current_version()},
            status=409 if request.method == "POST" else 200)
    context = {"study": study, "codebook": codebook, "draft": draft, "saved": None,
               "focus": None, "conflict": None}
    status = 200
    if request.method == "POST":
        spec, tokens = parse_form(request.POST)
        spec["applies_to"] = codebook.applies_to
        op = request.POST.get("op", "refresh")
        base = request.POST.get("base", "")[:64]
        errors = {}
        if op in ("save", "overwrite"):
            try:
                save_spec(draft, request.user, spec, base=base if op == "save" and base else None)
            except InvalidSpec as invalid:
                errors, status = located(invalid.errors), 400
            except Conflict as conflict:
                context["conflict"], status = str(conflict), 409
            else:
                context["saved"] = draft
                base = revision(spec_of(draft))
                if not request.htmx:
                    messages.success(request, _("Draft v%(number)s saved.") % {"number": draft.number})
                    return redirect("codebook-edit", slug=slug, codebook_id=codebook.pk)
        else:
            context["focus"] = apply_op(op, spec, tokens)
    else:
        spec = spec_of(draft)
        tokens = fresh_tokens(spec)
        errors, base = {}, revision(spec)
    context["base"] = base
    rows, general, summary = cards(spec, tokens, errors)
    context.update(spec=spec, rows=rows, general_errors=general, errors=errors,
                   error_summary=summary,
                   preview=preview_questions(spec),
                   kinds=[(value, KIND_WORDS[value]) for value in Question.Kind.values],
                   levels=[(value, LEVEL_WORDS[value]) for value in Question.Level.values],
                   js_strings={text: _(text) for text in JS_STRINGS})
    if request.htmx:
        # htmx swaps only 2xx answers: the errors come back as a form to show, with 200.
        return render(request, "coding/codebook_editor_form.html", context)
    return render(request, "coding/codebook_edit.html", context, status=status)


@login_required
@require_POST
def codebook_preview(request, slug, codebook_id):
    """The coding page's question widgets for the form as it stands (nothing is saved)."""
    codebook = access_codebook(request.user, slug, codebook_id, roles=OWNERS)[1]
    spec = parse_form(request.POST)[0]
    return render(request, "coding/codebook_preview.html",
                  {"preview": preview_questions(spec)})


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def codebook_publish(request, slug, codebook_id):
    study, codebook = access_codebook(request.user, slug, codebook_id, roles=OWNERS)
    draft = draft_of(codebook)
    if draft is None:
        raise Http404(_("%(name)s has no draft to publish.") % {"name": codebook.name})
    form = {"note": "", "open_assignments": "switch"}
    errors, status = {}, 200
    if request.method == "POST":
        form = {"note": request.POST.get("note", ""),
                "open_assignments": request.POST.get("open_assignments", "")}
        number = request.POST.get("number", "")
        try:
            version, counts = publish_draft(codebook, request.user, form["note"],
                                            form["open_assignments"],
                                            number=int(number) if number.isdigit() else None)
        except InvalidSpec as invalid:
            errors, status = located(invalid.errors), 400
        except NothingToPublish as gone:
            messages.error(request, str(gone))
            return redirect("codebook-list", slug=slug)
        else:
            messages.success(request, published_message(version, counts))
            return redirect("codebook-version", slug=slug, codebook_id=codebook.pk,
                            number=version.number)
    spec = spec_of(draft)
    spec_errors = validate(spec, publishing=True)
    changes = version_diff(draft)
    return render(request, "coding/codebook_publish.html", {
        "study": study, "codebook": codebook, "draft": draft, "form": form, "errors": errors,
        "field_errors": {k: v for k, v in errors.items() if k in ("note", "open_assignments")},
        "spec_errors": spec_errors, "diff": changes, "empty_diff": is_empty(changes),
        "open_count": Assignment.objects.filter(item__codebook=codebook,
                                                status=Assignment.Status.ACTIVE).count(),
        "choices": {value: _(text) for value, text in OPEN_ASSIGNMENTS.items()},
    }, status=status)


def published_message(version, counts):
    done = _("v%(number)s published: new codings answer it.") % {"number": version.number}
    if counts["released"]:
        done += " " + ngettext("%(count)s open item went back to the pool.",
                               "%(count)s open items went back to the pool.",
                               counts["released"]) % {"count": counts["released"]}
    if counts["drafts_pruned"]:
        done += " " + ngettext(
            "%(count)s coder draft dropped answers the new version no longer has.",
            "%(count)s coder drafts dropped answers the new version no longer has.",
            counts["drafts_pruned"]) % {"count": counts["drafts_pruned"]}
    return done


urlpatterns = [
    path("studies/<slug:slug>/codebooks/", codebook_list, name="codebook-list"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/draft/", codebook_start_draft,
         name="codebook-start-draft"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/edit/", codebook_edit,
         name="codebook-edit"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/edit/preview/", codebook_preview,
         name="codebook-preview"),
    path("studies/<slug:slug>/codebooks/<int:codebook_id>/publish/", codebook_publish,
         name="codebook-publish"),
]

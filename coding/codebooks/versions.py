"""Building, versioning and checking answers against codebooks."""

import functools
import math
import re

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from coding.access.limits import TEXT_ANSWER_MAX_CHARS, check_key, too_long
from coding.codebooks import translations as codebook_translations
from coding.models import Codebook, CodebookVersion, Option, Question, Role
from workbench.prepared import Slot, Statement
from workbench.text import find_in_json

YES_NO = ("yes", "no")

# Characters no text column or JSON value can keep: NUL (PostgreSQL refuses it in text and
# jsonb) and lone surrogates (not characters at all: they cannot be written as UTF-8).
# Both arrive only as JSON escapes, "\u0000" or "\ud800".
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_text(value):
    """Why some text in a JSON-like value (keys included) cannot be stored, or None."""
    found = find_in_json(value, UNSTORABLE)
    if found is None:
        return None
    char = found[1].group()
    what = gettext("a NUL character") if char == "\x00" else gettext("a lone surrogate")
    return gettext("text may not contain %(what)s (U+%(code)s)") % {
        "what": what, "code": f"{ord(char):04X}"}


def default_level(kind):
    """A question's level of measurement when its spec names none: ratio for numbers (a
    count or a size), nominal for the rest."""
    return Question.Level.RATIO if kind == "number" else Question.Level.NOMINAL


@transaction.atomic
def create_codebook(study, spec, user=None):
    """Create a codebook from a spec (see coding.studies.presets) with version 1 published."""
    codebook = Codebook.objects.create(
        study=study, name=spec["name"], applies_to=spec["applies_to"],
        description=spec.get("description", ""),
    )
    version = CodebookVersion.objects.create(
        codebook=codebook, number=1, created_by=user, note="First version.",
        translations=codebook_translations.normalized(spec.get("translations")),
    )
    add_questions(version, spec["questions"])
    publish(version)
    return codebook


def add_questions(version, question_specs):
    for position, q in enumerate(question_specs):
        question = Question.objects.create(
            version=version, key=q["key"], text=q["text"], kind=q["kind"],
            definition=q.get("definition", ""), required=q.get("required", True),
            level=q.get("level") or default_level(q["kind"]), show_if=q.get("show_if"),
            min_value=q.get("min_value"), max_value=q.get("max_value"),
            unit=q.get("unit", ""), position=position, adjudicated=q.get("adjudicated"),
        )
        Option.objects.bulk_create(
            Option(
                question=question, value=o["value"], label=o.get("label", o["value"]),
                definition=o.get("definition", ""), examples=o.get("examples", ""),
                counter_examples=o.get("counter_examples", ""), shortcut=o.get("shortcut", ""),
                exclusive=o.get("exclusive", False), position=i,
            )
            for i, o in enumerate(q.get("options", []))
        )


def publish(version):
    CodebookVersion.objects.filter(pk=version.pk).update(
        status=CodebookVersion.Status.PUBLISHED, published_at=timezone.now()
    )
    version.refresh_from_db()


def question_spec(question):
    return {
        "key": question.key, "text": question.text, "kind": question.kind,
        "definition": question.definition, "required": question.required,
        "level": question.level, "show_if": question.show_if,
        "min_value": question.min_value, "max_value": question.max_value,
        "unit": question.unit,
        **({"adjudicated": question.adjudicated} if question.adjudicated is not None else {}),
        "options": [
            {"value": o.value, "label": o.label, "definition": o.definition,
             "examples": o.examples, "counter_examples": o.counter_examples,
             "shortcut": o.shortcut, "exclusive": o.exclusive}
            for o in question.options.all()
        ],
    }


@transaction.atomic
def draft_new_version(codebook, user=None, note=""):
    """Copy the newest version into a new draft that can be edited freely."""
    latest = codebook.versions.order_by("-number").first()
    draft = CodebookVersion.objects.create(
        codebook=codebook, number=latest.number + 1, created_by=user, note=note,
        translations=latest.translations,
    )
    add_questions(draft, [question_spec(q) for q in latest.questions.prefetch_related("options")])
    return draft


_CURRENT_VERSION = Statement(CodebookVersion, lambda codebook: (
    CodebookVersion.objects.filter(codebook_id=codebook, status=CodebookVersion.Status.PUBLISHED)
    .order_by("-number").values_list("pk", "published_at")[:1]), Slot("codebook"))


def readable_versions(versions, roles):
    """The versions (a queryset) a person holding these roles may read: every one for an
    owner, the published ones for everyone else (a draft may still change, and a coder
    must not read tomorrow's questions or definitions before they are in force)."""
    if Role.OWNER in roles:
        return versions
    return versions.filter(status=CodebookVersion.Status.PUBLISHED)


def published_version(codebook_id):
    """The codebook's newest published version (Codebook.current_version), with its questions
    and options read once per process: one small statement finds which version is current,
    and a published version never changes (a change is a new version). For the coder's hot
    path; callers must not change the version or its questions."""
    found = _CURRENT_VERSION.first(codebook=codebook_id)
    return _published(*found) if found else None


@functools.lru_cache(maxsize=256)
def _published(pk, published_at):
    # Keyed by the publication time too: a test database that rolls back may give a later
    # version the same id.
    version = CodebookVersion.objects.select_related("codebook").get(pk=pk)
    questions_with_options(version)
    return version


def questions_with_options(version):
    """The version's questions with their options, read once per version object: a
    submission checks, prunes and settles against the same list."""
    if getattr(version, "_questions", None) is None:
        version._questions = list(version.questions.prefetch_related("options"))
    return version._questions


def is_shown(question, values):
    """Whether a conditional question applies given the other answers."""
    condition = question.show_if
    if not condition:
        return True
    answer = values.get(condition["question"])
    wanted = set(condition["in"])
    if isinstance(answer, list):
        return bool(wanted & set(answer))
    return answer in wanted


def link_conditions(questions):
    """Give each conditional question the question its condition reads
    (`condition_source`), so pages name it and its answers by their labels, not keys."""
    by_key = {q.key: q for q in questions}
    for question in questions:
        question.condition_source = by_key.get((question.show_if or {}).get("question"))


def number_shown(questions, values):
    """Number the questions among those shown for these answers, as the coding page and the
    codebook preview show them: a hidden conditional question takes no number (code.js
    renumbers as answers show and hide questions)."""
    number = 0
    for question in questions:
        question.shown = is_shown(question, values)
        number += question.shown
        question.number = number if question.shown else ""


def check_values(version, values, complete=True):
    """Return the answers cleaned against the version, or raise ValidationError.

    Errors are keyed by question so a page or API response can name the field.
    With complete=True every required question that applies must be answered.
    Answers to questions whose condition is not met are refused, so "not
    applicable" is never confused with an answer.
    """
    if not isinstance(values, dict):
        raise ValidationError(gettext("values must be an object of question key to answer"))
    questions = {q.key: q for q in questions_with_options(version)}
    errors = {}
    for key in values:
        if not isinstance(key, str) or (problem := check_key(key)):
            errors[shown_key(key)] = gettext("not a question key: %(problem)s") % {
                "problem": problem or gettext("not text")}
        elif key not in questions:
            errors[key] = gettext("no question %(key)r in %(version)s") % {
                "key": key, "version": version}
    cleaned = {}
    for key, question in questions.items():
        answer = values.get(key)
        shown = is_shown(question, values)
        if answer in (None, "", []):
            if shown and complete and question.required:
                errors[key] = "required"
            continue
        if not shown:
            errors[key] = gettext("not applicable: asked only when %(question)s is %(values)s") % {
                "question": question.show_if["question"],
                "values": " / ".join(str(v) for v in question.show_if["in"])}
            continue
        try:
            cleaned[key] = check_answer(question, answer)
        except ValueError as exc:
            errors[key] = str(exc)
    if errors:
        raise ValidationError(errors)
    return cleaned


def shown_key(key):
    """A key someone sent, safe to name in an error: direction controls made visible."""
    return str(key).encode("unicode_escape").decode("ascii")


def named_options(question, joiner=", "):
    """The options as a sentence names them: “Not reported” (not_reported)."""
    return joiner.join(f"“{o.label}” ({o.value})" for o in question.options.all())


def check_answer(question, answer):
    allowed = [o.value for o in question.options.all()]
    kind = question.kind
    if kind == Question.Kind.SINGLE:
        if answer not in allowed:
            raise ValueError(gettext("%(answer)r is not one of this question's options: "
                                     "%(options)s.")
                             % {"answer": str(answer)[:40], "options": named_options(question)})
        return answer
    if kind == Question.Kind.MULTIPLE:
        if not isinstance(answer, list) or not all(a in allowed for a in answer):
            raise ValueError(gettext("Choose a list of this question's options: %(options)s.")
                             % {"options": named_options(question)})
        if len(set(answer)) != len(answer):
            raise ValueError(gettext("an option is chosen twice"))
        alone = [o.value for o in question.options.all() if o.exclusive and o.value in answer]
        if alone and len(answer) > 1:
            raise ValueError(gettext("%(option)r is chosen alone, not with other options")
                             % {"option": alone[0]})
        return sorted(answer, key=allowed.index)
    if kind == Question.Kind.YES_NO:
        if answer not in YES_NO:
            raise ValueError(gettext("Answer yes or no."))
        return answer
    if kind == Question.Kind.NUMBER:
        if answer in allowed:
            return answer
        if isinstance(answer, bool) or not isinstance(answer, int | float) or not math.isfinite(answer):
            raise ValueError(gettext("Not a number: expected a number or %(options)s.")
                             % {"options": named_options(question, gettext(" or "))}
                             if allowed else gettext("Not a number: expected a number."))
        if question.min_value is not None and answer < question.min_value:
            raise ValueError(gettext("at least %(low)s") % {"low": f"{question.min_value:g}"})
        if question.max_value is not None and answer > question.max_value:
            raise ValueError(gettext("at most %(high)s") % {"high": f"{question.max_value:g}"})
        return answer
    if not isinstance(answer, str):
        raise ValueError(gettext("expected text"))
    problem = unstorable_text(answer) or too_long(answer, TEXT_ANSWER_MAX_CHARS,
                                                  gettext("the answer"))
    if problem:
        raise ValueError(problem)
    return answer


def prune_not_applicable(version, values):
    """Drop answers to questions whose condition is not met (a stale radio left checked)."""
    questions = questions_with_options(version)
    kept = dict(values)
    for question in questions:
        if not is_shown(question, kept):
            kept.pop(question.key, None)
    return kept


def parse_form_answers(version, data):
    """Answers from a posted coding form: fields named q-<key>; missing means unanswered."""
    values = {}
    for question in questions_with_options(version):
        raw = [v.strip() for v in data.getlist(f"q-{question.key}") if v.strip()]
        if not raw:
            continue
        if question.kind == question.Kind.MULTIPLE:
            values[question.key] = raw
        elif question.kind == question.Kind.NUMBER:
            values[question.key] = _number_or_option(question, raw[0])
        else:
            values[question.key] = raw[0]
    return values


def _number_or_option(question, raw):
    if raw in {o.value for o in question.options.all()}:
        return raw
    try:
        number = float(raw.replace(",", "."))
    except ValueError:
        return raw  # check_values names it as "expected a number"
    return int(number) if number.is_integer() and "." not in raw else number

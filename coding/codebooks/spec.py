"""A codebook as data (a *spec*), checked in one place before anything is written.

The editor's pages, the API and the file formats (JSON, YAML, REFI-QDA) all turn what a
person sent into a spec and call `validate`; `save_draft` writes a valid spec into a draft
version in one transaction, so a bad spec saves nothing half-way.

    {"name": "Paper codebook", "applies_to": "paper", "description": "…",
     "questions": [
        {"key": "label", "text": "…", "kind": "single", "definition": "…",
         "required": true, "level": "nominal", "unit": "",
         "show_if": {"question": "other_key", "in": ["value", …]} or null,
         "min_value": null, "max_value": null,
         "options": [{"value": "rl_method", "label": "RL method", "definition": "…",
                      "examples": "…", "counter_examples": "…", "shortcut": "1",
                      "exclusive": false}, …]}, …],
     "translations": {"zh-hans": {"questions": {"label": {"text": "…", …}}}}}

(translations: coding.codebooks.translations; absent when there are none.)

Errors are located: each is `(path, message)` with a path such as
`questions[2].options[0].value`, so a page can put it beside the field and a file import
can name the entry.
"""

import math
import re
from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext

from coding.access.limits import check_key
from coding.codebooks import translations as codebook_translations
from coding.codebooks.versions import YES_NO, add_questions, default_level, unstorable_text
from coding.models import Codebook, CodebookVersion, Question

KEY = re.compile(r"[a-z][a-z0-9_]{0,63}")
# An option's value is stored in every coding and export column: a code, not prose.
VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}")
KINDS = {k.value for k in Question.Kind}
LEVELS = {level.value for level in Question.Level}
WITH_OPTIONS = {Question.Kind.SINGLE, Question.Kind.MULTIPLE}
QUESTION_FIELDS = {"key", "text", "kind", "definition", "required", "level", "unit", "show_if",
                   "min_value", "max_value", "options", "adjudicated"}
OPTION_FIELDS = {"value", "label", "definition", "examples", "counter_examples", "shortcut",
                 "exclusive"}
MAX_QUESTIONS, MAX_OPTIONS = 500, 300
TEXT_LIMITS = {"name": 200, "text": 5_000, "definition": 20_000, "label": 200, "examples": 20_000,
               "counter_examples": 20_000, "unit": 50, "description": 20_000}


@dataclass(frozen=True)
class SpecError:
    path: str
    message: str

    def __str__(self):
        return f"{self.path}: {self.message}" if self.path else self.message


class InvalidSpec(ValueError):
    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("; ".join(str(e) for e in self.errors))

    def as_dict(self):
        """{path: [messages]}, the API's located error body."""
        found = {}
        for error in self.errors:
            found.setdefault(error.path or "codebook", []).append(error.message)
        return found


def validate(spec, *, publishing=False):
    """The spec's errors, in order; empty when it can be saved (and, with `publishing`,
    published: then it needs at least one question)."""
    errors = []

    def err(path, message):
        errors.append(SpecError(path, message))

    if not isinstance(spec, dict):
        return [SpecError("", _("a codebook is an object with name, applies_to and questions"))]
    _text(spec, "name", "name", err, required=True)
    _text(spec, "description", "description", err)
    if spec.get("applies_to") not in ("paper", "thread"):
        err("applies_to", _("either 'paper' or 'thread'"))
    questions = spec.get("questions", [])
    if not isinstance(questions, list):
        err("questions", _("a list of questions"))
        return errors
    if publishing and not questions:
        err("questions", _("a codebook needs at least one question before it is published"))
    if len(questions) > MAX_QUESTIONS:
        err("questions", _("%(count)s questions; at most %(most)s")
            % {"count": f"{len(questions):,}", "most": MAX_QUESTIONS})
        return errors
    seen = {}
    for i, question in enumerate(questions):
        _question(question, f"questions[{i}]", seen, err)
        if isinstance(question, dict) and isinstance(question.get("key"), str):
            seen.setdefault(question["key"], question)
    codebook_translations.check(spec.get("translations"), questions, err, _text)
    return errors


def check(spec, *, publishing=False):
    """Raise InvalidSpec with every error, or return the spec."""
    errors = validate(spec, publishing=publishing)
    if errors:
        raise InvalidSpec(errors)
    return spec


def _text(obj, field, path, err, *, required=False):
    value = obj.get(field, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        err(path, _("text expected"))
        return
    if required and not value.strip():
        err(path, pgettext("a field", "required"))
    elif len(value) > TEXT_LIMITS[field]:
        err(path, _("%(count)s characters; at most %(most)s")
            % {"count": f"{len(value):,}", "most": f"{TEXT_LIMITS[field]:,}"})
    elif problem := unstorable_text(value):
        err(path, problem)


def _question(q, at, earlier, err):
    if not isinstance(q, dict):
        err(at, _("a question is an object"))
        return
    for field in sorted(set(q) - QUESTION_FIELDS):
        err(f"{at}.{field}", _("not a field of a question"))
    key = q.get("key")
    if not isinstance(key, str) or not KEY.fullmatch(key) or check_key(key):
        err(f"{at}.key", _("a key is lower-case letters, digits and _ , starting with a letter "
                             "(at most 64)"))
    elif key in earlier:
        err(f"{at}.key", _("duplicate key %(key)r: keys are unique in a codebook") % {"key": key})
    _text(q, "text", f"{at}.text", err, required=True)
    _text(q, "definition", f"{at}.definition", err)
    _text(q, "unit", f"{at}.unit", err)
    kind = q.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        err(f"{at}.kind", _("one of %(choices)s") % {"choices": ", ".join(sorted(KINDS))})
        kind = None
    level = q.get("level") or default_level(kind)
    if not isinstance(level, str) or level not in LEVELS:
        err(f"{at}.level", _("one of %(choices)s") % {"choices": ", ".join(sorted(LEVELS))})
    elif kind == "number" and level == "nominal":
        # Alpha at the nominal level treats 7 and 8 as unrelated categories.
        err(f"{at}.level", _("a number question is measured at the interval or ratio level "
                             "(ordinal for ranks): choose which"))
    if not isinstance(q.get("required", True), bool):
        err(f"{at}.required", _("true or false"))
    if q.get("adjudicated") is not None and not isinstance(q.get("adjudicated"), bool):
        err(f"{at}.adjudicated", _("true, false or null (as its kind has it)"))
    options = q.get("options", []) or []
    if not isinstance(options, list):
        err(f"{at}.options", _("a list of options"))
        options = []
    if len(options) > MAX_OPTIONS:
        err(f"{at}.options", _("%(count)s options; at most %(most)s")
            % {"count": f"{len(options):,}", "most": MAX_OPTIONS})
        options = []
    if kind in WITH_OPTIONS and not options:
        err(f"{at}.options", _("a single-choice question needs at least one option")
            if kind == Question.Kind.SINGLE
            else _("a multiple-choice question needs at least one option"))
    if kind in (Question.Kind.YES_NO, Question.Kind.TEXT) and options:
        err(f"{at}.options", _("a yes_no question has no options") if kind == Question.Kind.YES_NO
            else _("a text question has no options"))
    _options(options, at, kind, err)
    _shortcuts(options, at, err)
    _bounds(q, at, kind, err)
    _condition(q.get("show_if"), at, key, earlier, err)


def _options(options, at, kind, err):
    values = set()
    for j, option in enumerate(options):
        where = f"{at}.options[{j}]"
        if not isinstance(option, dict):
            err(where, _("an option is an object"))
            continue
        for field in sorted(set(option) - OPTION_FIELDS):
            err(f"{where}.{field}", _("not a field of an option"))
        value = option.get("value")
        if not isinstance(value, str) or not VALUE.fullmatch(value):
            err(f"{where}.value", _("a value is letters, digits, _ . - (at most 100), "
                                    "starting with a letter or digit"))
        elif value in values:
            err(f"{where}.value", _("duplicate value %(value)r in this question")
                % {"value": value})
        else:
            values.add(value)
        if kind == Question.Kind.NUMBER and isinstance(value, str) and _is_number(value):
            err(f"{where}.value", _("a special answer of a number question cannot be a number"))
        for field in ("label", "definition", "examples", "counter_examples"):
            _text(option, field, f"{where}.{field}", err)
        exclusive = option.get("exclusive", False)
        if not isinstance(exclusive, bool):
            err(f"{where}.exclusive", _("true or false"))
        elif exclusive and kind != Question.Kind.MULTIPLE:
            err(f"{where}.exclusive", _("only an option of a multiple-choice question is "
                                        "chosen alone"))


# Keys the coding page already uses for something else (coding/static/coding/code.js).
RESERVED_KEYS = {"e": gettext_lazy("E quotes evidence on the coding page"),
                 "s": gettext_lazy("S skips the item on the coding page"),
                 "f": gettext_lazy("F flags it as unsure on the coding page"),
                 "p": gettext_lazy("P opens the previous item on the coding page")}


def _shortcuts(options, at, err):
    """Each option's key is its shortcut, or else its position (1-9); no two the same."""
    chosen = {}
    for j, option in enumerate(options):
        if not isinstance(option, dict):
            continue
        where = f"{at}.options[{j}].shortcut"
        shortcut = option.get("shortcut", "") or ""
        if not isinstance(shortcut, str) or len(shortcut) > 1 or (shortcut and not shortcut.isalnum()):
            err(where, _("one letter or digit, or empty"))
            continue
        key = shortcut.lower() or (str(j + 1) if j < 9 else "")
        if key in RESERVED_KEYS:
            err(where, _("%(taken)s; choose another key") % {"taken": RESERVED_KEYS[key]})
        elif key in chosen and shortcut:
            err(where, _("key %(key)r already chooses option %(option)s")
                % {"key": key, "option": chosen[key] + 1})
        elif key in chosen:
            err(where, _("key %(key)r (its position): give this option a key of its own "
                         "already chooses option %(option)s")
                % {"key": key, "option": chosen[key] + 1})
        elif key:
            chosen[key] = j


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _bounds(q, at, kind, err):
    low, high = q.get("min_value"), q.get("max_value")
    for field, value in (("min_value", low), ("max_value", high)):
        if value is None:
            continue
        if kind != Question.Kind.NUMBER:
            err(f"{at}.{field}", _("only a number question has bounds"))
        elif _finite(value) is None:
            err(f"{at}.{field}", _("a finite number or null"))
    low, high = _finite(low), _finite(high)
    if low is not None and high is not None and low > high:
        err(f"{at}.max_value", _("the upper bound %(high)s is below the lower bound %(low)s")
            % {"high": f"{high:g}", "low": f"{low:g}"})


def _finite(value):
    """The value as a float a FloatField keeps, or None (not a number, or too large)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _condition(condition, at, key, earlier, err):
    if condition in (None, {}):
        return
    where = f"{at}.show_if"
    if not isinstance(condition, dict) or set(condition) != {"question", "in"}:
        err(where, _("a condition names a question and the answers that show this one: "
                     '{"question": key, "in": [values]}'))
        return
    target, wanted = condition["question"], condition["in"]
    if not isinstance(target, str):
        err(f"{where}.question", _("the key of a question above this one"))
        return
    if target == key:
        err(f"{where}.question", _("a question cannot depend on itself"))
        return
    if target not in earlier:
        err(f"{where}.question", _("no earlier question %(key)r: a condition names a "
                                   "question above this one") % {"key": target})
        return
    if not isinstance(wanted, list) or not wanted or not all(isinstance(v, str) for v in wanted):
        err(f"{where}.in", _("a non-empty list of answers"))
        return
    parent = earlier[target]
    if parent.get("kind") == Question.Kind.YES_NO:
        allowed = set(YES_NO)
    else:
        options = parent.get("options") if isinstance(parent.get("options"), list) else []
        allowed = {o.get("value") for o in options
                   if isinstance(o, dict) and isinstance(o.get("value"), str)}
    unknown = [v for v in wanted if v not in allowed]
    if parent.get("kind") in (Question.Kind.TEXT,):
        err(f"{where}.question", _("%(key)r is a free-text question; a condition needs "
                                   "answers to choose from") % {"key": target})
    elif unknown:
        err(f"{where}.in", _("%(values)s not an answer of %(key)r")
            % {"values": ", ".join(map(repr, unknown)), "key": target})


def spec_of(version):
    """The spec of a stored version (what `save_draft` would write back unchanged)."""
    from coding.codebooks.versions import question_spec

    codebook = version.codebook
    spec = {
        "name": codebook.name, "applies_to": codebook.applies_to,
        "description": codebook.description,
        "questions": [question_spec(q) for q in version.questions.prefetch_related("options")],
    }
    if version.translations:  # a codebook without them reads as it did before they existed
        spec["translations"] = version.translations
    return spec


def normalized(spec):
    """A valid spec with every field present and no nulls where text is kept (what
    `add_questions` writes)."""
    def text(obj, field):
        return obj.get(field) or ""

    translations = codebook_translations.normalized(spec.get("translations"))
    return {
        "name": spec["name"], "applies_to": spec["applies_to"],
        "description": text(spec, "description"),
        "questions": [{
            "key": q["key"], "text": q["text"], "kind": q["kind"],
            "definition": text(q, "definition"), "required": q.get("required", True),
            "level": q.get("level") or default_level(q["kind"]), "unit": text(q, "unit"),
            "show_if": q.get("show_if") or None,
            "min_value": q.get("min_value"), "max_value": q.get("max_value"),
            # Only where the codebook chose: null reads as its kind has it.
            **({"adjudicated": q["adjudicated"]} if q.get("adjudicated") is not None else {}),
            "options": [{
                "value": o["value"], "label": o.get("label") or o["value"],
                **{field: text(o, field) for field in ("definition", "examples",
                                                        "counter_examples", "shortcut")},
                "exclusive": o.get("exclusive", False),
            } for o in q.get("options") or []],
        } for q in spec.get("questions") or []],
        **({"translations": translations} if translations else {}),
    }


@transaction.atomic
def save_draft(version, spec):
    """Replace a draft version's questions with the spec's (checked first; nothing is
    written if it has errors). The codebook's name and description follow the spec."""
    check(spec)
    version = CodebookVersion.objects.select_for_update().get(pk=version.pk)
    if version.is_published:
        raise InvalidSpec([SpecError("", _("%(version)s is published and cannot change; "
                                           "draft a new version") % {"version": version})])
    codebook = version.codebook
    if spec["applies_to"] != codebook.applies_to:
        raise InvalidSpec([SpecError("applies_to", _("a codebook keeps what it applies to; "
                                                     "make a new codebook instead"))])
    clash = (Codebook.objects.filter(study=codebook.study, name=spec["name"])
             .exclude(pk=codebook.pk).exists())
    if clash:
        raise InvalidSpec([SpecError("name", _("the study has another codebook named %(name)r")
                                     % {"name": spec["name"]})])
    Codebook.objects.filter(pk=codebook.pk).update(
        name=spec["name"], description=spec.get("description") or "")
    version.questions.all().delete()
    kept = normalized(spec)
    add_questions(version, kept["questions"])
    version.translations = kept.get("translations", {})
    CodebookVersion.objects.filter(pk=version.pk).update(translations=version.translations)
    return version

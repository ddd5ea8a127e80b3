"""What changed between two versions of a codebook, computed from their specs.

One function, `diff(old_spec, new_spec)`, used by the version page, the API and the
`codebook_diff` command. Questions are matched by key and options by value (the names
codings and exports use), so a renamed key reads as one question removed and one added:
to the data it is exactly that. Translations of the texts (coding.codebooks.translations)
are compared text by text, per language, question and option: `translations`.
"""

from django.utils.translation import gettext, ngettext, pgettext

from coding.codebooks.translations import OPTION_TEXTS, QUESTION_TEXTS

QUESTION_FIELDS = ("text", "kind", "definition", "required", "level", "unit", "show_if",
                   "min_value", "max_value", "adjudicated")
OPTION_FIELDS = ("label", "definition", "examples", "counter_examples", "shortcut", "exclusive")
CODEBOOK_FIELDS = ("name", "description")
DEFAULTS = {"definition": "", "required": True, "level": "nominal", "unit": "", "show_if": None,
            "min_value": None, "max_value": None, "adjudicated": None, "examples": "", "counter_examples": "",
            "shortcut": "", "exclusive": False, "description": ""}


def diff(old_spec, new_spec):
    """{"codebook": [field changes], "added": [questions], "removed": [questions],
    "changed": [{"key", "text", "fields": [...], "options": {...}}], "order": …,
    "translations": [translation changes]}.

    A field change is {"field", "old", "new"}. `old_spec` None (a first version) reads as
    an empty codebook. `order` is {"old": [keys], "new": [keys]} when the questions both
    versions have are in another order, else None. A translation change is {"language",
    "question", "option" (a value, or None for the question's own text), "field", "old",
    "new"}, old None where the text was added and new None where it was removed."""
    old_spec = old_spec or {"questions": []}
    old_questions = _by(old_spec.get("questions") or [], "key")
    new_questions = _by(new_spec.get("questions") or [], "key")
    changed = []
    for key, new in new_questions.items():
        old = old_questions.get(key)
        if old is None:
            continue
        fields = _fields(old, new, QUESTION_FIELDS)
        options = _options(old.get("options") or [], new.get("options") or [])
        if fields or any(options.values()):
            changed.append({"key": key, "text": new.get("text", ""), "fields": fields,
                            "options": options})
    kept_old = [k for k in old_questions if k in new_questions]
    kept_new = [k for k in new_questions if k in old_questions]
    return {
        "codebook": (_fields(old_spec, new_spec, CODEBOOK_FIELDS) if "name" in old_spec else []),
        "added": [_summary(q) for k, q in new_questions.items() if k not in old_questions],
        "removed": [_summary(q) for k, q in old_questions.items() if k not in new_questions],
        "changed": changed,
        "order": {"old": kept_old, "new": kept_new} if kept_old != kept_new else None,
        "translations": _translations(old_spec.get("translations") or {},
                                      new_spec.get("translations") or {}),
    }


PARTS = ("codebook", "added", "removed", "changed", "order", "translations")


def is_empty(found):
    return not any(found.get(part) for part in PARTS)


def change_counts(found):
    """What an audit entry keeps of a diff: how many questions were added, removed and
    changed, and whether the order, the name or description, or translations changed
    (numbers and flags, put into words when shown: `summary_line`)."""
    return {"added": len(found["added"]), "removed": len(found["removed"]),
            "changed": len(found["changed"]), "order": bool(found["order"]),
            "codebook": bool(found["codebook"]), "translations": bool(found.get("translations"))}


def summary_line(found):
    """'1 question added, 2 questions changed, order changed' (or 'no changes') in the
    active language, from a diff or its `change_counts`."""
    counts = found if isinstance(found.get("added"), int) else change_counts(found)
    phrases = (
        ("added", lambda n: ngettext("%(n)d question added", "%(n)d questions added", n)),
        ("removed", lambda n: ngettext("%(n)d question removed", "%(n)d questions removed", n)),
        ("changed", lambda n: ngettext("%(n)d question changed", "%(n)d questions changed", n)),
    )
    parts = [words(counts[part]) % {"n": counts[part]}
             for part, words in phrases if counts.get(part)]
    if counts.get("order"):
        parts.append(gettext("order changed"))
    if counts.get("codebook"):
        parts.append(gettext("name or description changed"))
    if counts.get("translations"):
        parts.append(gettext("translations changed"))
    return pgettext("list separator", ", ").join(parts) or gettext("no changes")


def _by(rows, field):
    return {row.get(field): row for row in rows if isinstance(row, dict)}


def _value(row, field):
    value = row.get(field, DEFAULTS.get(field))
    if value is None and field in DEFAULTS and DEFAULTS[field] is not None:
        value = DEFAULTS[field]
    if field == "show_if" and value == {}:
        value = None
    return value


def _fields(old, new, names):
    changes = []
    for field in names:
        before, after = _value(old, field), _value(new, field)
        if isinstance(before, int | float) and isinstance(after, int | float) \
                and not isinstance(before, bool) and not isinstance(after, bool):
            same = float(before) == float(after)
        else:
            same = before == after
        if not same:
            changes.append({"field": field, "old": before, "new": after})
    return changes


def _options(old_rows, new_rows):
    old, new = _by(old_rows, "value"), _by(new_rows, "value")
    changed = []
    for value, option in new.items():
        if value in old and (fields := _fields(old[value], option, OPTION_FIELDS)):
            changed.append({"value": value, "label": option.get("label") or value,
                            "fields": fields})
    kept_old = [v for v in old if v in new]
    kept_new = [v for v in new if v in old]
    return {
        "added": [_option_summary(o) for v, o in new.items() if v not in old],
        "removed": [_option_summary(o) for v, o in old.items() if v not in new],
        "changed": changed,
        "order": {"old": kept_old, "new": kept_new} if kept_old != kept_new else None,
    }


def _summary(question):
    return {"key": question.get("key"), "text": question.get("text", ""),
            "kind": question.get("kind", ""),
            "options": [o.get("value") for o in question.get("options") or []
                        if isinstance(o, dict)]}


def _option_summary(option):
    return {"value": option.get("value"), "label": option.get("label") or option.get("value")}


def _translations(old, new):
    """Each translated text added, changed or removed: languages, questions and options in
    the new spec's order (what is gone last), a question's texts before its options'."""
    changes = []
    for language in _union(old, new):
        old_questions = (old.get(language) or {}).get("questions") or {}
        new_questions = (new.get(language) or {}).get("questions") or {}
        for key in _union(old_questions, new_questions):
            before, after = old_questions.get(key) or {}, new_questions.get(key) or {}
            where = {"language": language, "question": key, "option": None}
            changes += _texts(before, after, QUESTION_TEXTS, where)
            old_options, new_options = before.get("options") or {}, after.get("options") or {}
            for value in _union(old_options, new_options):
                changes += _texts(old_options.get(value) or {}, new_options.get(value) or {},
                                  OPTION_TEXTS, {**where, "option": value})
    return changes


def _union(old, new):
    return [*new, *(k for k in old if k not in new)]


def _texts(before, after, fields, where):
    return [{**where, "field": field, "old": before.get(field) or None,
             "new": after.get(field) or None}
            for field in fields if (before.get(field) or None) != (after.get(field) or None)]

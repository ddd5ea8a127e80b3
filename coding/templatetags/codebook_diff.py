"""How a codebook's values read on a page (the API keeps them as they are)."""

from django import template
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

register = template.Library()

# Question.Kind and Question.Level as a reader sees them; the keys stay in the codebook.
KIND_WORDS = {"single": gettext_lazy("Single choice"), "multiple": gettext_lazy("Multiple choice"),
              "yes_no": gettext_lazy("Yes / no"), "number": gettext_lazy("Number"),
              "text": gettext_lazy("Free text")}
LEVEL_WORDS = {"nominal": gettext_lazy("nominal"), "ordinal": gettext_lazy("ordinal"),
               "interval": gettext_lazy("interval"), "ratio": gettext_lazy("ratio")}
# A codebook's, a question's or an option's field as a diff names it.
FIELD_WORDS = {"name": gettext_lazy("name"), "description": gettext_lazy("description"),
               "text": gettext_lazy("text"), "kind": gettext_lazy("kind"),
               "definition": gettext_lazy("definition"), "required": gettext_lazy("required"),
               "level": gettext_lazy("level"), "unit": gettext_lazy("unit"),
               "show_if": gettext_lazy("condition"), "min_value": gettext_lazy("at least"),
               "max_value": gettext_lazy("at most"), "label": gettext_lazy("label"),
               "examples": gettext_lazy("examples"),
               "counter_examples": gettext_lazy("counter-examples"),
               "shortcut": gettext_lazy("key"), "exclusive": gettext_lazy("chosen alone"),
               "adjudicated": gettext_lazy("adjudicated")}
APPLIES_WORDS = {"paper": gettext_lazy("Papers"), "thread": gettext_lazy("Threads")}


@register.filter
def kind_words(kind):
    return KIND_WORDS.get(kind, kind)


@register.filter
def level_words(level):
    return LEVEL_WORDS.get(level, level)


@register.filter
def spec_field(field):
    return FIELD_WORDS.get(field, field)


@register.filter
def applies_words(applies_to):
    """'paper' as 'Papers': what a codebook codes."""
    return APPLIES_WORDS.get(applies_to, applies_to)


@register.filter
def spec_value(value):
    """yes/no for flags, "when label is a or b" for a condition, "—" for nothing."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, dict) and "question" in value:
        answers = (value.get("in") or [])
        return _("when %(question)s is %(answers)s") % {
            "question": value["question"], "answers": _(" or ").join(map(str, answers))}
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)


@register.filter
def number_input(value):
    """A bound as an input shows it: empty for none, 7 not 7.0, else the shortest exact form."""
    if value is None or value == "":
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)

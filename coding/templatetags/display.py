from datetime import datetime

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coding.inclusion.words import shown_p, shown_share
from coding.templatetags.codebook_text import translated_html

register = template.Library()


@register.filter
def isotime(value, with_time=True):
    """'2025-05-02T01:01:00+00:00' as '2025-05-02 01:01' (snapshots keep ISO strings)."""
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        return value
    return f"{moment:%Y-%m-%d %H:%M}" if with_time else f"{moment:%Y-%m-%d}"


@register.filter
def isodate(value):
    return isotime(value, with_time=False)


# How a decision was reached (Decision.Method), as a reader says it; the key stays in exports.
DECISION_METHOD_WORDS = {
    "unanimous": gettext_lazy("unanimous"), "single": gettext_lazy("single coder"),
    "consensus": gettext_lazy("consensus"), "adjudicated": gettext_lazy("adjudicated"),
    "not_applicable": gettext_lazy("not applicable: ruled out by the decision it depends on"),
    "reopened": gettext_lazy("reopened: applies again and waits for a decision"),
    "not_adjudicated": gettext_lazy("not adjudicated: each coder's answer is kept")}


@register.filter
def decision_method_words(method):
    return DECISION_METHOD_WORDS.get(method, method)


@register.filter
def words(value):
    """'pull_request' as 'pull request'."""
    return str(value).replace("_", " ")


@register.filter
def show_answer(value):
    """An answer as a reader wants it: lists joined, nothing shown as a dash."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "–"
    return "–" if value in (None, "") else str(value)



def option_labels(question):
    """{value: label} of a question's options (prefetched), yes and no included; an option
    given its texts in the reader's language (codebook_translations.apply) reads in it, the
    original beside it for the "as written" switch."""
    labels = getattr(question, "_option_labels", None)
    if labels is None:
        labels = {"yes": _("Yes"), "no": _("No")} if question.kind == "yes_no" else {}
        labels.update({o.value: translated_html(getattr(o, "tr", None), "label", o.label)
                       for o in question.options.all()})
        question._option_labels = labels
    return labels


@register.filter
def answer_label(value, question):
    """An answer as the codebook names it: each option's label, its key in the tooltip
    (keys are for the API and exports). Other values (numbers, text) as they are."""
    if value in ("n/a", "missing"):
        return {"n/a": _("not applicable"), "missing": _("not answered")}[value]
    labels = option_labels(question) if question is not None else {}
    values = value if isinstance(value, list) else [value]
    if not values or values == [None] or values == [""]:
        return "–"
    return format_html_join(", ", "{}", (
        (format_html('<span title="{}">{}</span>', v, labels[v]) if v in labels else str(v),)
        for v in values))


@register.filter
def question_label(question):
    """A question as people read it: its text (in the reader's language where the codebook
    has it), its key in the tooltip."""
    return format_html('<span title="{}">{}</span>', question.key,
                       translated_html(getattr(question, "tr", None), "text", question.text))


@register.filter
def p_value(p):
    """A p-value as papers print it: `< 0.001` below a thousandth."""
    return shown_p(p)


@register.filter
def share(value):
    """A share as a whole percentage: 0.4 → 40%."""
    return shown_share(value)


@register.simple_tag
def person(user):
    """A person as the pages name them: their display name with the username beside it in
    grey, or the username alone when they gave no name (never "ana (ana)")."""
    name = user.get_full_name()
    if not name or name == user.username:
        return user.username
    return format_html('{} <span class="muted">({})</span>', name, user.username)


@register.simple_tag(takes_context=True)
def name_of(context, user):
    """A member as this reader is shown them: the view's `shown_name` (coding.access.names.
    namer: a pseudonym where the study hides names from the reader), else the username."""
    if user is None:
        return ""
    shown = context.get("shown_name")
    return shown(user) if callable(shown) else user.username

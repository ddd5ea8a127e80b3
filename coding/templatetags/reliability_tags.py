"""Filters for the agreement page."""

import re

from django import template
from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

register = template.Library()


@register.filter
def percent(value, digits=1):
    """0.953 as '95.3%'; empty for None."""
    if value is None or value == "":
        return ""
    return f"{100 * float(value):.{int(digits)}f}%"


VERDICTS = {"reliable": gettext_lazy("reliable"), "tentative": gettext_lazy("tentative"),
            "unreliable": gettext_lazy("unreliable")}


@register.filter
def verdict_name(verdict):
    """A verdict (sample_size.verdict) in the page's language."""
    return VERDICTS.get(verdict, verdict)


# The report keeps its notes in English (the API's and the pasted report's words); the page
# reads them in its language.
NOTES = {
    "Free text: not coded into categories, so not measured.":
        gettext_lazy("Free text: not coded into categories, so not measured."),
    "Multiple choice: sets of options compared with the MASI distance.":
        gettext_lazy("Multiple choice: sets of options compared with the MASI distance."),
    "Options are not numbers: measured as nominal.":
        gettext_lazy("Options are not numbers: measured as nominal."),
    "Negative numbers: measured as interval.":
        gettext_lazy("Negative numbers: measured as interval."),
}
SPECIAL_ANSWERS = re.compile(r"Special answers \((?P<answers>.*)\) count in alpha on all answers "
                             r"and are left out of alpha on numbers only\.")
METRICS = {"nominal": pgettext_lazy("level of measurement", "nominal"),
           "ordinal": pgettext_lazy("level of measurement", "ordinal"),
           "interval": pgettext_lazy("level of measurement", "interval"),
           "ratio": pgettext_lazy("level of measurement", "ratio"),
           "masi": pgettext_lazy("level of measurement", "sets (MASI)")}


@register.filter
def report_note(note):
    """A note of the agreement report in the page's language."""
    if note in NOTES:
        return NOTES[note]
    special = SPECIAL_ANSWERS.fullmatch(note or "")
    if special:
        return gettext("Special answers (%(answers)s) count in alpha on all answers and are "
                       "left out of alpha on numbers only.") % {"answers": special["answers"]}
    return note


@register.filter
def metric_words(metric):
    """A question's level of measurement (or MASI for sets) in the page's language."""
    return METRICS.get(metric, metric)

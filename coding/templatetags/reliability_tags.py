"""Filters for the agreement page."""

from django import template
from django.utils.translation import gettext_lazy

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

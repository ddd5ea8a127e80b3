"""Filters for the agreement page."""

from django import template

register = template.Library()


@register.filter
def percent(value, digits=1):
    """0.953 as '95.3%'; empty for None."""
    if value is None or value == "":
        return ""
    return f"{100 * float(value):.{int(digits)}f}%"

from datetime import datetime

from django import template

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


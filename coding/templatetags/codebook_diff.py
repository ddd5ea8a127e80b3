"""How a codebook diff's values read on a page (the API keeps them as they are)."""

from django import template

register = template.Library()


@register.filter
def spec_value(value):
    """yes/no for flags, "when label is a or b" for a condition, "—" for nothing."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict) and "question" in value:
        answers = value.get("in") or []
        return f"when {value['question']} is {' or '.join(map(str, answers))}"
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

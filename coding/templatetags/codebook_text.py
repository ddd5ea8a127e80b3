"""A codebook text in the reader's language with the original beside it
(coding.codebook_translations): the page shows one of the two, the "as written" switch of
the coding page the other."""

from django import template
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def translated(texts, field, original):
    """`texts[field]` (a translation) with `original` hidden beside it, or the original
    alone when there is no translation."""
    text = texts.get(field) if isinstance(texts, dict) else None
    if not text or text == original:
        return format_html("{}", original)
    return format_html('<span class="tr-text">{}</span><span class="tr-original">{}</span>',
                       text, original)


@register.simple_tag
def shown(texts, field, original):
    """The text the reader sees first (for attributes such as aria-label)."""
    text = texts.get(field) if isinstance(texts, dict) else None
    return text or original

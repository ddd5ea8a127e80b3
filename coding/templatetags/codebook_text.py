"""A codebook text in the reader's language with the original beside it
(coding.codebooks.translations): the page shows one of the two, the "as written" switch
(coding/_show_original.html) the other. One markup for every page that shows codebook
texts: the coding, review and codebook pages, and an answer's label (display.answer_label)."""

from django import template
from django.utils.html import format_html

from coding.accounts.languages import shows_original

register = template.Library()


def translated_html(texts, field, original):
    """`texts[field]` (a translation) with `original` hidden beside it, or the original
    alone when there is no translation."""
    text = texts.get(field) if isinstance(texts, dict) else None
    if not text or text == original:
        return format_html("{}", original)
    return format_html('<span class="tr-text">{}</span><span class="tr-original">{}</span>',
                       text, original)


@register.simple_tag
def translated(texts, field, original):
    return translated_html(texts, field, original)


@register.simple_tag
def shown(texts, field, original):
    """The text the reader sees first (for attributes such as aria-label)."""
    text = texts.get(field) if isinstance(texts, dict) else None
    return text or original


@register.inclusion_tag("coding/_show_original.html", takes_context=True)
def show_original_switch(context):
    """The switch to the codebook as written, as the person left it last time."""
    request = context.get("request")
    return {"checked": shows_original(request.user) if request is not None else False,
            "csrf_token": context.get("csrf_token")}

"""How the method catalog's stored words read on its pages (the API keeps the keys)."""

from django import template

from coding.catalog.landings import HIT_KIND_WORDS

register = template.Library()


@register.filter
def hit_kind_words(kind):
    return HIT_KIND_WORDS.get(kind, kind)

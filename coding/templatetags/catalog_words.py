"""How the method catalog's stored words read on its pages (the API keeps the keys)."""

from django import template

from coding.catalog.landings import HIT_KIND_WORDS, NAME_KIND_WORDS
from coding.catalog.names import kind_of

register = template.Library()


@register.filter
def hit_kind_words(kind):
    return HIT_KIND_WORDS.get(kind, kind)


@register.filter
def name_kind_words(name):
    """What kind of catalog name this is: an option name, a part of identifiers, or an
    option with a value."""
    return NAME_KIND_WORDS[kind_of(name)]

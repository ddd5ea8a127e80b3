"""Untrusted text (titles, abstracts, posts) reaches the page only through here or autoescape.

Markdown is rendered with raw HTML disabled, then the result goes through nh3,
an allow-list sanitiser, as a second wall (design brief, rule 7).
"""

import re

import nh3
from django import template
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt

register = template.Library()

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
ALLOWED_TAGS = {"p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol",
                "li", "a", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody",
                "tr", "th", "td", "del"}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"},
                      "th": {"align"}, "td": {"align"}}
LINK_SCHEMES = {"http", "https", "mailto"}


def render_markdown(text):
    html = _markdown.render(text or "")
    return nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                     url_schemes=LINK_SCHEMES, link_rel="noopener noreferrer nofollow")


# Browsers drop these before reading a URL's scheme ("java\tscript:" is "javascript:").
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")


def safe_url(url):
    """The URL when a link to it cannot run script (http, https, mailto, or relative); else "".

    Autoescaping keeps a URL inside its attribute but does nothing about its scheme:
    an imported record whose url is "javascript:…" would become a live link."""
    text = str(url or "").strip()
    scheme = _SCHEME.match(_IGNORED_IN_URL.sub("", text).lower())
    if scheme and scheme.group(1) not in LINK_SCHEMES:
        return ""
    if not scheme and ":" in text.split("/", 1)[0]:
        return ""  # a colon before any slash but no valid scheme ("1x:…"): not a plain path
    return text


@register.filter(name="safe_url")
def safe_url_filter(url):
    return safe_url(url)


@register.filter(name="markdown")
def markdown_filter(text):
    return mark_safe(render_markdown(text))  # sanitised by nh3 just above

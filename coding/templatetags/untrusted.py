"""Untrusted text (titles, abstracts, posts) reaches the page only through here or autoescape.

Markdown is rendered with raw HTML disabled, then the result goes through nh3,
an allow-list sanitiser, as a second wall (design brief, rule 7).
"""

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


def render_markdown(text):
    html = _markdown.render(text or "")
    return nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer nofollow")


@register.filter(name="markdown")
def markdown_filter(text):
    return mark_safe(render_markdown(text))  # sanitised by nh3 just above

"""Request parsing for the API: JSON that can be stored and echoed back.

Kept in its own module: DRF imports the parser classes while loading its settings.
"""

import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_path(value):
    """Where in a parsed JSON value a lone surrogate (U+D800–U+DFFF) sits, or None.

    Python's json reads "\\ud800" into a str no database column or UTF-8 response can
    hold; walked without recursion, so deep input cannot exhaust the stack.
    """
    pending = [((), value)]
    while pending:
        where, current = pending.pop()
        if isinstance(current, str):
            if SURROGATE.search(current):
                return where
        elif isinstance(current, dict):
            for key, item in current.items():
                if SURROGATE.search(key):
                    return (*where, "<key>")
                pending.append(((*where, key), item))
        elif isinstance(current, list):
            pending.extend(((*where, i), item) for i, item in enumerate(current))
    return None


class StrictJSONParser(JSONParser):
    """DRF's JSON parser, refusing text with lone surrogates as a bad request."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        where = lone_surrogate_path(data)
        if where is not None:
            place = ".".join(str(part) for part in where) or "the body"
            raise ParseError(f"JSON parse error - {place} holds a lone surrogate "
                             "(\\ud800–\\udfff), which is not text")
        return data

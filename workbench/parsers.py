"""Request parsing for the API: JSON that can be stored and echoed back.

Kept in its own module: DRF imports the parser classes while loading its settings.
"""

import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from .text import find_in_json

SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_path(value):
    """Where in a parsed JSON value a lone surrogate (U+D800–U+DFFF) sits, or None.

    Python's json reads "\\ud800" into a str no database column or UTF-8 response can
    hold."""
    found = find_in_json(value, SURROGATE)
    return None if found is None else found[0]


class StrictJSONParser(JSONParser):
    """DRF's JSON parser, refusing text with lone surrogates as a bad request."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:  # json's C decoder gives up on very deep nesting this way
            raise ParseError("JSON parse error - nested too deeply") from None
        where = lone_surrogate_path(data)
        if where is not None:
            place = ".".join(str(part) for part in where) or "the body"
            raise ParseError(f"JSON parse error - {place} holds a lone surrogate "
                             "(\\ud800–\\udfff), which is not text")
        return data

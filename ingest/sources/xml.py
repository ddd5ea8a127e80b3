"""Streaming, hardened XML reading shared by the Atom and OAI-PMH parsers.

defusedxml's iterparse over the stdlib parser refuses DTDs, entity declarations
and external references (billion laughs, XXE); real arXiv responses carry none.
Elements are dropped from the tree once read, so memory stays flat however long
the document is.
"""

from xml.etree.ElementTree import ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse


class MalformedXml(ValueError):
    """The document itself is broken or hostile; nothing after this point can be read."""

    def __init__(self, reason, line=None, column=None):
        self.reason, self.line, self.column = reason, line, column
        where = f"line {line} column {column}: " if line else ""
        super().__init__(f"{where}{reason}")

    def location(self, name):
        return f"{name} line {self.line} column {self.column}" if self.line else name


def walk(stream, wanted):
    """Yield each complete element whose tag is in `wanted`, then drop it from the tree."""
    stack = []
    try:
        for event, elem in iterparse(stream, events=("start", "end"), forbid_dtd=True):
            if event == "start":
                stack.append(elem)
                continue
            stack.pop()
            if elem.tag in wanted:
                yield elem
                if stack:
                    # Removing it right after it was appended costs O(1) and keeps
                    # a 2,500-record page from piling up in its parent.
                    stack[-1].remove(elem)
    except ParseError as exc:
        line, column = exc.position
        raise MalformedXml(f"malformed XML: {_message(exc)}", line, column) from None
    except DefusedXmlException as exc:
        raise MalformedXml(f"refused hostile XML ({type(exc).__name__}): documents declaring "
                           "a DTD or entities are not read") from None
    except LookupError as exc:  # an encoding the XML declaration names but Python lacks
        raise MalformedXml(f"unknown encoding: {exc}") from None


def _message(exc):
    return str(exc).split(": line")[0]


def child_text(elem, tag):
    """Text of the first child with this tag, None when absent."""
    child = elem.find(tag)
    if child is None:
        return None
    return child.text or ""


def children_text(elem, tag):
    return [child.text or "" for child in elem.findall(tag)]

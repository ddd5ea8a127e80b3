"""Streaming, hardened XML reading shared by the Atom and OAI-PMH parsers.

defusedxml's iterparse over the stdlib parser refuses DTDs, entity declarations
and external references (billion laughs, XXE); real arXiv responses carry none.
Elements are dropped from the tree once read, so memory stays flat however long
the document is, and three limits keep a hostile document from using memory or
time out of proportion to the records it holds:

- MAX_DEPTH: elements nested deeper than this are refused (a real response nests
  about eight deep; a deep chain would otherwise sit in memory whole);
- MAX_RUN: a text longer than this many characters, or this many bytes read
  without the parser finishing a tag, stop the reading: no record's field is that
  long, a text is held whole until its tag closes, and the parser re-reads an
  unfinished tag at every chunk (the time grows with the square of its length);
- the root element must be the one the format has, so an HTML error page or an
  OAI-PMH file given as an API response is named instead of read as empty.
"""

from xml.etree.ElementTree import ParseError, TreeBuilder

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser, iterparse
from django.utils.translation import gettext as _

from ..records import MAX_TEXT_CHARS, BadRecord, RecordError

MAX_DEPTH = 64
# A field holds at most MAX_TEXT_CHARS characters; even written as character
# references (`&#x10FFFF;`, ten bytes each) that is well under 16 times as many
# bytes. A text or a tag longer than this cannot become a field.
MAX_RUN = 16 * MAX_TEXT_CHARS  # 4 MiB
_CHUNK = 64 * 1024


class MalformedXml(ValueError):
    """The document itself is broken or hostile; nothing after this point can be read."""

    def __init__(self, reason, line=None, column=None):
        self.reason, self.line, self.column = reason, line, column
        super().__init__(_("line %(line)s column %(column)s: %(reason)s") % {
            "line": line, "column": column, "reason": reason} if line else reason)

    def location(self, name):
        if not self.line:
            return name
        return _("%(file)s line %(line)s column %(column)s") % {
            "file": name, "line": self.line, "column": self.column}


class _TooLarge(SyntaxError):
    """Raised by the builder inside the parser. A SyntaxError, as the parser's own errors
    are, so the pull parser queues it after the elements already complete: the records
    before it are still read."""

    def __init__(self, reason, line, column):
        super().__init__(reason)
        self.reason, self.position = reason, (line, column)


class _Builder(TreeBuilder):
    """The tree builder, refusing too deep a nesting or too long a text as the parser
    meets it, so the error names the line and column where it is."""

    def __init__(self, max_depth, max_text, lines=None):
        super().__init__()
        self.max_depth, self.max_text = max_depth, max_text
        self.depth = self.text = 0
        self.parser = None
        self.lines = lines  # {element: the line it starts on}, when the caller asks

    def start(self, tag, attrs):
        self.depth += 1
        self.text = 0
        if self.depth > self.max_depth:
            raise _TooLarge(_("elements nested more than %(limit)s deep") % {
                "limit": self.max_depth},
                            *_position(self.parser))
        element = super().start(tag, attrs)
        if self.lines is not None:
            self.lines[element] = _position(self.parser)[0]
        return element

    def end(self, tag):
        self.depth -= 1
        self.text = 0
        return super().end(tag)

    def data(self, data):
        self.text += len(data)
        if self.text > self.max_text:
            raise _TooLarge(_("a text longer than %(limit)s characters: too long for any "
                              "record's field") % {"limit": f"{self.max_text:,}"},
                            *_position(self.parser))
        return super().data(data)


class _Metered:
    """The stream as the parser reads it, counting the bytes read since it last found a tag."""

    def __init__(self, stream, parser, limit):
        self.stream, self.parser, self.limit = stream, parser, limit
        self.since_tag = 0

    def read(self, size):
        if self.since_tag > self.limit:
            raise MalformedXml(_("more than %(limit)s bytes in one tag or text: too long for "
                                 "any record's field") % {"limit": f"{self.limit:,}"},
                               *_position(self.parser))
        data = self.stream.read(min(size, _CHUNK))
        self.since_tag += len(data)
        return data


def walk(stream, wanted, root=None, max_depth=MAX_DEPTH, max_run=MAX_RUN, seen=None,
         lines=None):
    """Yield each complete element whose tag is in `wanted`, then drop it from the tree.

    root: (tag, what) the document's root element must have, e.g.
    ("{http://www.w3.org/2005/Atom}feed", "an Atom feed"); raises MalformedXml otherwise.
    seen: a Counter of the tags of the elements dropped unread (outside wanted ones);
    lines: a dict given the line each element starts on, whose entries for dropped
    elements are removed as they are (the caller removes those of the elements it got).
    """
    builder = _Builder(max_depth, max_run, lines)
    parser = DefusedXMLParser(target=builder, forbid_dtd=True, forbid_entities=True,
                              forbid_external=True)
    builder.parser = parser
    source = _Metered(stream, parser, max_run)
    stack, inside_wanted = [], 0
    try:
        for event, elem in iterparse(source, events=("start", "end"), parser=parser):
            source.since_tag = 0
            if event == "start":
                if not stack and root and elem.tag != root[0]:
                    raise MalformedXml(_("not %(what)s: the root element is <%(tag)s>") % {
                        "what": root[1], "tag": _local(elem.tag)})
                stack.append(elem)
                inside_wanted += elem.tag in wanted
                continue
            stack.pop()
            if elem.tag in wanted:
                inside_wanted -= 1
                yield elem
            elif inside_wanted:
                continue  # part of a wanted element: read with it
            else:
                if seen is not None:
                    seen[elem.tag] += 1
                if lines is not None:
                    lines.pop(elem, None)
            if stack:
                # Removing it right after it was appended costs O(1) and keeps
                # a 2,500-record page (or a million stray elements) from piling
                # up in its parent.
                stack[-1].remove(elem)
    except MalformedXml:
        raise
    except _TooLarge as exc:
        raise MalformedXml(exc.reason, *exc.position) from None
    except ParseError as exc:
        line, column = exc.position
        raise MalformedXml(_("malformed XML: %(error)s") % {"error": _message(exc)},
                           line, column) from None
    except DefusedXmlException as exc:
        raise MalformedXml(_("refused hostile XML (%(error)s): documents declaring a DTD or "
                             "entities are not read") % {"error": type(exc).__name__},
                           *_position(parser)) from None
    except LookupError as exc:  # an encoding the XML declaration names but Python lacks
        raise MalformedXml(_("unknown encoding: %(error)s") % {"error": exc}) from None
    except ValueError as exc:  # an encoding the parser cannot read (multi-byte, UTF-7)
        raise MalformedXml(_("unsupported encoding (%(error)s): save the file as UTF-8")
                           % {"error": exc}, *_position(parser)) from None


def read_xml_file(path, read):
    """Yield what read(stream, name) yields for a saved file; broken XML ends it with a
    RecordError naming the file and, when the parser knows it, the line and column."""
    with open(path, "rb") as stream:
        if not stream.peek(1):
            yield RecordError(str(path), _("the file is empty"))
            return
        try:
            yield from read(stream, str(path))
        except MalformedXml as exc:
            yield RecordError(exc.location(str(path)), exc.reason)


def _position(parser):
    try:
        return parser.parser.CurrentLineNumber, parser.parser.CurrentColumnNumber
    except AttributeError:  # the parser is closed
        return None, None


def _local(tag):
    return tag.rsplit("}", 1)[-1][:60]


def _message(exc):
    return str(exc).split(": line")[0]


def child_text(elem, tag):
    """Text of the one child with this tag, None when absent; two are a bad record.

    Used for fields a record has at most once (id, title, dates): a second one
    would be read or ignored silently depending on the order.
    """
    found = elem.findall(tag)
    if not found:
        return None
    if len(found) > 1:
        raise BadRecord(_("%(count)s <%(tag)s> elements where one is allowed") % {
            "count": len(found), "tag": _local(tag)})
    return found[0].text or ""


def children_text(elem, tag):
    return [child.text or "" for child in elem.findall(tag)]

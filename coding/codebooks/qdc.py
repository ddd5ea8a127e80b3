"""A codebook as a REFI-QDA codebook (.qdc), the XML that ATLAS.ti, MAXQDA and NVivo
exchange: root `CodeBook` in `urn:QDA-XML:codebook:1.0`, a `Codes` element of nested
`Code guid name isCodable [color]` elements, each with an optional `Description`.

Written: each question a code (its text as the name; its key, kind and definition in the
description), its options codes inside it (label as the name; value, definition,
examples and counter-examples in the description). GUIDs are uuid5 of the codebook's name
and the keys, so the same codebook gives the same file.

Read: see `load` and docs/codebook-format.md for what a code becomes. Parsed with
defusedxml: a DTD, entities (billion laughs) and external references (XXE) are refused.
"""

import re
import unicodedata
import uuid
import xml.etree.ElementTree as ET

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser, ParseError
from django.utils.translation import gettext

from coding.codebooks.spec import KEY, VALUE
from coding.models import Question

NS = "urn:QDA-XML:codebook:1.0"
ORIGIN = "Coding workbench"
# The namespace of our GUIDs: uuid5 of the codebook's name and keys within it.
GUIDS = uuid.uuid5(uuid.NAMESPACE_URL, "urn:workbench:codebook-codes")
MAX_CODES = 20_000
MAX_DEPTH = 24  # elements: CodeBook, Codes, then codes nested about 20 deep
# Characters XML 1.0 cannot carry at all; written as U+FFFD.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
HEADER = re.compile(r"(Key|Kind|Value): ?(.*)")
EXAMPLES, COUNTER = "\n\nExamples: ", "\n\nCounter-examples: "
KINDS = {k.value for k in Question.Kind}
CHOICE = (Question.Kind.SINGLE, Question.Kind.MULTIPLE)


class BadQdc(ValueError):
    """A .qdc that cannot be read: `errors` are (where, message) pairs."""

    def __init__(self, where, message):
        super().__init__(f"{where}: {message}")
        self.errors = [(where, message)]


# --- writing -------------------------------------------------------------------------

def dump(doc):
    """The codebook object (codebook_files.document) as .qdc bytes."""
    if not doc["questions"]:
        raise ValueError(gettext("a .qdc codebook holds at least one code; this version has "
                                 "no questions"))
    root = ET.Element("CodeBook", {"xmlns": NS, "origin": ORIGIN})
    codes = ET.SubElement(root, "Codes")
    for question in doc["questions"]:
        key = question["key"]
        choice = question["kind"] in CHOICE
        code = _code(codes, _guid(doc["name"], key), question["text"] or key, not choice)
        _description(code, [f"Key: {key}", f"Kind: {question['kind']}"],
                     question.get("definition", ""))
        for option in question.get("options") or []:
            child = _code(code, _guid(doc["name"], key, option["value"]),
                          option.get("label") or option["value"], True)
            _description(child, [f"Value: {option['value']}"], _option_body(option))
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _guid(*parts):
    return str(uuid.uuid5(GUIDS, "\x1f".join(parts)))


def _code(parent, guid, name, codable):
    return ET.SubElement(parent, "Code", {"guid": guid, "name": _xml(name),
                                          "isCodable": "true" if codable else "false"})


def _description(code, headers, body):
    text = "\n".join(headers) + (f"\n\n{body}" if body else "")
    ET.SubElement(code, "Description").text = _xml(text)


def _option_body(option):
    body = option.get("definition") or ""
    if option.get("examples"):
        body += f"{EXAMPLES}{option['examples']}"
    if option.get("counter_examples"):
        body += f"{COUNTER}{option['counter_examples']}"
    return body.removeprefix("\n\n")


def _xml(text):
    return NOT_XML.sub("\ufffd", text)


# --- reading -------------------------------------------------------------------------

class _Builder(ET.TreeBuilder):
    """A tree builder that remembers each element's line and refuses size and depth past
    the limits while parsing, before a tree is built."""

    def __init__(self):
        super().__init__()
        self.parser, self.lines, self.count, self.depth = None, {}, 0, 0

    def start(self, tag, attrs):
        element = super().start(tag, attrs)
        line = self.parser.parser.CurrentLineNumber
        self.lines[element] = line
        self.count += 1
        self.depth += 1
        if self.count > MAX_CODES:
            raise BadQdc(_line(line), gettext("more than %(count)s elements")
                         % {"count": f"{MAX_CODES:,}"})
        if self.depth > MAX_DEPTH:
            raise BadQdc(_line(line), gettext("codes nested more than %(depth)s deep")
                         % {"depth": MAX_DEPTH - 2})
        return element

    def end(self, tag):
        self.depth -= 1
        return super().end(tag)


def _parse(data):
    builder = _Builder()
    parser = DefusedXMLParser(target=builder, forbid_dtd=True)
    builder.parser = parser
    try:
        parser.feed(data)
        root = parser.close()
    except ParseError as error:
        line, column = error.position
        raise BadQdc(_line(line), gettext("column %(column)s: not well-formed XML: %(problem)s")
                     % {"column": column + 1, "problem": _expat_reason(error)}) from None
    except DefusedXmlException as error:
        line = parser.parser.CurrentLineNumber
        raise BadQdc(_line(line), gettext("refused: %(reason)s")
                     % {"reason": _defused_reason(error)}) from None
    return root, builder.lines


def _line(line):
    """A line of the file, as an error's place (as coding.codebooks.files.line_at)."""
    return gettext("line %(line)s") % {"line": line}


def _expat_reason(error):
    return re.sub(r": line \d+, column \d+$", "", str(error))


def _defused_reason(error):
    kind = type(error).__name__
    return {"DTDForbidden": gettext("a DOCTYPE (a codebook has no DTD; entities and "
                                    "external files are never read)"),
            "EntitiesForbidden": gettext("an entity declaration (entities are never "
                                         "expanded)"),
            "ExternalReferenceForbidden": gettext("a reference to an external file or "
                                                  "address")
            }.get(kind, kind)


def _local(tag):
    namespace, _, name = tag.rpartition("}")
    return namespace.lstrip("{"), name


def load(data, *, name, applies_to):
    """A spec from .qdc bytes, and the line of each question and option.

    A top-level code with codes inside becomes a choice question (multiple choice, as a
    QDA tool lets a passage carry several codes, unless its description says `Kind:`); the
    codes inside, at any depth, its options (nested names joined with " / "; a code marked
    not codable only groups the codes inside it). Top-level codes with nothing inside are
    gathered as the options of one multiple-choice question `codes`, unless their
    description names a kind without options (`Kind: yes_no`, `text`, `number`).
    """
    root, lines = _parse(data)
    namespace, tag = _local(root.tag)
    if tag != "CodeBook" or namespace not in (NS, ""):
        found = (gettext("%(tag)r in %(namespace)r") % {"tag": tag, "namespace": namespace}
                 if namespace else repr(tag))
        raise BadQdc(_line(lines.get(root, 1)), gettext(
            "the root element is %(found)s; a REFI-QDA codebook's root is 'CodeBook' in "
            "%(ns)r") % {"found": found, "ns": NS})
    spec, reader = read_codebook(root, lines, name=name, applies_to=applies_to)
    return spec, reader.where


def read_codebook(root, lines, *, name, applies_to):
    """The spec of a CodeBook element (of a .qdc, or of a project's project.qde) and its
    reader, whose `where` gives the line of each question and option and `codes` what each
    code's guid stands for: (question key, option value, or None for the question)."""
    codes = [child for child in root if _local(child.tag)[1] == "Codes"]
    if len(codes) != 1:
        raise BadQdc(_line(lines.get(root, 1)), gettext("a CodeBook holds one Codes element"))
    reader = _Reader(lines)
    for code in _children(codes[0], "Code"):
        reader.top_level(code)
    spec = {"name": name, "applies_to": applies_to, "description": "",
            "questions": reader.questions}
    return spec, reader


def _children(element, name):
    return [child for child in element if _local(child.tag)[1] == name]


class _Reader:
    def __init__(self, lines):
        self.lines, self.questions, self.where = lines, [], {}
        self.keys, self.codes_question = set(), None
        self.codes = {}  # a code's guid (lower case, no braces): (key, option value or None)

    def mark(self, code, key, value=None):
        guid = (code.get("guid") or "").strip().strip("{}").lower()
        if guid:
            self.codes[guid] = (key, value)

    def line(self, element):
        return self.lines.get(element, 0)

    def attributes(self, code):
        name = (code.get("name") or "").strip()
        if not name:
            raise BadQdc(_line(self.line(code)), gettext("a Code needs a name attribute"))
        headers, body = _read_description(code)
        return name, headers, body

    def top_level(self, code):
        name, headers, body = self.attributes(code)
        inside = _children(code, "Code")
        kind = headers.get("Kind") if headers.get("Kind") in KINDS else None
        if not inside and kind is None:
            return self.gather(code, name, headers, body)
        key = headers.get("Key") or _unique(_slug(name, 64, "q"), self.keys, 64)
        self.keys.add(key)
        at = f"questions[{len(self.questions)}]"
        self.where[at] = self.line(code)
        self.mark(code, key)
        options = []
        for child in inside:
            self.options(child, "", options, at, key)
        if kind == Question.Kind.YES_NO:
            options = []  # its codes stand for yes and no, which are not options
        question = {"key": key, "text": name, "kind": kind or Question.Kind.MULTIPLE,
                    "definition": body, "options": options}
        self.questions.append(question)

    def options(self, code, prefix, options, at, key):
        name, headers, body = self.attributes(code)
        label = f"{prefix} / {name}" if prefix else name
        if code.get("isCodable", "true").strip().lower() not in ("false", "0") or not \
                _children(code, "Code"):
            taken = {o["value"] for o in options}
            value = headers.get("Value") or _unique(_slug(label, 100, "code"), taken, 100)
            self.where[f"{at}.options[{len(options)}]"] = self.line(code)
            self.mark(code, key, value)
            options.append({"value": value, "label": label, **_option_texts(body)})
        for child in _children(code, "Code"):
            self.options(child, label, options, at, key)

    def gather(self, code, name, headers, body):
        """A childless top-level code: an option of the one `codes` question."""
        if self.codes_question is None:
            key = _unique("codes", self.keys, 64)
            self.keys.add(key)
            self.codes_at = f"questions[{len(self.questions)}]"
            self.where[self.codes_at] = self.line(code)
            self.codes_question = {"key": key, "text": "Which codes apply?",
                                   "kind": Question.Kind.MULTIPLE, "required": False,
                                   "definition": "Codes read from a REFI-QDA codebook.",
                                   "options": []}
            self.questions.append(self.codes_question)
        options = self.codes_question["options"]
        taken = {o["value"] for o in options}
        value = headers.get("Value") or _unique(_slug(name, 100, "code"), taken, 100)
        self.where[f"{self.codes_at}.options[{len(options)}]"] = self.line(code)
        self.mark(code, self.codes_question["key"], value)
        options.append({"value": value, "label": name, **_option_texts(body)})


def _read_description(code):
    """Header lines (`Key: …`, `Kind: …`, `Value: …`) at the top, then the free text."""
    found = _children(code, "Description")
    text = (found[0].text or "") if found else ""
    text = text.replace("\r\n", "\n").strip("\n")
    headers, rest = {}, text.split("\n")
    while rest and (match := HEADER.fullmatch(rest[0].strip())) and _header_ok(*match.groups()):
        headers[match.group(1)] = match.group(2).strip()
        rest = rest[1:]
    return headers, "\n".join(rest).strip("\n")


def _header_ok(name, value):
    """Only what our own files write is a header; "Value: high" is a description's text."""
    pattern = {"Key": KEY, "Value": VALUE}.get(name)
    return value.strip() in KINDS if name == "Kind" else bool(pattern.fullmatch(value.strip()))


def _option_texts(body):
    texts = {}
    body = "\n\n" + body
    body, found, counter = body.partition(COUNTER)
    if found:
        texts["counter_examples"] = counter
    body, found, examples = body.partition(EXAMPLES)
    if found:
        texts["examples"] = examples
    texts["definition"] = body.removeprefix("\n\n")
    return texts


def _slug(text, limit, fallback):
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_text.lower()).strip("_")[:limit].strip("_")
    if not slug or not slug[0].isalpha():
        slug = f"{fallback}_{slug}".strip("_")[:limit].strip("_")
    return slug


def _unique(base, taken, limit):
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate = base[:limit - len(suffix)] + suffix
        n += 1
    return candidate

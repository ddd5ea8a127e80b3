"""Reading a REFI-QDA project (.qdpx): a zip of `project.qde` (QDA-XML 1.0,
`urn:QDA-XML:project:1.0`) and the texts of its sources, as the QDA tools (NVivo, ATLAS.ti,
MAXQDA, QualCoder, Transana) write it.

`Project(path)` opens and checks the archive, then iterates the project's text sources one
by one (streamed: memory grows with one source, not the project), each with its text, its
selections and codings; users, codes, variables, notes and sets are gathered on the way,
and what the workbench does not read (pictures, PDFs, audio, video, cases, links, graphs,
vendors' own elements) is counted by element so the import can report it. `read_file` is
the ingest format `qdpx_file`: each text source a paper whose title is the source's name
and whose abstract is its text (without the name, where the text starts with it, as the
workbench's own export writes it), keyed `qdpx:<source guid>`.

Refused with a located message (BadArchive), before anything is written by the callers:
a file that is not a zip; an entry whose name is absolute, climbs out (`..`) or holds a
backslash or a NUL; more than MAX_ENTRIES entries; an entry larger than its limit
(MAX_TEXT_BYTES for a source's text, MAX_PROJECT_BYTES for project.qde), counted as it is
inflated, never trusted from the header, or inflating more than MAX_RATIO times past a
megabyte (a zip bomb); no project.qde; XML with a DTD, entities or external references,
nested too deep or with a text too long (ingest.sources.xml); a root that is not
`Project`; a text source whose text is missing, not UTF-8 or holds a NUL; a selection
whose positions are not whole numbers within its text (counted in code points from 0).
"""

import zipfile
from collections import Counter
from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from ..records import MAX_TEXT_CHARS, DocumentRecord, RecordError
from .xml import MalformedXml, walk

NS = "urn:QDA-XML:project:1.0"
Q = "{%s}" % NS
PROJECT = "project.qde"
KEY_PREFIX = "qdpx:"  # a source's document key: the prefix, then its guid
MAX_ENTRIES = 2_000_000
MAX_TEXT_BYTES = 4 * MAX_TEXT_CHARS  # a source's text as UTF-8: at most 4 bytes a character
MAX_PROJECT_BYTES = 8 << 30
MAX_RATIO = 200
# Elements read; their children are read with them.
READ = {Q + name for name in ("User", "CodeBook", "Variable", "TextSource", "Note", "Set")}
# Elements whose content is not read, counted in the report: (tag, what it is).
NOT_READ = {Q + "PictureSource": "picture sources", Q + "PDFSource": "PDF sources",
            Q + "AudioSource": "audio sources", Q + "VideoSource": "video sources",
            Q + "Case": "cases", Q + "Link": "links", Q + "Graph": "graphs"}
# Containers and parts the reader knows; any other element is a vendor's and is reported.
KNOWN = {Q + name for name in (
    "Project", "Users", "Variables", "Sources", "Notes", "Sets", "Cases", "Links", "Graphs",
    "Description", "NoteRef", "Vertex", "Edge", "CodeRef", "SourceRef", "SelectionRef",
    "VariableValue", "VariableRef", "TextValue", "BooleanValue", "IntegerValue", "FloatValue",
    "DateValue", "DateTimeValue", "PictureSelection", "PDFSelection", "Representation",
    "AudioSelection", "VideoSelection", "Transcript", "SyncPoint", "TranscriptSelection",
    "TextDescription", "Coding", "PlainTextSelection", "PlainTextContent", "MemberCode",
    "MemberSource", "MemberNote")} | READ | set(NOT_READ)


class BadArchive(ValueError):
    """The archive cannot be read; nothing from it is written. `where` names the entry,
    line or element."""

    def __init__(self, where, message):
        super().__init__(_("%(where)s: %(problem)s") % {"where": where, "problem": message})
        self.where, self.message = where, message


@dataclass
class Selection:
    guid: str
    start: int
    end: int
    line: int
    codings: list = field(default_factory=list)  # (code, user, created, note guids): _coding
    notes: list = field(default_factory=list)  # note guids


@dataclass
class Source:
    guid: str
    name: str
    line: int
    text: str
    selections: list = field(default_factory=list)
    variables: dict = field(default_factory=dict)  # variable guid: value as text
    notes: list = field(default_factory=list)
    creating_user: str = ""

    @property
    def key(self):
        return KEY_PREFIX + plain_guid(self.guid)

    def title_and_body(self):
        """(title, abstract, where the abstract starts in the text)."""
        title = " ".join((self.name or "").split())[:1000] or _("Untitled source")
        prefix = f"{self.name}\n\n"
        if self.name and self.text.startswith(prefix):
            return title, self.text[len(prefix):], len(prefix)
        return title, self.text, 0


def plain_guid(value):
    return (value or "").strip().strip("{}").lower()


def guid_of(element, name="guid"):
    return plain_guid(element.get(name))


class Project:
    """One pass over a .qdpx: iterate it for its text sources; afterwards `users`,
    `variables`, `notes`, `sets`, `codebook` (the CodeBook element and its lines, or None),
    `unread` ({what: count}) and `skipped` ([(where, why)]) hold the rest."""

    def __init__(self, path):
        self.path = path
        self.archive = open_archive(path)
        self.name = ""
        self.origin = ""
        self.users, self.variables, self.notes = {}, {}, {}
        self.sets, self.skipped = [], []
        self.unread = Counter()
        self.codebook = None
        self.lines = {}

    def close(self):
        self.archive.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        seen = Counter()
        try:
            with self.archive.open(self._entry(PROJECT)) as raw:
                stream = _Bounded(raw, MAX_PROJECT_BYTES, PROJECT)
                for element in walk(stream, READ, root=(Q + "Project", _("a REFI-QDA project")),
                                    seen=seen, lines=self.lines):
                    source = self._element(element)
                    for inner in element.iter():
                        self.lines.pop(inner, None)
                    if source is not None:
                        yield source
        except MalformedXml as error:
            raise BadArchive(error.location(PROJECT), error.reason) from None
        except zipfile.BadZipFile as error:
            raise BadArchive(PROJECT, _("cannot be inflated: %(error)s") % {"error": error}) \
                from None
        for tag, count in seen.items():
            if tag in NOT_READ:
                self.unread[NOT_READ[tag]] += count
            elif tag not in KNOWN:
                self.unread[_("elements %(tag)s") % {"tag": tag}] += count

    def line(self, element):
        return self.line_of(self.lines.get(element, "?"))

    @staticmethod
    def line_of(number):
        return _("%(file)s line %(line)s") % {"file": PROJECT, "line": number}

    def _entry(self, name):
        try:
            return self.archive.getinfo(name)
        except KeyError:
            raise BadArchive(name, _("no such entry in the archive")) from None

    def _element(self, element):
        if not self.name and self.lines:  # the root, open while its children are read
            root = next(iter(self.lines))
            self.name, self.origin = root.get("name") or "", root.get("origin") or ""
        tag = element.tag
        if tag == Q + "User":
            self.users[guid_of(element)] = element.get("name") or element.get("id") or ""
        elif tag == Q + "CodeBook":
            lines = {e: self.lines.get(e, 0) for e in element.iter()}
            self.codebook = (element, lines)
        elif tag == Q + "Variable":
            self.variables[guid_of(element)] = (element.get("name") or "",
                                                element.get("typeOfVariable") or "")
        elif tag == Q + "Note":
            content = element.find(Q + "PlainTextContent")
            text = content.text if content is not None else ""
            if text is None or not text:
                text = self._text(element, self.line(element), required=False) or ""
            self.notes[guid_of(element)] = text
        elif tag == Q + "Set":
            members = [guid_of(m, "targetGUID") for m in element.iter(Q + "MemberSource")]
            self.sets.append((element.get("name") or "", members))
        elif tag == Q + "TextSource":
            return self._source(element)
        return None

    def _source(self, element):
        where = self.line(element)
        name = element.get("name") or ""
        text = self._text(element, where)
        if text is None:
            return None
        source = Source(guid_of(element), name, self.lines.get(element, 0), text,
                        creating_user=guid_of(element, "creatingUser"))
        if not source.guid:
            raise BadArchive(where, _("a TextSource needs a guid"))
        for child in element:
            if child.tag == Q + "PlainTextSelection":
                source.selections.append(self._selection(child, source))
            elif child.tag == Q + "Coding":  # a coding of the whole source
                whole = Selection(source.guid, 0, len(text), self.lines.get(child, 0))
                whole.codings.append(_coding(child))
                source.selections.append(whole)
            elif child.tag == Q + "NoteRef":
                source.notes.append(guid_of(child, "targetGUID"))
            elif child.tag == Q + "VariableValue":
                ref = child.find(Q + "VariableRef")
                value = next((v.text or "" for v in child if v.tag != Q + "VariableRef"), "")
                if ref is not None:
                    source.variables[guid_of(ref, "targetGUID")] = value
            elif child.tag not in KNOWN:
                self.unread[_("elements %(tag)s") % {"tag": child.tag}] += 1
        return source

    def _selection(self, element, source):
        where = self.line(element)
        try:
            start = int(element.get("startPosition"))
            end = int(element.get("endPosition"))
        except (TypeError, ValueError):
            raise BadArchive(where, _("a PlainTextSelection needs whole-number startPosition "
                                      "and endPosition")) from None
        if not 0 <= start <= end <= len(source.text):
            raise BadArchive(where, _(
                "the selection %(start)s–%(end)s of source %(name)r lies outside its text of "
                "%(length)s characters (positions count Unicode code points from 0)") % {
                    "start": start, "end": end, "name": source.name[:100],
                    "length": f"{len(source.text):,}"})
        selection = Selection(guid_of(element), start, end, self.lines.get(element, 0))
        made = element.get("creationDateTime") or ""  # a coding without its own time
        for child in element:
            if child.tag == Q + "Coding":
                code, user, created, notes = _coding(child)
                selection.codings.append((code, user or guid_of(element, "creatingUser"),
                                          created or made, notes))
            elif child.tag == Q + "NoteRef":
                selection.notes.append(guid_of(child, "targetGUID"))
        return selection

    def _text(self, element, where, required=True):
        """A source's (or note's) text: inline, or the archive entry its path names."""
        content = element.find(Q + "PlainTextContent")
        if content is not None and content.text is not None:
            return _checked(content.text, where)
        path = element.get("plainTextPath") or ""
        if not path:
            if required:
                self.skipped.append((where, _("no text: neither PlainTextContent nor "
                                              "plainTextPath")))
            return None
        scheme, _sep, name = path.partition("://")
        if scheme != "internal":
            self.skipped.append((where, _("its text is outside the archive (%(path)s): only "
                                          "internal:// texts are read") % {"path": path[:200]}))
            return None
        entry = self._entry(f"sources/{name}")
        with self.archive.open(entry) as raw:
            data = _Bounded(raw, MAX_TEXT_BYTES, entry.filename).read(MAX_TEXT_BYTES + 1)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise BadArchive(entry.filename, _("not UTF-8 (byte %(at)s)") % {
                "at": f"{error.start:,}"}) from None
        return _checked(text.removeprefix("\ufeff"), entry.filename)


def _coding(element):
    """(code guid, user guid, created, the guids of the coding's own notes)."""
    ref = element.find(Q + "CodeRef")
    return (guid_of(ref, "targetGUID") if ref is not None else "",
            guid_of(element, "creatingUser"), element.get("creationDateTime") or "",
            tuple(guid_of(note, "targetGUID") for note in element.iterfind(Q + "NoteRef")))


def _checked(text, where):
    if "\x00" in text:
        raise BadArchive(where, _("the text holds a NUL character"))
    if len(text) > MAX_TEXT_CHARS:
        raise BadArchive(where, _("the text is %(size)s characters, over the %(limit)s limit")
                         % {"size": f"{len(text):,}", "limit": f"{MAX_TEXT_CHARS:,}"})
    return text


class _Bounded:
    """An entry's stream that refuses to inflate past its limit, whatever the header says."""

    def __init__(self, raw, limit, name):
        self.raw, self.limit, self.name, self.read_so_far = raw, limit, name, 0

    def read(self, size=-1):
        data = self.raw.read(self.limit + 1 - self.read_so_far if size < 0 else size)
        self.read_so_far += len(data)
        if self.read_so_far > self.limit:
            raise BadArchive(self.name, _("inflates past %(limit)s bytes") % {
                "limit": f"{self.limit:,}"})
        return data


def open_archive(path):
    """The archive, its entries checked (names, count, sizes and ratios); BadArchive if not."""
    name = str(path).replace("\\", "/").rsplit("/", 1)[-1]
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise BadArchive(name, _("not a .qdpx (a zip archive): %(error)s") % {
            "error": error}) from None
    except OSError as error:  # its text would name a place on the server
        raise BadArchive(name, _("cannot be read (%(error)s)") % {
            "error": error.strerror or type(error).__name__}) from None
    try:
        entries = archive.infolist()
        if len(entries) > MAX_ENTRIES:
            raise BadArchive(name, _("more than %(limit)s entries") % {
                "limit": f"{MAX_ENTRIES:,}"})
        for info in entries:
            _check_entry(info)
        if PROJECT not in archive.NameToInfo:
            raise BadArchive(name, _("no project.qde: a .qdpx holds its project as "
                                     "project.qde at the top of the archive"))
    except BaseException:
        archive.close()
        raise
    return archive


def _check_entry(info):
    entry = info.filename
    parts = entry.split("/")
    if (entry.startswith("/") or "\\" in entry or "\x00" in entry or ".." in parts
            or (len(entry) > 1 and entry[1] == ":")):
        raise BadArchive(repr(entry[:200]), _("an entry's name may not be absolute, climb out "
                                              "of the archive or hold a backslash"))
    limit = MAX_PROJECT_BYTES if entry == PROJECT else MAX_TEXT_BYTES
    if entry.startswith("sources/") and info.file_size > limit:
        raise BadArchive(entry, _("%(size)s bytes inflated, over the %(limit)s limit") % {
            "size": f"{info.file_size:,}", "limit": f"{limit:,}"})
    if info.file_size > 1 << 20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise BadArchive(entry, _("inflates %(ratio)s times (a zip bomb?)") % {
            "ratio": f"{info.file_size // max(info.compress_size, 1):,}"})


def read_file(path):
    """The text sources of a .qdpx as paper records (the import format `qdpx_file`); a
    broken archive ends the reading with a RecordError naming where."""
    try:
        with Project(path) as project:
            for source in project:
                title, abstract, _start = source.title_and_body()
                yield DocumentRecord(kind="paper", source="qdpx", key=source.key, title=title,
                                     metadata={"abstract": abstract},
                                     location=project.line_of(source.line))
    except BadArchive as error:
        yield RecordError(error.where, error.message)

"""A study (or a round, or the reliability sample) as a REFI-QDA project (.qdpx) for the QDA
tools: NVivo, ATLAS.ti, MAXQDA, QualCoder, Transana.

The archive holds `sources/<guid>.txt` (one per item: the text its coders saw, blinded
fields removed as the reader's roles require) and `project.qde` (QDA-XML 1.0,
`urn:QDA-XML:project:1.0`). The mapping, both ways, is in docs/qda-exchange.md:

- `Users`: every member who coded, by pseudonym (`coder_1`…) unless the reader may see
  names (an owner asking for them), every rater of the study by its name, and the final
  decisions as the user `adjudicated`.
- `CodeBook`: each question a code (its key, kind and definition in the description, as
  the .qdc codebook writes it: coding.codebooks.qdc), its options codes inside it. Every
  published version's questions and options are there, so an answer made under an older
  version still has its code.
- `Variables`: the item's id in the workbench, its document (arXiv id, owner/repo#n),
  kind, round, whether it is in the reliability sample, and its URL unless blinded.
- `Sources`: a `TextSource` per item; each answer of a coder's latest revision is a
  `Coding` by that coder on a `PlainTextSelection`: the span of the evidence quote where
  the coder quoted one for that question, else the revision's one selection of the whole
  text. A choice is a coding of its option's code; a number or free-text answer is a
  coding of the question's code with a note holding the value (a `NoteRef` inside the
  `Coding`). Coder notes are notes of the source.
- `Sets`: each round and the reliability sample.

Positions count Unicode code points from 0 in the source's text file. GUIDs are uuid5 of
the study and the row they stand for, zip entries carry a fixed date, and rows are read in
id order: the same data gives the same bytes. Items are read a batch at a time and the
XML is written to temporary files as it goes (notes and sets follow the sources in the
schema's order), so memory stays flat whatever the study's size.
"""

import hashlib
import os
import re
import shutil
import tempfile
import uuid
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import orjson
from django.utils.translation import gettext

from coding.access.blinding import OWNER_LEVEL, hidden_fields_for, view_for
from coding.access.names import pseudonyms
from coding.codebooks.qdc import NOT_XML, _option_body
from coding.codebooks.versions import YES_NO
from coding.export.rows import as_text_column, in_background, parse_json, read_ahead
from coding.models import Coding, Decision, Item, Question, Rater, RaterCoding
from coding.models.codebooks import CodebookVersion

NS = "urn:QDA-XML:project:1.0"
ORIGIN = "Coding workbench"
SCOPES = ("study", "main", "calibration", "sample")
BATCH = 1_000
ADJUDICATED = "adjudicated"
# A zip entry's date: fixed, so the same data gives the same bytes.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
GUIDS = uuid.uuid5(uuid.NAMESPACE_URL, "urn:workbench:qdpx")
# (name, REFI-QDA type) of the variables each source carries.
VARIABLES = (("workbench_item", "Integer"), ("document", "Text"), ("kind", "Text"),
             ("round", "Text"), ("in_reliability_sample", "Boolean"), ("url", "Text"))
WHOLE = None  # a selection over the whole text
_NOTED = (Question.Kind.NUMBER, Question.Kind.TEXT)  # kinds whose value goes in a note


def build_qdpx(study, out_path, *, scope="study", roles=OWNER_LEVEL, names=False, report=None):
    """Write the project to out_path (a temporary file renamed when complete); a summary.

    `roles`: the reader's, choosing the blinding projection; `names`: real user names
    instead of pseudonyms (the caller checks the reader is an owner)."""
    if scope not in SCOPES:
        raise ValueError(gettext("scope must be one of %(scopes)s; got %(scope)r") % {
            "scopes": ", ".join(SCOPES), "scope": scope})
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    writer = _Project(study, scope, roles, names)
    partial = out_path.with_suffix(".partial")
    with tempfile.TemporaryDirectory(dir=out_path.parent) as tmp:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            writer.write(archive, Path(tmp), report)
    os.replace(partial, out_path)
    return {"filename": out_path.name, "bytes": out_path.stat().st_size, **writer.counts}


def guid(*parts):
    """uuid5(GUIDS, the parts joined by U+001F): the guid of the row they name."""
    return guid_of(_SEP.join(map(str, parts)))


def guid_of(name):
    """uuid5(GUIDS, name) as uuid.uuid5 gives it, without building a UUID object: an
    export writes one or more per answer, so the hot loop passes the joined name itself."""
    digest = _sha1(_GUIDS_BYTES + name.encode()).hexdigest()
    return (f"{digest[:8]}-{digest[8:12]}-5{digest[13:16]}-"
            f"{_VARIANT[digest[16]]}{digest[17:20]}-{digest[20:32]}")


_SEP = "\x1f"
_sha1 = hashlib.sha1


_GUIDS_BYTES = GUIDS.bytes
# The first hex digit of the variant byte as RFC 4122 sets it (10xx xxxx).
_VARIANT = {f"{n:x}": f"{(n & 0x3) | 0x8:x}" for n in range(16)}
# What an attribute's or a text's value must not hold as it is.
_ESCAPED = re.compile(r'[&<>"\n\r\t]')


def attr(value):
    value = _xml(str(value))
    if _ESCAPED.search(value) is None:
        return f'"{value}"'
    return '"' + escape(value, {'"': "&quot;", "\n": "&#10;", "\r": "&#13;",
                                "\t": "&#9;"}) + '"'


def text(value):
    value = _xml(str(value))
    if _ESCAPED.search(value) is None:
        return value
    return escape(value, {"\r": "&#13;"})


def _xml(value):
    return NOT_XML.sub("\ufffd", value)


def when(moment):
    """A time as the database gives it as text, in UTC ("2026-03-01 10:00:00.12+00"), as
    an xsd:dateTime to the second."""
    return f"{moment[:10]}T{moment[11:19]}Z" if moment else None


def source_text(view):
    """The text a source's file holds, and where each field an evidence quote may point
    into starts in it ({"title": 0, "abstract": n, "posts.0.body": m}): the title, the
    abstract, then each post headed by its number and author, separated by blank lines."""
    parts, starts, at = [], {}, 0

    def add(field, value, header=""):
        nonlocal at
        if parts:
            parts.append("\n\n")
            at += 2
        if header:
            parts.append(header)
            at += len(header)
        starts[field] = at
        parts.append(value)
        at += len(value)

    add("title", str(view.get("title") or ""))
    if view.get("abstract"):
        add("abstract", str(view["abstract"]))
    for n, post in enumerate(view.get("posts") or []):
        if isinstance(post, dict):
            author = post.get("author") or ""
            add(f"posts.{n}.body", str(post.get("body") or ""),
                f"#{n + 1}{' ' + author if author else ''}\n")
    return "".join(parts), starts


class _Codes:
    """The code of each (codebook, key[, option value]) over every published version."""

    def __init__(self, study):
        self.study = study
        self.questions = {}  # (codebook id, key): (question, {value: option})
        versions = (CodebookVersion.objects.filter(codebook__study=study,
                                                   status=CodebookVersion.Status.PUBLISHED)
                    .order_by("codebook_id", "number"))
        for question in (Question.objects.filter(version__in=versions)
                         .select_related("version").prefetch_related("options")
                         .order_by("version__codebook_id", "version__number", "position", "pk")):
            place = (question.version.codebook_id, question.key)
            options = ({value: (value.capitalize(), "", "", "") for value in YES_NO}
                       if question.kind == Question.Kind.YES_NO else
                       {o.value: (o.label, o.definition, o.examples, o.counter_examples)
                        for o in question.options.all()})
            if place in self.questions:  # a later version's text wins, options are joined
                options = {**self.questions[place][1], **options}
                self.questions.pop(place)
            self.questions[place] = (question, options)
        # Every code's guid, made once: (codebook, key, value or WHOLE): guid.
        self.guids = {}
        self.kinds = {place: question.kind for place, (question, _o) in self.questions.items()}
        for (codebook, key), (question, options) in self.questions.items():
            self.guids[(codebook, key, WHOLE)] = guid(study.pk, "code", codebook, key)
            for value in options:
                self.guids[(codebook, key, value)] = guid(study.pk, "code", codebook, key,
                                                          value)

    def code(self, codebook, key, value=WHOLE):
        return self.guids.get((codebook, key, value))


    def xml(self, out):
        out.write("<CodeBook><Codes>")
        for (codebook, key), (question, options) in self.questions.items():
            choice = question.kind in (Question.Kind.SINGLE, Question.Kind.MULTIPLE,
                                       Question.Kind.YES_NO)
            description = f"Key: {key}\nKind: {question.kind}"
            if question.definition:
                description += f"\n\n{question.definition}"
            out.write(f"<Code guid={attr(self.code(codebook, key))} "
                      f"name={attr(question.text or key)} "
                      f"isCodable={attr('false' if choice else 'true')}>"
                      f"<Description>{text(description)}</Description>")
            for value, (label, definition, examples, counter) in options.items():
                body = _option_body({"definition": definition, "examples": examples,
                                     "counter_examples": counter})
                described = f"Value: {value}" + (f"\n\n{body}" if body else "")
                out.write(f"<Code guid={attr(self.code(codebook, key, value))} "
                          f"name={attr(label or value)} isCodable=\"true\">"
                          f"<Description>{text(described)}</Description></Code>")
            out.write("</Code>")
        out.write("</Codes></CodeBook>")


class _Project:
    def __init__(self, study, scope, roles, names):
        self.study, self.scope, self.roles = study, scope, roles
        self.codes = _Codes(study)
        self.hidden_url = {kind: "url" in hidden_fields_for(study, roles, kind)
                           for kind in ("paper", "thread")}
        self.users = self._users(names)
        self.variables = {name: guid(study.pk, "variable", name) for name, _ in VARIABLES}
        self.counts = {"sources": 0, "codings": 0, "selections": 0, "notes": 0,
                       "without_code": 0, "users": len(self.users)}

    def _users(self, names):
        """{("member", id) | ("rater", id) | ADJUDICATED: (guid, name)}, in a fixed order."""
        users = {}
        named = pseudonyms(self.study)
        if names:
            from django.contrib.auth import get_user_model

            real = dict(get_user_model().objects.filter(pk__in=named).values_list("pk",
                                                                                  "username"))
            named = {pk: real.get(pk, name) for pk, name in named.items()}
        for pk, name in sorted(named.items(), key=lambda pair: pair[1]):
            users[("member", pk)] = (guid(self.study.pk, "user", pk), name)
        for pk, name in Rater.objects.filter(study=self.study).order_by("name").values_list(
                "pk", "name"):
            users[("rater", pk)] = (guid(self.study.pk, "rater", pk), name)
        users[ADJUDICATED] = (guid(self.study.pk, ADJUDICATED), ADJUDICATED)
        return users

    def scoped(self):
        found = Item.objects.alive().filter(study=self.study)
        if self.scope in ("main", "calibration"):
            found = found.filter(round=self.scope)
        elif self.scope == "sample":
            found = found.filter(round=Item.Round.MAIN, in_reliability_sample=True)
        return found

    def items(self):
        # JSON and times as text, read by orjson and sliced (the export's own way,
        # coding.export.rows): Django's converters were a third of the time.
        return (self.scoped().order_by("pk")
                .annotate(content=as_text_column("snapshot__content"))
                .values_list("pk", "codebook_id", "round", "in_reliability_sample",
                             "document__key", "document__kind", "document__url", "content"))

    def write(self, archive, tmp, report):
        total = self.items_count() if report else None
        parts = {name: open(tmp / name, "w", encoding="utf-8")
                 for name in ("sources", "notes", "main", "calibration", "sample")}
        try:
            # On PostgreSQL the items are read a batch ahead on a connection of their own,
            # and each batch's codings and decisions while the one before is written, so
            # the database works on the other core (rows.read_ahead, rows.in_background).
            waiting = None
            for batch in read_ahead(self.items(), BATCH):
                fetched = in_background(self.related, [row[0] for row in batch])
                if waiting is not None:
                    self.batch(*waiting, archive, parts, report, total)
                waiting = (batch, fetched)
            if waiting is not None:
                self.batch(*waiting, archive, parts, report, total)
        finally:
            for part in parts.values():
                part.close()
        with archive.open(_entry("project.qde"), "w", force_zip64=True) as raw:
            self.project(raw, tmp)

    def items_count(self):
        return self.scoped().count()

    def related(self, ids):
        """The items' latest coding revisions, raters' answers and current decisions:
        ({item: [(user, values, evidence, note, time, key)]}, {item: [values, time, key]})."""
        codings = {}
        latest = (Coding.objects.filter(assignment__item_id__in=ids)
                  .order_by("assignment_id", "-revision")
                  .annotate(answers=as_text_column("values"),
                            quotes=as_text_column("evidence"),
                            submitted=as_text_column("submitted_at"))
                  .values_list("assignment_id", "assignment__item_id", "assignment__coder_id",
                               "answers", "quotes", "notes", "submitted", "pk"))
        seen = set()
        for assignment, item, coder, values, evidence, notes, submitted, pk in latest:
            if assignment in seen:
                continue
            seen.add(assignment)
            codings.setdefault(item, []).append(
                (self.users.get(("member", coder)), parse_json(values) or {},
                 parse_json(evidence), notes, submitted, pk))
        for rater, item, key, value, evidence, coded_at, pk in (
                RaterCoding.objects.filter(item_id__in=ids).order_by("rater__name", "pk")
                .annotate(answer=as_text_column("value"), at=as_text_column("coded_at"))
                .values_list("rater_id", "item_id", "question_key", "answer", "evidence",
                             "at", "pk")):
            codings.setdefault(item, []).append(
                (self.users.get(("rater", rater)), {key: parse_json(value)},
                 [{"question": key, "quote": evidence}] if evidence else [], "", coded_at,
                 f"r{pk}"))
        decided = {}
        for item, key, value, at, pk in (Decision.objects.current().filter(item_id__in=ids)
                                         .order_by("item_id", "question_key")
                                         .annotate(answer=as_text_column("value"),
                                                   at=as_text_column("decided_at"))
                                         .values_list("item_id", "question_key", "answer",
                                                      "at", "pk")):
            value = parse_json(value)
            if value not in (None, "", []):
                decided.setdefault(item, [{}, at, f"d{pk}"])[0][key] = value
        return codings, decided

    def batch(self, batch, fetched, archive, parts, report, total):
        codings, decided = fetched()
        for item, codebook, round, sample, key, kind, url, content in batch:
            # Only the content's texts are written, so orjson reads it as it is (a number
            # past 64 bits, which orjson makes a float, is no text: rows.parse_json's care
            # is for answers).
            view = view_for(self.study, self.roles, orjson.loads(content) if content else {})
            body, starts = source_text(view)
            source = guid(self.study.pk, "source", item)
            name = f"sources/{source}.txt"
            archive.writestr(_entry(name), body.encode("utf-8"))
            work = list(codings.get(item, ()))
            if item in decided:
                values, at, pk = decided[item]
                work.append((self.users[ADJUDICATED], values, [], "", at, pk))
            self.source(parts, item, codebook, round, sample, key, kind,
                        "" if self.hidden_url.get(kind) else url, view, body, starts, source,
                        work)
            parts[round].write(f"<MemberSource targetGUID={attr(source)}/>")
            if round == Item.Round.MAIN and sample:
                parts["sample"].write(f"<MemberSource targetGUID={attr(source)}/>")
        if report:
            report(self.counts["sources"], total, f"{self.counts['sources']:,} sources written")

    def source(self, parts, item, codebook, round, sample, key, kind, url, view, body, starts,
               source, work):
        out, notes = parts["sources"], parts["notes"]
        title = str(view.get("title") or key)
        out.write(f"<TextSource guid={attr(source)} name={attr(title)} "
                  f"plainTextPath={attr(f'internal://{source}.txt')}>")
        note_refs = []
        for user, values, evidence, note, at, pk in work:
            if user is None:
                continue
            for selection in self.selections(codebook, values, evidence, body, starts,
                                             source, user, at, pk, notes):
                out.write(selection)
            if note:
                note_guid = guid(self.study.pk, "note", pk)
                self.note(notes, note_guid, user, at, note)
                note_refs.append(note_guid)
        for note_guid in note_refs:
            out.write(f"<NoteRef targetGUID={attr(note_guid)}/>")
        values = {"workbench_item": ("IntegerValue", item), "document": ("TextValue", key),
                  "kind": ("TextValue", kind), "round": ("TextValue", round),
                  "in_reliability_sample": ("BooleanValue", "true" if sample else "false"),
                  "url": ("TextValue", url)}
        for name, _ in VARIABLES:
            element, value = values[name]
            if value == "":
                continue
            out.write(f'<VariableValue><VariableRef targetGUID="{self.variables[name]}"/>'
                      f"<{element}>{text(value)}</{element}></VariableValue>")
        out.write("</TextSource>")
        self.counts["sources"] += 1

    def selections(self, codebook, values, evidence, body, starts, source, user, at, pk,
                   notes):
        """The PlainTextSelection elements of one revision's answers: the answers the coder
        quoted evidence for each over its first quote (named by the question), the rest
        together over the whole text, each answer's codings by that coder; a number or a
        free text is a coding of the question's code whose note holds the value."""
        # Guids, keys (slugs), numbers and timestamps need no escaping: written as they are.
        user_guid, study = user[0], self.study.pk
        quotes = {}
        for quote in evidence or ():
            if isinstance(quote, dict) and quote.get("question") not in quotes:
                quotes[quote.get("question")] = quote
        by = f' creatingUser="{user_guid}"' + (f' creationDateTime="{when(at)}"' if at else "")
        codes, kinds, whole, found = self.codes.guids, self.codes.kinds, [], 0
        for key, value in values.items():
            if value is None or value == "" or value == []:
                continue
            kind = kinds.get((codebook, key))
            if kind is None:
                self.counts["without_code"] += 1
                continue
            chosen, noted = [], None
            for choice in (value if isinstance(value, list) else (value,)):
                code = codes.get((codebook, key, choice)) if isinstance(choice, str) else None
                if code is not None:
                    chosen.append(code)
                elif kind in _NOTED:
                    noted = choice
                else:
                    self.counts["without_code"] += 1
            if noted is not None:
                chosen.append(codes[(codebook, key, WHOLE)])
            if not chosen:
                continue
            parts = []
            named = f"{study}\x1fcoding\x1f{pk}\x1f{key}\x1f"
            last = len(chosen) - 1
            for n, code in enumerate(chosen):
                if n == last and noted is not None:
                    note_guid = guid_of(f"{study}\x1fvalue\x1f{pk}\x1f{key}")
                    self.note(notes, note_guid, user, at, str(noted))
                    parts.append(f'<Coding guid="{guid_of(named + str(n))}"{by}>'
                                 f'<CodeRef targetGUID="{code}"/>'
                                 f'<NoteRef targetGUID="{note_guid}"/></Coding>')
                else:
                    parts.append(f'<Coding guid="{guid_of(named + str(n))}"{by}>'
                                 f'<CodeRef targetGUID="{code}"/></Coding>')
            self.counts["codings"] += len(chosen)
            quote = quotes.get(key)
            if quote is None:
                whole.extend(parts)
                continue
            start, end = _span(quote, body, starts)
            found += 1
            selection = guid_of(f"{study}\x1fselection\x1f{pk}\x1f{key}")
            yield (f'<PlainTextSelection guid="{selection}" name="{key}" '
                   f'startPosition="{start}" endPosition="{end}"{by}>'
                   + "".join(parts) + "</PlainTextSelection>")
        if whole:
            found += 1
            selection = guid_of(f"{study}\x1fselection\x1f{pk}")
            yield (f'<PlainTextSelection guid="{selection}" startPosition="0" '
                   f'endPosition="{len(body)}"{by}>' + "".join(whole) + "</PlainTextSelection>")
        self.counts["selections"] += found

    def note(self, notes, note_guid, user, at, body):
        stamp = f" creationDateTime={attr(when(at))}" if at else ""
        notes.write(f"<Note guid={attr(note_guid)} creatingUser={attr(user[0])}{stamp}>"
                    f"<PlainTextContent>{text(body)}</PlainTextContent></Note>")
        self.counts["notes"] += 1

    def project(self, raw, tmp):
        def put(value):
            raw.write(value.encode("utf-8"))

        put('<?xml version="1.0" encoding="utf-8"?>\n')
        put(f"<Project xmlns={attr(NS)} name={attr(self.study.name)} origin={attr(ORIGIN)}>")
        put("<Users>")
        for user_guid, name in self.users.values():
            put(f"<User guid={attr(user_guid)} name={attr(name)}/>")
        put("</Users>")
        if self.codes.questions:
            buffer = _Collect()
            self.codes.xml(buffer)
            put(buffer.value())
        put("<Variables>")
        for name, kind in VARIABLES:
            put(f"<Variable guid={attr(self.variables[name])} "
                f"name={attr(name)} typeOfVariable={attr(kind)}/>")
        put("</Variables>")
        if self.counts["sources"]:
            put("<Sources>")
            _copy(tmp / "sources", raw)
            put("</Sources>")
        if self.counts["notes"]:
            put("<Notes>")
            _copy(tmp / "notes", raw)
            put("</Notes>")
        sets = [(name, label) for name, label in (
            ("main", "Round: main"), ("calibration", "Round: calibration"),
            ("sample", "Reliability sample")) if (tmp / name).stat().st_size]
        if sets:
            put("<Sets>")
            for name, label in sets:
                put(f"<Set guid={attr(guid(self.study.pk, 'set', name))} name={attr(label)}>")
                _copy(tmp / name, raw)
                put("</Set>")
            put("</Sets>")
        put("</Project>\n")


class _Collect:
    def __init__(self):
        self.parts = []

    def write(self, value):
        self.parts.append(value)

    def value(self):
        return "".join(self.parts)


def _entry(name):
    """A zip entry with the fixed date, deflated at level 1: a third of level 6's time for
    a few percent more bytes (ZipInfo's level is `compress_level` from Python 3.13)."""
    info = zipfile.ZipInfo(name, ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    setattr(info, "compress_level" if hasattr(info, "compress_level") else "_compresslevel", 1)
    return info


def _copy(path, raw):
    with open(path, "rb") as part:
        shutil.copyfileobj(part, raw, 1 << 20)


def _span(quote, body, starts):
    """(start, end) of a quote in the source's text, in code points; the whole text when
    there is no quote or it cannot be placed."""
    if quote:
        field, start, end = quote.get("field"), quote.get("start"), quote.get("end")
        if field in starts and isinstance(start, int) and isinstance(end, int) \
                and 0 <= start <= end:
            at = starts[field]
            if at + end <= len(body):
                return at + start, at + end
        found = body.find(quote.get("quote") or "\x00") if quote.get("quote") else -1
        if found >= 0:
            return found, found + len(quote["quote"])
    return 0, len(body)

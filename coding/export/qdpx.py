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
  the coder quoted one for that question, else the whole text. A choice is a coding of
  its option's code; a number or free-text answer is a coding of the question's code with
  a note holding the value (`NoteRef`). Coder notes are notes of the source.
- `Sets`: each round and the reliability sample.

Positions count Unicode code points from 0 in the source's text file. GUIDs are uuid5 of
the study and the row they stand for, zip entries carry a fixed date, and rows are read in
id order: the same data gives the same bytes. Items are read a batch at a time and the
XML is written to temporary files as it goes (notes and sets follow the sources in the
schema's order), so memory stays flat whatever the study's size.
"""

import os
import shutil
import tempfile
import uuid
import zipfile
from itertools import islice
from pathlib import Path
from xml.sax.saxutils import escape

from django.utils.translation import gettext

from coding.access.blinding import OWNER_LEVEL, hidden_fields_for, view_for
from coding.access.names import pseudonyms
from coding.codebooks.qdc import NOT_XML, _option_body
from coding.codebooks.versions import YES_NO
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
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            writer.write(archive, Path(tmp), report)
    os.replace(partial, out_path)
    return {"filename": out_path.name, "bytes": out_path.stat().st_size, **writer.counts}


def guid(*parts):
    return str(uuid.uuid5(GUIDS, "\x1f".join(str(p) for p in parts)))


def attr(value):
    return '"' + escape(_xml(str(value)), {'"': "&quot;", "\n": "&#10;", "\r": "&#13;",
                                             "\t": "&#9;"}) + '"'


def text(value):
    return escape(_xml(str(value)), {"\r": "&#13;"})


def _xml(value):
    return NOT_XML.sub("\ufffd", value)


def when(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


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

    def code(self, codebook, key, value=WHOLE):
        known = self.questions.get((codebook, key))
        if known is None or (value is not WHOLE and value not in known[1]):
            return None
        return guid(self.study.pk, "code", codebook, key, *([] if value is WHOLE else [value]))

    def kind(self, codebook, key):
        known = self.questions.get((codebook, key))
        return known[0].kind if known else None

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
        return (self.scoped().order_by("pk")
                .values_list("pk", "codebook_id", "round", "in_reliability_sample",
                             "document__key", "document__kind", "document__url",
                             "snapshot__content")
                .iterator(chunk_size=BATCH))

    def write(self, archive, tmp, report):
        total = self.items_count() if report else None
        parts = {name: open(tmp / name, "w", encoding="utf-8")
                 for name in ("sources", "notes", "main", "calibration", "sample")}
        try:
            rows = self.items()
            while batch := list(islice(rows, BATCH)):
                self.batch(batch, archive, parts)
                if report:
                    report(self.counts["sources"], total,
                           f"{self.counts['sources']:,} sources written")
        finally:
            for part in parts.values():
                part.close()
        info = zipfile.ZipInfo("project.qde", ZIP_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w", force_zip64=True) as raw:
            self.project(raw, tmp)

    def items_count(self):
        return self.scoped().count()

    def batch(self, batch, archive, parts):
        ids = [row[0] for row in batch]
        codings = {}
        latest = (Coding.objects.filter(assignment__item_id__in=ids)
                  .order_by("assignment_id", "-revision")
                  .values_list("assignment_id", "assignment__item_id", "assignment__coder_id",
                               "values", "evidence", "notes", "submitted_at", "pk"))
        seen = set()
        for assignment, item, coder, values, evidence, notes, submitted, pk in latest:
            if assignment in seen:
                continue
            seen.add(assignment)
            codings.setdefault(item, []).append(
                (self.users.get(("member", coder)), values, evidence, notes, submitted, pk))
        for rater, item, key, value, evidence, coded_at, pk in (
                RaterCoding.objects.filter(item_id__in=ids).order_by("rater__name", "pk")
                .values_list("rater_id", "item_id", "question_key", "value", "evidence",
                             "coded_at", "pk")):
            codings.setdefault(item, []).append(
                (self.users.get(("rater", rater)), {key: value},
                 [{"question": key, "quote": evidence}] if evidence else [], "", coded_at,
                 f"r{pk}"))
        decided = {}
        for item, key, value, at, pk in (Decision.objects.current().filter(item_id__in=ids)
                                         .order_by("item_id", "question_key")
                                         .values_list("item_id", "question_key", "value",
                                                      "decided_at", "pk")):
            if value not in (None, "", []):
                decided.setdefault(item, [{}, at, f"d{pk}"])[0][key] = value
        for item, codebook, round, sample, key, kind, url, content in batch:
            view = view_for(self.study, self.roles, content or {})
            body, starts = source_text(view)
            source = guid(self.study.pk, "source", item)
            name = f"sources/{source}.txt"
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, body.encode("utf-8"))
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
            out.write(f"<VariableValue><VariableRef targetGUID="
                      f"{attr(guid(self.study.pk, 'variable', name))}/>"
                      f"<{element}>{text(value)}</{element}></VariableValue>")
        out.write("</TextSource>")
        self.counts["sources"] += 1

    def selections(self, codebook, values, evidence, body, starts, source, user, at, pk,
                   notes):
        """The PlainTextSelection elements of one revision's answers: one per question, over
        its first evidence quote where it has one, else over the whole text."""
        user_guid, _ = user
        quotes = {}
        for quote in evidence or ():
            if isinstance(quote, dict) and quote.get("question") not in quotes:
                quotes[quote.get("question")] = quote
        for key, value in values.items():
            if value in (None, "", []):
                continue
            kind = self.codes.kind(codebook, key)
            if kind is None:
                self.counts["without_code"] += 1
                continue
            choices = value if isinstance(value, list) else [value]
            chosen, noted = [], None
            for choice in choices:
                code = (self.codes.code(codebook, key, choice) if isinstance(choice, str)
                        else None)
                if code is not None:
                    chosen.append(code)
                elif kind in (Question.Kind.NUMBER, Question.Kind.TEXT):
                    noted = choice
                else:
                    self.counts["without_code"] += 1
            if noted is not None:
                chosen.append(self.codes.code(codebook, key))
            if not chosen:
                continue
            start, end = _span(quotes.get(key), body, starts)
            selection = guid(self.study.pk, "selection", pk, key)
            stamp = f" creationDateTime={attr(when(at))}" if at else ""
            parts = [f"<PlainTextSelection guid={attr(selection)} name={attr(key)} "
                     f"startPosition=\"{start}\" endPosition=\"{end}\" "
                     f"creatingUser={attr(user_guid)}{stamp}>"]
            for n, code in enumerate(chosen):
                parts.append(f"<Coding guid={attr(guid(self.study.pk, 'coding', pk, key, n))} "
                             f"creatingUser={attr(user_guid)}{stamp}>"
                             f"<CodeRef targetGUID={attr(code)}/></Coding>")
            if noted is not None:
                note_guid = guid(self.study.pk, "value", pk, key)
                self.note(notes, note_guid, user, at, str(noted))
                parts.append(f"<NoteRef targetGUID={attr(note_guid)}/>")
            parts.append("</PlainTextSelection>")
            self.counts["selections"] += 1
            self.counts["codings"] += len(chosen)
            yield "".join(parts)

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
            put(f"<Variable guid={attr(guid(self.study.pk, 'variable', name))} "
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

"""Codebooks as files: one version written as JSON, YAML or a REFI-QDA codebook (.qdc), and
a file read back into a new codebook or a new draft version.

JSON and YAML carry one versioned format (`coding/codebooks/schemas/codebook-v1.schema.json`,
docs/codebook-format.md): `"format": "workbench-codebook", "format_version": 1` and the
fields of a spec (coding.codebooks.spec). A file is read in three steps, each refusing with
a located error and nothing written:

1. parsing: bounded size, UTF-8, no NUL; JSON and YAML refuse duplicate keys, YAML refuses
   alias bombs and recursive aliases; errors name the line;
2. structure: the JSON Schema (`jsonschema`), errors named by path
   (`questions[2].options[0].value`), with the line where the parser knows it;
3. meaning: `coding.codebooks.spec.validate`, the one validator every editor shares.

YAML is built by PyYAML's safe loader only (plain data: no tags that make Python objects).

The .qdc side (coding/codebooks/qdc.py) turns codes into a spec before step 3.
"""

import json
import json.decoder
import json.scanner
import re
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import yaml
from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext

from coding.access.audit import record, target_of
from coding.codebooks import qdc as codebook_qdc
from coding.codebooks.editing import new_codebook, start_draft
from coding.codebooks.spec import InvalidSpec, SpecError, save_draft, spec_of, validate
from coding.codebooks.versions import UNSTORABLE
from coding.models import CodebookVersion
from workbench.text import find_in_json

FORMAT = "workbench-codebook"
FORMAT_VERSION = 1
FORMATS = ("json", "yaml", "qdc")
MEDIA_TYPES = {"json": "application/json", "yaml": "application/yaml",
               "qdc": "application/xml"}
FILE_KINDS = {"json": "JSON", "yaml": "YAML", "qdc": "REFI-QDA (.qdc)"}
SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml", ".qdc": "qdc", ".xml": "qdc"}
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "codebook-v1.schema.json")
                    .read_text(encoding="utf-8"))
# Far above any codebook a person writes (the RL preset is 12 kB), far below what hurts.
MAX_FILE_BYTES = 1_000_000
# Values in a file (YAML: once aliases are expanded; a few lines can otherwise stand for
# billions, "billion laughs"). A large real codebook holds a few thousand; past this
# limit the parsers and the schema check would spend seconds on one request.
MAX_NODES = 50_000
MAX_DEPTH = 32
MAX_ERRORS = 50


class BadFile(InvalidSpec):
    """A file that cannot be read as a codebook; each error is located by line or path."""


def located(path_or_line, message):
    """An error safe to show: no lone surrogate or control character of the file in it."""
    clean = message.encode("utf-8", "backslashreplace").decode("utf-8")
    clean = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "?", clean)
    return SpecError(path_or_line, clean if len(clean) <= 400 else clean[:400] + "…")


def line_at(line):
    """A line of the file, as the location of an error."""
    return _("line %(line)s") % {"line": line}


def at_line(line, message):
    return BadFile([located(line_at(line), message)])


@dataclass
class Parsed:
    """A file read into a spec (not yet checked for meaning), and where its parts were."""

    spec: dict
    fmt: str
    lines: dict = field(default_factory=dict)  # path -> line in the file


# --- writing -------------------------------------------------------------------------

def document(version):
    """A version as the format's object: the format's name and version, then its spec."""
    return {"format": FORMAT, "format_version": FORMAT_VERSION, **spec_of(version)}


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True  # the same text twice is written twice, never as an anchor


def _text_block(dumper, text):
    style = "|" if "\n" in text else None  # definitions read as paragraphs
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _text_block)


def dump(version, fmt):
    """The version as the bytes of a file: the same version gives the same bytes."""
    doc = document(version)
    if fmt == "json":
        return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if fmt == "yaml":
        return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                         default_flow_style=False, width=100).encode("utf-8")
    if fmt == "qdc":
        return codebook_qdc.dump(doc)
    raise ValueError(_("no format %(format)r: one of %(formats)s")
                     % {"format": fmt, "formats": ", ".join(FORMATS)})


def file_name(version, fmt):
    stem = slugify(version.codebook.name) or "codebook"
    return f"{stem}-v{version.number}.{fmt}"


# --- reading -------------------------------------------------------------------------

def format_of(filename, data, fmt=None):
    """The format asked for, else the one the file's name says, else the one its first
    character suggests (`<` XML, `{` JSON, anything else YAML)."""
    if fmt:
        if fmt not in FORMATS:
            raise BadFile([located("format", _("one of %(choices)s")
                                   % {"choices": ", ".join(FORMATS)})])
        return fmt
    suffix = Path(filename or "").suffix.lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    start = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return {b"<": "qdc", b"{": "json"}.get(start, "yaml")


def read(data, fmt=None, *, filename="", name="", applies_to=""):
    """Parse a file into a spec, checking its structure (step 1 and 2 above).

    `name` and `applies_to` stand in for what a .qdc file cannot say."""
    if not isinstance(data, bytes | bytearray):
        raise BadFile([located("file", _("a file's bytes expected"))])
    if len(data) > MAX_FILE_BYTES:
        raise BadFile([located("file", _too_large(len(data)))])
    if not data.strip():
        raise BadFile([located("file", _("the file is empty"))])
    fmt = format_of(filename, data, fmt)
    if fmt == "qdc":
        try:
            spec, lines = codebook_qdc.load(
                bytes(data), name=name or Path(filename or "").stem or "Imported codebook",
                applies_to=applies_to or "paper")
        except codebook_qdc.BadQdc as error:
            raise BadFile([located(where, message) for where, message in error.errors]) from None
        return Parsed(spec, fmt, lines)
    text = _text(data)
    doc, lines = _load_json(text) if fmt == "json" else _load_yaml(text)
    return Parsed(check_structure(doc, lines), fmt, lines)


def check_structure(doc, lines=None):
    """The spec inside a format object, or BadFile naming each structural error."""
    lines = lines or {}
    if isinstance(doc, dict):
        _check_format(doc)
    found = find_in_json(doc, UNSTORABLE)
    if found:
        where = _path(p for p in found[0] if p != "<key>")
        raise BadFile([_with_line(located(where, _("text may not contain a NUL character or "
                                                   "a lone surrogate")), lines)])
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise BadFile(_at_most([_with_line(_schema_error(e), lines) for e in errors]))
    return {k: v for k, v in doc.items() if k not in ("format", "format_version")}


def _at_most(errors):
    """The first MAX_ERRORS errors, and how many more there were."""
    if len(errors) <= MAX_ERRORS:
        return errors
    return errors[:MAX_ERRORS] + [located("", _("and %(count)s more problems")
                                          % {"count": f"{len(errors) - MAX_ERRORS:,}"})]


def _check_format(doc):
    if doc.get("format") != FORMAT:
        raise BadFile([located("format", _('not a workbench codebook: "format" must be '
                                           '"%(format)s" (found %(found)r)')
                                 % {"format": FORMAT, "found": doc.get("format")})])
    version = doc.get("format_version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise BadFile([located("format_version", _("this workbench reads format_version "
                                                   "%(version)s; the file says %(found)r")
                                 % {"version": FORMAT_VERSION, "found": version})])


def _schema_error(error):
    path = list(error.absolute_path)
    if error.validator == "required":
        missing = re.match(r"'(.*)' is a required property", error.message)
        return located(_path(path + [missing.group(1)] if missing else path),
                       pgettext("a field", "required"))
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})), key=str)
        return located(_path(path + [str(extra[0])] if extra else path),
                       _("not a field of the format"))
    if error.validator == "type":
        wanted = error.validator_value
        wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
        found = _describe(type(error.instance).__name__)
        message = _("%(wanted)s expected, found %(found)s") % {
            "wanted": _describe(wanted), "found": found}
        if isinstance(error.instance, bool) and "string" in str(wanted):
            message += _("; in YAML, yes, no, on and off without quotes are true or false: "
                         "write 'yes'")
        return located(_path(path), message)
    if error.validator == "enum":
        return located(_path(path), _("one of %(choices)s")
                       % {"choices": ", ".join(map(str, error.validator_value))})
    return located(_path(path), error.message)


def _describe(kind):
    text, an_object, a_list = _("text"), _("an object"), _("a list")
    true_or_false, a_number = _("true or false"), _("a number")
    return {"string": text, "str": text, "object": an_object, "dict": an_object,
            "array": a_list, "list": a_list, "boolean": true_or_false, "bool": true_or_false,
            "NoneType": "null", "int": a_number, "float": a_number}.get(kind, kind)


def _path(parts):
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _with_line(error, lines):
    """The error with the line of the nearest part of the file its path names."""
    path = error.path
    while path:
        if path in lines:
            return SpecError(error.path, _("%(message)s (line %(line)s)")
                             % {"message": error.message, "line": lines[path]})
        shorter = _LAST_PART.sub("", path, count=1)
        path = "" if shorter == path else shorter
    return error


_LAST_PART = re.compile(r"(?:\.[^.\[]*|\[\d+\])$")


def _text(data):
    """The file as text: UTF-8 (a BOM allowed), no NUL: a binary file is named as such."""
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise at_line(line, _("not UTF-8 text (byte %(byte)s); save the file as UTF-8")
                      % {"byte": f"0x{data[error.start]:02x}"}) from None
    if "\x00" in text:
        raise at_line(text[:text.index("\x00")].count("\n") + 1,
                      _("a NUL character: this is a binary file, not a codebook"))
    return text


# --- JSON: the standard library's parser, refusing duplicate keys -------------------

class _Duplicate(ValueError):
    def __init__(self, key, position):
        super().__init__(key)
        self.key, self.position = key, position


def _object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None, *rest):
    pairs, end = json.decoder.JSONObject(s_and_end, strict, scan_once, None, list, memo, *rest)
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _Duplicate(key, s_and_end[1] - 1)
        seen.add(key)
    return dict(pairs), end


def _no_constant(name):
    raise ValueError(_("%(name)s is not a JSON number") % {"name": name})


class _StrictDecoder(json.JSONDecoder):
    def __init__(self):
        super().__init__(parse_constant=_no_constant)
        self.parse_object = _object
        self.scan_once = json.scanner.py_make_scanner(self)  # the C scanner ignores parse_object


def _unique_pairs(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _Duplicate(key, None)
        seen.add(key)
    return dict(pairs)


def _load_json(text):
    """The standard library's C parser; when it meets a duplicate key, the slower pure
    Python one is run again to find the line."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise at_line(error.lineno, _("column %(column)s: %(problem)s")
                      % {"column": error.colno, "problem": error.msg}) from None
    except _Duplicate:
        return _locate_duplicate(text)
    except RecursionError:
        raise BadFile([located("file", _("nested too deeply"))]) from None
    except ValueError as error:  # NaN, Infinity, or an integer too long to read
        raise BadFile([located("file", _("not a JSON codebook: %(problem)s")
                               % {"problem": error})]) from None
    _count_values(value)
    return value, {}


def _locate_duplicate(text):
    try:
        _StrictDecoder().decode(text)
    except _Duplicate as error:
        line = text.count("\n", 0, error.position) + 1
        raise at_line(line, _("duplicate key %(key)r in the object that starts here: "
                              "each key once") % {"key": error.key}) from None
    except (ValueError, RecursionError):
        pass
    raise BadFile([located("file", _("a key is given twice in one object"))])


def _count_values(value):
    """Refuse a parsed file holding more than MAX_NODES values (walked without recursion)."""
    pending, count = [value], 0
    while pending:
        current = pending.pop()
        count += 1
        if count > MAX_NODES:
            raise BadFile([located("file", _too_many())])
        if isinstance(current, dict):
            pending.extend(current.values())
        elif isinstance(current, list):
            pending.extend(current)


# --- YAML: safe_load after a look at the parsed nodes --------------------------------

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_STR = "tag:yaml.org,2002:str"


def _load_yaml(text):
    """The safe loader's value (never a loader that builds Python objects), once the composed
    nodes showed no duplicate key, no key that is not text, no recursive alias and no more
    than MAX_NODES values with aliases expanded. The nodes are composed once (by libyaml
    when present) and built by the safe loader's constructor: a 1 MB file reads in about a
    second, where yaml.safe_load's pure-Python parse takes several."""
    _count_events(text)
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as error:
        raise _yaml_error(error) from None
    except yaml.YAMLError as error:
        raise BadFile([located("file", _("not YAML: %(problem)s") % {"problem": error})]) from None
    except RecursionError:
        raise BadFile([located("file", _("nested too deeply"))]) from None
    if root is None:
        raise BadFile([located("file", _("the file is empty"))])
    lines = {}
    _count_nodes(root, {}, 0, "", lines)
    try:
        return yaml.SafeLoader("").construct_document(root), lines
    except yaml.MarkedYAMLError as error:  # a tag the safe loader will not build (!!python/…)
        raise _yaml_error(error) from None
    except (yaml.YAMLError, RecursionError, ValueError) as error:
        raise BadFile([located("file", _("not a YAML codebook: %(problem)s")
                               % {"problem": error})]) from None


def _count_events(text):
    """Stop reading at the first event past the limit: building nodes costs about 10 µs
    each, so a file of a million tiny values is refused before it is built."""
    try:
        for count, event in enumerate(yaml.parse(text, Loader=_LOADER)):
            if count > 2 * MAX_NODES:  # a collection is two events, its start and end
                raise at_line(event.start_mark.line + 1, _too_many())
    except yaml.MarkedYAMLError as error:
        raise _yaml_error(error) from None
    except yaml.YAMLError as error:
        raise BadFile([located("file", _("not YAML: %(problem)s") % {"problem": error})]) from None


def _yaml_error(error):
    mark = error.problem_mark or error.context_mark
    where = line_at(mark.line + 1) if mark else "file"
    message = " ".join(str(m) for m in (error.context, error.problem) if m)
    return BadFile([located(where, message or str(error))])


_BUSY = object()


def _count_nodes(node, sizes, depth, path, lines):
    """How many values the node stands for once aliases are expanded (memoised by node, so
    a bomb is measured without being expanded); records each path's line."""
    line = node.start_mark.line + 1
    if path not in lines:
        lines[path] = line
    known = sizes.get(id(node))
    if known is _BUSY:
        raise at_line(line, _("an alias refers to a value that contains it (a recursive "
                              "alias)"))
    if known is not None:
        return known
    if depth > MAX_DEPTH:
        raise at_line(line, _("nested more than %(depth)s levels deep") % {"depth": MAX_DEPTH})
    sizes[id(node)] = _BUSY
    size = 1
    if isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            size += _count_nodes(item, sizes, depth + 1, f"{path}[{i}]", lines)
    elif isinstance(node, yaml.MappingNode):
        seen = {}
        for key, value in node.value:
            key_line = key.start_mark.line + 1
            if not isinstance(key, yaml.ScalarNode) or key.tag != _STR:
                raise at_line(key_line, _("a key must be text (merge keys << are not read)"))
            if key.value in seen:
                raise at_line(key_line, _("duplicate key %(key)r (first on line %(line)s): "
                                          "each key once")
                              % {"key": key.value, "line": seen[key.value]})
            seen[key.value] = key_line
            size += _count_nodes(value, sizes, depth + 1,
                                 f"{path}.{key.value}" if path else key.value, lines)
    if size > MAX_NODES:
        raise at_line(line, _("the file stands for more than %(count)s values once its "
                              "aliases are expanded") % {"count": f"{MAX_NODES:,}"})
    sizes[id(node)] = size
    return size


def _too_large(size):
    return _("the file is %(size)s bytes; a codebook file is at most %(most)s") % {
        "size": f"{size:,}", "most": f"{MAX_FILE_BYTES:,}"}


def _too_many():
    return _("more than %(count)s values: too large for a codebook") % {
        "count": f"{MAX_NODES:,}"}


# --- importing -----------------------------------------------------------------------

# A file for the other kind of document than the codebook it is imported into.
_APPLIES_TO_CLASH = {
    "paper": gettext_lazy("the file's codebook is for papers; %(codebook)s is for threads"),
    "thread": gettext_lazy("the file's codebook is for threads; %(codebook)s is for papers"),
}

def check_meaning(parsed, spec):
    errors = validate(spec)
    if errors:
        raise BadFile(_at_most([_with_line(located(e.path, e.message), parsed.lines)
                                for e in errors]))


def import_codebook(study, user, parsed, *, codebook=None, name="", dry_run=False):
    """Write a read file as a new codebook (draft v1) or as the draft of `codebook`, in one
    transaction with its audit entry; with `dry_run` everything is done and rolled back,
    so the answer is what would have been written.

    The codebook and its draft are made by the editor's own functions
    (coding.codebooks.editing): a new codebook is never published by an import, and a
    codebook whose newest version is still a draft gets that draft's questions replaced
    (a draft is meant to change). Into an existing codebook the file must apply to the
    same kind of document; the codebook keeps its name unless `name` is given."""
    spec = dict(parsed.spec)
    with transaction.atomic():
        if codebook is None:
            if name:
                spec["name"] = name
            check_meaning(parsed, spec)
            if study.codebooks.filter(name=spec["name"]).exists():
                raise BadFile([located("name", _("the study already has a codebook named "
                                                 "%(name)r: give another name, or import as "
                                                 "a new version of it")
                                       % {"name": spec["name"]})])
            codebook = new_codebook(study, user, spec["name"], spec["applies_to"],
                                    spec.get("description", ""))
            version, replaced, made_codebook = codebook.versions.get(), False, True
        else:
            spec["name"] = name or codebook.name
            if parsed.fmt == "qdc":  # a .qdc says neither; the codebook's stand
                spec["applies_to"] = codebook.applies_to
                spec["description"] = codebook.description
            check_meaning(parsed, spec)
            if spec["applies_to"] != codebook.applies_to:
                raise BadFile([located("applies_to", _APPLIES_TO_CLASH[spec["applies_to"]]
                                       % {"codebook": codebook.name})])
            version, made = start_draft(codebook, user)
            replaced, made_codebook = not made, False
        save_draft(version, spec)
        CodebookVersion.objects.filter(pk=version.pk, note="").update(
            note=f"Imported from a {FILE_KINDS[parsed.fmt]} file.")
        version.refresh_from_db()
        record(user, study, "codebook.import",
               target_of("codebook_version", codebook=version.codebook.name, number=version.number),
               format=parsed.fmt, questions=len(spec["questions"]),
               new_codebook=made_codebook, replaced_draft=replaced)
        result = {
            "dry_run": dry_run, "codebook_id": None if dry_run else version.codebook_id,
            "codebook": version.codebook.name, "version": version.number, "status": "draft",
            "new_codebook": made_codebook, "replaced_draft": replaced,
            "questions": len(spec["questions"]),
            "options": sum(len(q.get("options") or []) for q in spec["questions"]),
            "format": parsed.fmt,
        }
        if dry_run:
            transaction.set_rollback(True)
    return result


def import_file(study, user, data, *, filename="", fmt=None, codebook=None, name="",
                applies_to="", dry_run=False):
    """Read a file's bytes and import them (the page's, the API's and the command's door)."""
    parsed = read(data, fmt, filename=filename, name=name,
                  applies_to=applies_to or (codebook.applies_to if codebook else ""))
    return import_codebook(study, user, parsed, codebook=codebook, name=name, dry_run=dry_run)


def read_upload(upload):
    """An uploaded file's bytes, refused before reading when it is over the limit."""
    if upload.size is not None and upload.size > MAX_FILE_BYTES:
        raise BadFile([located("file", _too_large(upload.size))])
    data = upload.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise BadFile([located("file", _("a codebook file is at most %(most)s bytes")
                               % {"most": f"{MAX_FILE_BYTES:,}"})])
    return data


def load_json(data):
    """JSON bytes as a value, with the checks a codebook file gets (for the API's body)."""
    if len(data) > MAX_FILE_BYTES:
        raise BadFile([located("file", _("at most %(most)s bytes")
                               % {"most": f"{MAX_FILE_BYTES:,}"})])
    return _load_json(_text(data))[0]

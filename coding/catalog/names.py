"""Name forms and where a name counts: the one place that says how an option or method
name is spelled in code, on the command line, in config files and in thread titles.

A catalog entry `disable_grpo_std_normalization` is the same option as the flag
`--disable-grpo-std-normalization`, the key `disable-grpo-std-normalization:` and the
override `algorithm.disable_grpo_std_normalization=true`; a dotted entry
`algorithm.filter_groups` is the nested YAML key `filter_groups` under `algorithm`.
A name counts as code or configuration only: Python comments and docstrings, YAML and
TOML comments, and `#` or `//` comments of other files are mentions, never landings.

A catalog name is one of three kinds, told by how it is written (`kind_of`):
- an option name, `use_tis`: a whole identifier (`tis` is not in `negative_tis_loss`);
- a part of an identifier, `*is_correction`, `vllm_is*` or `*is_correction*`: the name's
  parts (split at `_` and `-`) must stand as whole, consecutive parts of a longer
  identifier, which may go on where a `*` is: `*is_correction` is in
  `--enable_vllm_is_correction` but not in `this_correction` or `is_correction_v2`;
- an option with a value, `importance_sampling=seq` (the key may be dotted,
  `adv_norm.std_level=none`): the key set to that value, as `key: value` in YAML (nested
  keys included), `key = value` in TOML and Python assignments and keyword arguments,
  `"key": "value"` in JSON and dict literals, and `--key value`, `--key=value` or
  `key=value` on a command line. Quotes around the value do not matter; case does.
"""

import io
import json
import re
import tokenize
import tomllib
from dataclasses import dataclass

import yaml

CODE, CONFIG, COMMENT, DOCSTRING = "code", "config", "comment", "docstring"
COUNTS = {CODE, CONFIG}  # the kinds that make a landing; the others are mentions
CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml")
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it

OPTION, PART, VALUE = "option", "part", "value"


def kind_of(name):
    """Which of the three kinds a catalog name is (see the module's docstring)."""
    text = name.strip()
    if "=" in text:
        return VALUE
    if text.startswith("*") or text.endswith("*"):
        return PART
    return OPTION


def key_of(name):
    """The identifier a catalog name looks for: the key of `key=value`, the core of
    `*part*`, the name itself otherwise."""
    text = name.strip()
    if "=" in text:
        return text.split("=", 1)[0].strip()
    return text.strip("*").strip()


def value_of(name):
    """The value of an option-with-a-value name, unquoted (`importance_sampling=seq` → seq)."""
    return name.split("=", 1)[1].strip().strip("\"'") if "=" in name else ""


def canonical(name):
    """How a catalog name is stored: `importance_sampling = "seq"` → `importance_sampling=seq`."""
    text = name.strip()
    if kind_of(text) == VALUE:
        return f"{key_of(text)}={value_of(text)}"
    return text


def normal(name):
    """The form names are compared in: no leading dashes, dashes as underscores."""
    return name.strip().lstrip("-").replace("-", "_")


def leaf(name):
    """The last part of a dotted config path (`algorithm.filter_groups` → `filter_groups`)."""
    return normal(name).rsplit(".", 1)[-1]


def forms(name):
    """Every spelling of an option name the scan looks for, most literal first."""
    base, last = normal(name), leaf(name)
    found = [name.strip()]
    for word in dict.fromkeys([base, last]):
        kebab = word.replace("_", "-")
        found += [word, kebab, f"--{kebab}", f"--{word}"]
    return list(dict.fromkeys(found))


def searched(names):
    """The bare texts to look for in blobs (flags and dotted paths contain them)."""
    texts = set()
    for name in names:
        for word in (normal(name), leaf(name)):
            texts |= {word, word.replace("_", "-")}
    return sorted(texts, key=lambda t: (-len(t), t))


def pattern(names):
    """One regex finding any form of any of `names` as a whole word (group 0 is the text
    as written, with its dashes: `--use-tis`, `algorithm.filter_groups`)."""
    texts = searched(names)
    if not texts:
        return re.compile(r"(?!x)x")
    body = "|".join(re.escape(t) for t in texts)
    return re.compile(rf"(?<![A-Za-z0-9_-])(?:--?)?(?:{body})(?![A-Za-z0-9_]|-[A-Za-z0-9_])")


class Names:
    """The catalog names of one scan: where a text holds which of them.

    `regex` and `search` are loose, for skipping what cannot hold a name (a value name's
    key alone passes); `matches` is exact."""

    def __init__(self, names):
        self.names = sorted(set(names))
        keyed = [n for n in self.names if kind_of(n) != PART]  # found by their key
        self.parts = [(n, _part_pattern(n)) for n in self.names if kind_of(n) == PART]
        self.texts = sorted(set(searched(key_of(n) for n in keyed)) | {
            t for n, _ in self.parts for t in (normal(key_of(n)),
                                               normal(key_of(n)).replace("_", "-"))})
        self.keys = pattern(key_of(n) for n in keyed)
        loose = [self.keys.pattern, *(p.pattern for _, p in self.parts)]
        self.regex = re.compile("|".join(f"(?:{p})" for p in loose))
        self.by_normal = {}
        for name in keyed:
            key = key_of(name)
            self.by_normal.setdefault(normal(key), set()).add(name)
            if "." in normal(key):
                self.by_normal.setdefault(leaf(key), set()).add(name)

    def of(self, text, path=""):
        """The option names (and value names, by their key) the matched text is a form of.
        A dotted name matched by its last part alone needs `path` (the text's dotted config
        path) to end with it."""
        found = set()
        for name in self.by_normal.get(normal(text), ()):
            key = normal(key_of(name))
            if "." not in key or normal(text) == key or normal(path).endswith(key):
                found.add(name)
        return found

    def matches(self, text, path=""):
        """(offset, the text as written, catalog name) for every name in `text`: `--use-tis`,
        `importance_sampling: seq`, `--enable_vllm_is_correction`."""
        found = []
        for match in self.keys.finditer(text):
            written = match.group(0)
            for name in self.of(written, path or written):
                if kind_of(name) == OPTION:
                    found.append((match.start(), written, name))
                    continue
                value = _value_after(text, match, value_of(name), written.startswith("-"))
                if value is not None:
                    found.append((match.start(), text[match.start():value], name))
        for name, regex in self.parts:
            for match in regex.finditer(text):
                start, end = _identifier_around(text, match.start(), match.end())
                found.append((start, text[start:end], name))
        return sorted(set(found))

    def search(self, text):
        """Whether any name may be in the text: a plain substring test first (fast), the
        loose regex only when one is there."""
        return any(t in text for t in self.texts) and self.regex.search(text) is not None


def _part_pattern(name):
    """A part-of-identifier name's core, its parts joined by `_` or `-`, standing at part
    boundaries; the identifier must start (end) with it unless the name has a `*` there."""
    text = name.strip()
    core = "[_-]".join(re.escape(p) for p in re.split(r"[_-]+", normal(key_of(text))) if p)
    before = r"(?<![A-Za-z0-9])" if text.startswith("*") else r"(?<![A-Za-z0-9_-])(?:--?)?"
    after = r"(?![A-Za-z0-9])" if text.endswith("*") else r"(?![A-Za-z0-9_]|-[A-Za-z0-9_])"
    return re.compile(f"{before}{core}{after}")


def _identifier_around(text, start, end):
    """The whole identifier (or dashed flag, or dotted path) a part was found in."""
    while start > 0 and re.match(r"[A-Za-z0-9_.-]", text[start - 1]):
        start -= 1
    while end < len(text) and re.match(r"[A-Za-z0-9_.-]", text[end]):
        end += 1
    return start, end


def _value_after(text, match, value, flag):
    """Where the value ends if `text` sets the key just matched to `value` (or compares
    it, `key == "value"`, as code acting on it does), else None: `: value`, `= value` and
    `=value`, quoted or not, or ` value` after a `--flag`."""
    separator = r"(?:\s*(?:==|[:=])\s*|\s+)" if flag else r"\s*(?:==|[:=])\s*"
    found = re.compile(rf"""["']?{separator}(["']?){re.escape(value)}\1(?![A-Za-z0-9_.-])"""
                       ).match(text, match.end())
    return found.end() if found else None


@dataclass(frozen=True)
class Hit:
    line: int  # 1-based, in the file
    text: str  # as written: `--use-tis`
    name: str  # the catalog name it is a form of
    kind: str  # code, config, comment or docstring


def hits(path, text, names):
    """Every form of the names in a file, each with the line it is on and its kind.
    Python is read with `tokenize`, YAML and JSON with their parsers (TOML is checked by
    its parser and read by line); any file they cannot read, and every other file, by
    line, with `#` and `//` comments and C-style block comment lines as comments."""
    if not names.regex.search(text):
        return []
    lower = path.lower()
    found = None
    if lower.endswith((".py", ".pyi")):
        found = _python(text, names)
    elif lower.endswith((".yaml", ".yml")):
        found = _yaml(text, names)
    elif lower.endswith(".json"):
        found = _json(text, names)
    elif lower.endswith(".toml"):
        found = _toml(text, names)
    if found is None:
        found = _lines(text, names, CODE)
    return sorted(set(found), key=lambda h: (h.line, h.text, h.name))


def _each(names, text, line, kind, path=""):
    for _, written, name in names.matches(text, path):
        yield Hit(line, written, name, kind)


def _python(text, names):
    found, code_lines = [], set()
    previous = tokenize.NEWLINE  # the last significant token: a string after it starts a statement
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    for n, token in enumerate(tokens):
        kind = None
        if token.type == tokenize.COMMENT:
            kind = COMMENT
        elif token.type == tokenize.STRING:
            following = next((t for t in tokens[n + 1:] if t.type not in (
                tokenize.NL, tokenize.COMMENT)), None)
            alone = previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) and (
                following is None or following.type in (tokenize.NEWLINE, tokenize.ENDMARKER))
            kind = DOCSTRING if alone else CODE
        elif token.type == tokenize.NAME:
            kind = CODE
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.type
        if kind is None:
            continue
        for offset, written, name in names.matches(token.string):
            line = token.start[0] + token.string.count("\n", 0, offset)
            found.append(Hit(line, written, name, kind))
        if kind == CODE and names.regex.search(token.string):
            code_lines.add(token.start[0])
    # A dotted catalog name written as attribute access (config.algorithm.filter_groups)
    # is tokenised into parts, and a key and its value are tokens apart: read the code
    # lines naming a key again as whole text.
    lines = text.splitlines()
    for number in sorted(code_lines):
        if number <= len(lines):
            code = lines[number - 1].split("#", 1)[0]
            found += [h for h in _each(names, code, number, CODE)
                      if "." in h.text or kind_of(h.name) == VALUE]
    return found


def _yaml(text, names):
    try:
        documents = list(yaml.compose_all(text, Loader=_LOADER))
    except yaml.YAMLError:
        return None
    found = []

    def walk(node, path):
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                where = f"{path}.{key.value}" if path else str(key.value)
                if isinstance(key, yaml.ScalarNode):
                    line = key.start_mark.line + 1
                    found.extend(_each(names, str(key.value), line, CONFIG, where))
                    if isinstance(value, yaml.ScalarNode):  # a value name: the key set so
                        found.extend(h for h in _each(names, f"{key.value}: {value.value}",
                                                      line, CONFIG, where)
                                     if kind_of(h.name) == VALUE)
                walk(value, where)
        elif isinstance(node, yaml.SequenceNode):
            for value in node.value:
                walk(value, path)
        elif isinstance(node, yaml.ScalarNode) and isinstance(node.value, str):
            first = node.start_mark.line + 1
            for offset, line in enumerate(node.value.splitlines() or [""]):
                found.extend(_each(names, line, first + offset, CONFIG, f"{path}.{line.strip()}"))

    for document in documents:
        walk(document, "")
    config_lines = {h.line for h in found}
    # What the parser did not see as a key or a value on a line is a comment.
    for number, line in enumerate(text.splitlines(), start=1):
        if "#" in line:
            comment = line[line.index("#"):]
            if number not in config_lines or names.regex.search(comment):
                found.extend(_each(names, comment, number, COMMENT))
    return found


def _json(text, names):
    try:
        json.loads(text)
    except ValueError:
        return None
    return _lines(text, names, CONFIG, comments=False)


def _toml(text, names):
    try:
        tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeError):
        return None
    return _lines(text, names, CONFIG)


def _lines(text, names, kind, comments=True):
    """By line: the text before a `#` or `//` comment is `kind`, the rest a comment; lines
    inside or opening a C-style block comment are comments."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not names.regex.search(line):
            continue
        stripped = line.lstrip()
        if comments and stripped.startswith(("/*", "*", "<!--")):
            found.extend(_each(names, line, number, COMMENT))
            continue
        cut = _comment_start(line) if comments else None
        code, comment = (line, "") if cut is None else (line[:cut], line[cut:])
        found.extend(_each(names, code, number, kind))
        found.extend(_each(names, comment, number, COMMENT))
    return found


def _comment_start(line):
    """Where a `#` or `//` comment starts on the line, outside quotes (None: no comment)."""
    quote = None
    for match in re.finditer(r"\\.|[\"']|(?:(?<=\s)|^)(?:#|//)", line):
        token = match.group(0)
        if token.startswith("\\"):
            continue
        if token in "\"'":
            quote = None if quote == token else (quote or token)
        elif quote is None:
            return match.start()
    return None


# --- lines as tokens: what a rename is ------------------------------------------------

_TOKEN = re.compile(r"--?[A-Za-z_][A-Za-z0-9_.-]*|[A-Za-z_][A-Za-z0-9_.-]*|\d+(?:\.\d+)?|\S")
_IDENTIFIER = re.compile(r"--?[A-Za-z_][A-Za-z0-9_.-]*|[A-Za-z_][A-Za-z0-9_.-]*")


def tokens(line):
    return _TOKEN.findall(line)


def replaced_token(removed, added):
    """(old, new) when `added` is `removed` with exactly one identifier token replaced by
    another, else None: `--enable-off-policy-correction` → `--use-tis` is such a line pair;
    `"group_norm"]` → `"group_norm", "dr_grpo"]` is not (a list gained an element)."""
    old, new = tokens(removed), tokens(added)
    if len(old) != len(new):
        return None
    changed = [(a, b) for a, b in zip(old, new) if a != b]
    if len(changed) != 1:
        return None
    a, b = changed[0]
    return (a, b) if _IDENTIFIER.fullmatch(a) and _IDENTIFIER.fullmatch(b) else None


# --- method names in thread text -------------------------------------------------------

def method_forms(name):
    """How a method's name is written in a title: `Truncated importance sampling (TIS)` as
    either part, `Clip-higher` also as `clip higher` or `clip_higher`."""
    parts = [name]
    bracket = re.fullmatch(r"\s*(.+?)\s*\((.+)\)\s*", name)
    if bracket:
        parts = [bracket.group(1), *[p.strip() for p in bracket.group(2).split(",")
                                     if len(p.strip()) >= 3 and " " not in p.strip()]]
    found = []
    for part in parts:
        words = re.split(r"[\s_-]+", part.strip())
        found += [part, " ".join(words), "-".join(words), "_".join(words)]
    return [f for f in dict.fromkeys(found) if len(f) >= 3]


def method_pattern(name):
    body = "|".join(re.escape(f).replace(r"\ ", r"[\s_-]+")
                    for f in sorted(method_forms(name), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_.-])(?:{body})(?![A-Za-z0-9_]|-[A-Za-z0-9_])",
                      re.IGNORECASE)


def methods_named(text, methods):
    """The methods whose name the text uses. The longest name at a place wins: "Dr. GRPO"
    names Dr. GRPO, not also GRPO."""
    spans = []
    for method in methods:
        for match in method_pattern(method.name).finditer(text):
            spans.append((match.start(), match.end(), method))
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    taken, named = [], []
    for start, end, method in spans:
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        if method not in named:
            named.append(method)
    return named

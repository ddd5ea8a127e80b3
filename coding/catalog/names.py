"""Name forms and where a name counts: the one place that says how an option or method
name is spelled in code, on the command line, in config files and in thread titles.

A catalog entry `disable_grpo_std_normalization` is the same option as the flag
`--disable-grpo-std-normalization`, the key `disable-grpo-std-normalization:` and the
override `algorithm.disable_grpo_std_normalization=true`; a dotted entry
`algorithm.filter_groups` is the nested YAML key `filter_groups` under `algorithm`.
A name counts as code or configuration only: Python comments and docstrings, YAML and
TOML comments, and `#` or `//` comments of other files are mentions, never landings.
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
# Characters that continue an identifier or a dashed flag: a name inside a longer one is
# another name (`gspo` is not in `gspo_like`, `use-tis` is not in `use-tis-v2`).
_WORD = r"[A-Za-z0-9_]"


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
    """The option names of one scan: which catalog name a matched text belongs to."""

    def __init__(self, names):
        self.names = sorted(set(names))
        self.regex = pattern(self.names)
        self.texts = searched(self.names)
        self.by_normal = {}
        for name in self.names:
            self.by_normal.setdefault(normal(name), set()).add(name)
            if "." in normal(name):
                self.by_normal.setdefault(leaf(name), set()).add(name)

    def of(self, text, path=""):
        """The catalog names the matched text is a form of. A dotted catalog name matched
        by its last part alone needs `path` (the text's dotted config path) to end with it."""
        found = set()
        for name in self.by_normal.get(normal(text), ()):
            if "." not in normal(name) or normal(text) == normal(name) or \
                    normal(path).endswith(normal(name)):
                found.add(name)
        return found

    def find(self, text):
        return [(m.start(), m.group(0)) for m in self.regex.finditer(text)]

    def search(self, text):
        """Whether any form is in the text: a plain substring test first (fast), the
        whole-word regex only when one is there."""
        return any(t in text for t in self.texts) and self.regex.search(text) is not None


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
    for _, match in names.find(text):
        for name in names.of(match, path or match):
            yield Hit(line, match, name, kind)


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
        for offset, match in names.find(token.string):
            line = token.start[0] + token.string.count("\n", 0, offset)
            found += [Hit(line, match, name, kind) for name in names.of(match, match)]
            if token.type == tokenize.NAME:
                code_lines.add(line)
    # A dotted catalog name written as attribute access (config.algorithm.filter_groups)
    # is tokenised into parts: read the code lines naming a part again as whole text.
    lines = text.splitlines()
    for number in sorted(code_lines):
        if number <= len(lines) and "." in lines[number - 1]:
            code = lines[number - 1].split("#", 1)[0]
            found += [h for h in _each(names, code, number, CODE) if "." in h.text]
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
                    found.extend(_each(names, str(key.value), key.start_mark.line + 1, CONFIG,
                                       where))
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

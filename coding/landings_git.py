"""Reading a framework's history for option names: one `git log --raw` for the commits and
the blobs they change, one long-running `git cat-file --batch` for the blobs' text.

Nothing here aborts on an absent object. A partial clone (`git clone --filter=blob:none`)
holds the commits and trees but only the blobs it checked out, and a clone may lack large
or LFS files: such blobs are skipped, counted and their paths reported, and the scan goes
on with what can be read. Git is never asked to fetch a missing blob (it would contact
the remote once per blob, and git before 2.45 dies when that fails).
"""

import fnmatch
import os
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from . import landings_names as names_

ZERO = "0" * 40
# A first appearance among this many changed files is a bulk change (an import, a sync).
BULK_FILES = 40
# Paths never read by default: prose, lock files, vendored code and data.
DEFAULT_EXCLUDE = [
    "*.md", "*.rst", "*.txt", "*.ipynb", "docs/*", "doc/*",
    "*.lock", "*-lock.json", "*.lock.json", "go.sum",
    "vendor/*", "*/vendor/*", "third_party/*", "*/third_party/*", "3rdparty/*",
    "*.csv", "*.tsv", "*.jsonl", "*.parquet", "*.arrow", "*.npy", "*.npz", "*.pkl", "*.pt",
    "*.bin", "*.safetensors", "*.ckpt", "*.h5", "*.zip", "*.gz", "*.tar", "*.png", "*.jpg",
    "*.jpeg", "*.gif", "*.svg", "*.pdf", "data/*", "*/data/*.json", "datasets/*",
]
MAX_BLOB = 2_000_000  # bytes: a larger file is data, not code


class GitError(Exception):
    pass


def git(repo, *args):
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True, env=_no_fetch()).stdout
    except FileNotFoundError as error:
        raise GitError("git is not installed") from error
    except subprocess.CalledProcessError as error:
        raise GitError(f"git {' '.join(args[:2])} in {repo}: {error.stderr.strip()}") from error


def _no_fetch():
    # Newer git honours GIT_NO_LAZY_FETCH; older git is kept off the network by allowing
    # no transport at all.
    return {**os.environ, "GIT_NO_LAZY_FETCH": "1", "GIT_ALLOW_PROTOCOL": "none",
            "GIT_TERMINAL_PROMPT": "0"}


def is_partial_clone(repo):
    """Whether the clone was made with a filter, so blobs may be absent by design."""
    result = subprocess.run(["git", "-C", str(repo), "config", "--get-regexp",
                             r"^(remote\..*\.promisor|extensions\.partialclone)$"],
                            capture_output=True, text=True, env=_no_fetch())
    return any(line.split()[-1].lower() not in ("false", "0", "no")
               for line in result.stdout.splitlines() if line.split())


def present_objects(repo):
    """The objects this clone holds (listing them never fetches)."""
    out = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects",
                          "--batch-check=%(objectname)"], capture_output=True, env=_no_fetch())
    return set(out.stdout.split())


class CatFile:
    """One `git cat-file --batch` process for all the blobs of a scan. `read` gives a
    blob's bytes, or None when the clone does not have it."""

    def __init__(self, repo, present=None):
        self.repo, self.present, self.process = str(repo), present, None
        self.missing = 0

    def _start(self):
        self.process = subprocess.Popen(
            ["git", "-C", self.repo, "cat-file", "--batch"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_no_fetch())

    def read(self, sha):
        if self.present is not None and sha.encode() not in self.present:
            self.missing += 1
            return None
        if self.process is None:
            self._start()
        try:
            self.process.stdin.write(sha.encode() + b"\n")
            self.process.stdin.flush()
            header = self.process.stdout.readline()
        except (BrokenPipeError, OSError):
            header = b""
        if not header:  # git died on the object (an older git failing to fetch it): go on
            self.close()
            self.missing += 1
            return None
        parts = header.split()
        if parts[-1] == b"missing" or len(parts) < 3:
            self.missing += 1
            return None
        size = int(parts[2])
        data = self.process.stdout.read(size + 1)[:-1]
        return data

    def close(self):
        if self.process is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
            self.process.kill()
            self.process.wait()
            self.process = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@dataclass
class Commit:
    sha: str
    author: str
    authored_at: datetime
    committed_at: datetime
    subject: str
    changes: list  # (old sha, new sha, status, path)


def commits(repo, span):
    """The first-parent history in `span`, oldest first, each with its changed files
    (a merge against its first parent). Reads commits and trees only, never blobs."""
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--first-parent", "--diff-merges=first-parent", "--raw",
         "--no-renames", "--no-abbrev", "-z", "--reverse",
         "--format=%x01%H%x1f%an%x1f%aI%x1f%cI%x1f%s", span, "--"],
        capture_output=True, env=_no_fetch())
    if out.returncode:
        raise GitError(f"git log in {repo}: {out.stderr.decode(errors='replace').strip()}")
    for chunk in out.stdout.split(b"\x01")[1:]:
        header, _, rest = chunk.partition(b"\0")
        sha, author, authored, committed, subject = header.decode(errors="replace").split(
            "\x1f", 4)
        fields = rest.lstrip(b"\n").split(b"\0")
        changes = []
        for meta, path in zip(fields[0::2], fields[1::2]):
            parts = meta.decode().split()
            if len(parts) >= 5:
                changes.append((parts[2], parts[3], parts[4][0],
                                path.decode(errors="replace")))
        yield Commit(sha, author, datetime.fromisoformat(authored),
                     datetime.fromisoformat(committed), subject.strip(), changes)


@dataclass
class Found:
    """A name's first appearance in code or configuration, or its first mention."""

    name: str
    commit: Commit
    path: str
    line_number: int
    line: str
    kind: str
    variant: str
    files_changed: int
    renamed: bool = False
    rename_reason: str = ""


@dataclass
class History:
    """What a scan read: the first hit of each name, earlier mentions, what it skipped."""

    tip: str = ""
    partial_clone: bool = False
    commits_read: int = 0
    blobs_read: int = 0
    missing_blobs: int = 0
    missing_paths: Counter = field(default_factory=Counter)
    excluded_paths: int = 0
    first: dict = field(default_factory=dict)  # name -> Found (code or config)
    mentions: dict = field(default_factory=dict)  # name -> Found (comment or docstring)


def excluded(path, patterns):
    return any(fnmatch.fnmatch(path, p) for p in patterns)


def scan(repo, span, names, exclude=None, methods=None, report=None):
    """Read the history in `span` once for every option name. `methods` maps each name to
    its method's other names, so a commit that drops one of them while adding another is
    a rename. Stops early once every name has its first hit."""
    exclude = DEFAULT_EXCLUDE if exclude is None else exclude
    methods = methods or {}
    every = names_.Names(names)
    history = History(partial_clone=is_partial_clone(repo))
    present = present_objects(repo) if history.partial_clone else None
    listed = list(commits(repo, span))
    with CatFile(repo, present) as cat:
        wanted = every
        for done, commit in enumerate(listed, start=1):
            history.commits_read += 1
            if _read_commit(cat, commit, wanted, every, exclude, methods, history):
                # Names found need no more looking for: the regex shrinks as the scan goes.
                wanted = names_.Names(n for n in every.names if n not in history.first)
            if report and (done % 200 == 0 or done == len(listed)):
                report(done, len(listed), f"{commit.sha[:10]} {commit.committed_at:%Y-%m-%d}")
            if not wanted.names:
                break
        history.missing_blobs = cat.missing
    if listed:
        history.tip = listed[-1].sha
    return history


def _text(cat, sha, path, history):
    """The blob's text; "" for no blob, a binary or an oversized one; None if absent."""
    if sha == ZERO:
        return ""
    data = cat.read(sha)
    if data is None:
        history.missing_paths[path] += 1
        return None
    history.blobs_read += 1
    if len(data) > MAX_BLOB or b"\0" in data[:8000]:
        return ""
    return data.decode("utf-8", errors="replace")


def _read_commit(cat, commit, wanted, every, exclude, methods, history):
    """Record the commit's first hits; True if it found any name's first hit."""
    changes = []
    for old_sha, new_sha, status, path in commit.changes:
        if excluded(path, exclude):
            history.excluded_paths += 1
        else:
            changes.append((old_sha, new_sha, status, path))
    candidates = []
    for old_sha, new_sha, status, path in changes:
        new = _text(cat, new_sha, path, history)
        if new and wanted.regex.search(new):
            candidates.append((old_sha, new_sha, path, new))
    if not candidates:
        return False
    # Which names the commit's code lost (in any file): a name dropped while another name
    # of the same method arrives is a rename.
    deleted = {old for old, _, status, _ in commit.changes if status == "D"}
    lost, olds = set(), {}
    for old_sha, new_sha, status, path in changes:
        if old_sha == ZERO:
            continue
        old = _text(cat, old_sha, path, history)
        olds[path] = old
        if old and every.regex.search(old):
            new = next((c[3] for c in candidates if c[2] == path), None)
            if new is None:
                new = "" if status == "D" else (_text(cat, new_sha, path, history) or "")
            before = Counter(names_.normal(t) for _, t in every.find(old))
            after = Counter(names_.normal(t) for _, t in every.find(new))
            lost |= {n for n, c in before.items() if c > after.get(n, 0)}
    found = len(history.first)
    for old_sha, new_sha, path, new in candidates:
        if olds.get(path, "") is None:
            continue  # the file's previous version is absent: what the commit added is unknown
        moved = old_sha == ZERO and new_sha in deleted
        _hits_in_file(commit, path, olds.get(path, ""), new, moved, lost, wanted, methods,
                      history)
    return len(history.first) > found


def _hits_in_file(commit, path, old, new, moved, lost, wanted, methods, history):
    old_lines, new_lines = old.splitlines(), new.splitlines()
    unchanged = Counter(old_lines)
    added = set()
    for number, line in enumerate(new_lines, start=1):
        if unchanged[line] > 0:
            unchanged[line] -= 1
        else:
            added.add(number)
    if not added:
        return
    kept = Counter(new_lines)
    removed_lines = []
    for line in old_lines:
        if kept[line] > 0:
            kept[line] -= 1
        else:
            removed_lines.append(line)
    for hit in names_.hits(path, new, wanted):
        if hit.line not in added:
            continue
        counts = hit.kind in names_.COUNTS
        table = history.first if counts else history.mentions
        if hit.name in table or (not counts and hit.name in history.first):
            continue
        line = new_lines[hit.line - 1] if hit.line <= len(new_lines) else ""
        found = Found(hit.name, commit, path, hit.line, line.strip()[:500], hit.kind, hit.text,
                      len(commit.changes))
        if counts:
            found.renamed, found.rename_reason = _rename(hit, line, removed_lines, moved, lost,
                                                         methods)
        table[hit.name] = found


def _rename(hit, line, removed_lines, moved, lost, methods):
    """Why this first appearance may be a rename of something older ('' if it is not)."""
    if moved:
        return True, "the file moved here unchanged"
    for removed in removed_lines:
        pair = names_.replaced_token(removed, line)
        if pair and names_.normal(pair[1]).endswith(names_.normal(hit.text)):
            return True, f"replaces {pair[0]}"
    others = {names_.normal(n) for n in methods.get(hit.name, ())} - {names_.normal(hit.name)}
    dropped = sorted(others & lost)
    if dropped:
        return True, f"the same commit removes {dropped[0]}"
    return False, ""

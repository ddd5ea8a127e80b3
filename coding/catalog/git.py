"""Reading a framework's history for option names: one `git log --raw` for the commits and
the blobs they change, one long-running `git cat-file --batch` for the blobs' text.

Nothing here aborts on an absent object. A partial clone (`git clone --filter=blob:none`)
holds the commits and trees but only the blobs it checked out: before reading, the blobs
the scan needs and lacks are fetched from the clone's promisor remote in batches
(`fetch_blobs`, one `git fetch` a batch). What is still absent (no reachable remote, or a
clone that lost large or LFS files) is skipped, counted and its paths reported, and the
scan goes on with what can be read. Reading never makes git fetch a blob by itself (it
would contact the remote once per blob, and git before 2.45 dies when that fails).
"""

import fnmatch
import functools
import os
import re
import shutil
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from coding.catalog import names as names_

ZERO = "0" * 40
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
SUBMODULE = "160000"  # the tree entry mode of a submodule (gitlink)
FETCH_BATCH = 1000  # absent blobs asked for in one fetch
FETCH_TIMEOUT = 600  # seconds for one batch


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


def promisor_remote(repo):
    """The remote a partial clone fetches its absent objects from (None: it has none)."""
    result = subprocess.run(["git", "-C", str(repo), "config", "--get-regexp",
                             r"^remote\..*\.promisor$"], capture_output=True, text=True,
                            env=_no_fetch())
    for line in result.stdout.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lower() not in ("false", "0", "no"):
            return key[len("remote."):-len(".promisor")]
    result = subprocess.run(["git", "-C", str(repo), "config", "extensions.partialclone"],
                            capture_output=True, text=True, env=_no_fetch())
    return result.stdout.strip() or None


def fetch_blobs(repo, shas, report=None, batch=FETCH_BATCH):
    """Fetch absent blobs from the partial clone's promisor remote, `batch` a request, as
    git's own lazy fetch asks for them. Returns (how many were asked for and came, why the
    rest did not: "" when all came)."""
    remote = promisor_remote(repo)
    if remote is None:
        return 0, "the clone names no remote to fetch from"
    fetched = 0
    for start in range(0, len(shas), batch):
        chunk = shas[start:start + batch]
        try:
            result = subprocess.run(
                ["git", "-C", str(repo), "-c", "fetch.negotiationAlgorithm=noop", "fetch",
                 remote, "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
                 "--filter=blob:none", "--stdin"], input="".join(f"{s}\n" for s in chunk),
                capture_output=True, text=True, timeout=FETCH_TIMEOUT,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
        except subprocess.TimeoutExpired:
            return fetched, f"git fetch from {remote} took over {FETCH_TIMEOUT} s"
        if result.returncode:
            said = (result.stderr.strip().splitlines() or ["no reason given"])[-1]
            return fetched, f"git fetch from {remote}: {said}"
        fetched += len(chunk)
        if report:
            report(0, 0, f"{fetched} of {len(shas)} absent file versions fetched from {remote}")
    return fetched, ""


def present_objects(repo):
    """The objects this clone holds (listing them never fetches)."""
    out = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects",
                          "--batch-check=%(objectname)"], capture_output=True, env=_no_fetch())
    return set(out.stdout.split())


class BlobStream:
    """One `git cat-file --batch --buffer` process for every blob of a scan. A thread feeds
    it the blobs in the order the scan will read them, so git streams them without a round
    trip each; `read` takes the next one: its bytes, or None when the clone lacks it."""

    def __init__(self, repo, shas, present=None):
        self.present, self.missing, self.dead = present, 0, False
        self.process = subprocess.Popen(
            ["git", "-C", str(repo), "cat-file", "--batch", "--buffer"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=_no_fetch())
        wanted = [s for s in shas if self._held(s)]
        self.feeder = threading.Thread(target=self._feed, args=(wanted,), daemon=True)
        self.feeder.start()

    def _held(self, sha):
        return self.present is None or sha.encode() in self.present

    def _feed(self, shas):
        try:
            for start in range(0, len(shas), 512):
                self.process.stdin.write("".join(f"{s}\n" for s in shas[start:start + 512])
                                         .encode())
            self.process.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the scan stopped early and closed the process

    def read(self, sha):
        if not self._held(sha) or self.dead:
            self.missing += 1
            return None
        header = self.process.stdout.readline()
        if not header:  # git died on an object (an older git failing to fetch it): go on
            self.dead = True
            self.missing += 1
            return None
        parts = header.split()
        if parts[0].decode() != sha:
            raise GitError(f"git cat-file answered {parts[0].decode()} for {sha}")
        if parts[-1] == b"missing" or len(parts) < 3:
            self.missing += 1
            return None
        return self.process.stdout.read(int(parts[2]) + 1)[:-1]

    def close(self):
        self.process.kill()
        self.process.wait()
        self.process.stdout.close()
        self.feeder.join()

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


def commits(repo, *revisions, walk=True):
    """The first-parent history in the span `revisions` give, oldest first, each with its
    changed files (a merge against its first parent); with `walk=False` just the commits
    named, in the order given. Reads commits and trees only, never blobs.
    A submodule's entry names a commit of another repository, not a file: it is left out,
    never counted as a blob that could not be read."""
    order = ["--reverse"] if walk else ["--no-walk=unsorted"]
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--first-parent", "--diff-merges=first-parent", "--raw",
         "--no-renames", "--no-abbrev", "-z", *order,
         "--format=%x01%H%x1f%an%x1f%aI%x1f%cI%x1f%s", *revisions, "--"],
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
            if len(parts) >= 5 and SUBMODULE not in (parts[0].lstrip(":"), parts[1]):
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
    fetched_blobs: int = 0  # absent blobs fetched from the partial clone's remote
    fetch_error: str = ""  # why the rest could not be fetched
    commits_read: int = 0
    blobs_read: int = 0
    missing_blobs: int = 0
    missing_paths: Counter = field(default_factory=Counter)
    excluded_paths: int = 0
    first: dict = field(default_factory=dict)  # name -> Found (code or config)
    mentions: dict = field(default_factory=dict)  # name -> Found (comment or docstring)


@functools.lru_cache(maxsize=64)
def _exclusion(patterns):
    if not patterns:
        return re.compile(r"(?!x)x")
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def excluded(path, patterns):
    """Whether `path` matches one of the fnmatch patterns (`*` crosses folders)."""
    return bool(_exclusion(tuple(patterns)).match(path))


def _listed(repo, exclude, history, *revisions, walk=True):
    """The commits with their changes left after the exclusions, and the blobs to read in
    the order _read_commit reads them: each change's new version, then its old one."""
    listed = []
    for commit in commits(repo, *revisions, walk=walk):
        kept = [c for c in commit.changes if not excluded(c[3], exclude)]
        history.excluded_paths += len(commit.changes) - len(kept)
        listed.append((commit, kept))
    order = [sha for _, kept in listed for old, new, _, _ in kept
             for sha in (new, old) if sha != ZERO]
    return listed, order


def judge(repo, at, names, methods, exclude=None):
    """Whether each first hit is a rename, judged again with the whole catalog of today
    (`names`, `methods` as for `scan`): `at` maps a name to the commit its hit is in. A
    scan reads only what it must, so without this a hit found before a sibling name was
    added would keep the verdict of a smaller catalog, and an incremental scan would flag
    otherwise than a fresh one. Returns {name: (renamed, reason)} for the hits found again."""
    if not at:
        return {}
    exclude = DEFAULT_EXCLUDE if exclude is None else exclude
    every, history = names_.Names(names), History()
    listed, order = _listed(repo, exclude, history, *dict.fromkeys(at.values()), walk=False)
    present = present_objects(repo) if is_partial_clone(repo) else None
    verdicts = {}
    with BlobStream(repo, order, present) as blobs:
        for commit, kept in listed:
            history.first = {}
            wanted = names_.Names(name for name, sha in at.items() if sha == commit.sha)
            _read_commit(blobs, commit, kept, wanted, every, methods, history)
            verdicts.update({name: (found.renamed, found.rename_reason)
                             for name, found in history.first.items()})
    return verdicts


def scan(repo, span, names, exclude=None, methods=None, report=None):
    """Read the history in `span` once for every option name. `methods` maps each name to
    its method's other names, so a commit that drops one of them while adding another is
    a rename. Stops early once every name has its first hit."""
    exclude = DEFAULT_EXCLUDE if exclude is None else exclude
    methods = methods or {}
    every = names_.Names(names)
    history = History(partial_clone=is_partial_clone(repo))
    present = present_objects(repo) if history.partial_clone else None
    listed, order = _listed(repo, exclude, history, span)
    if present is not None:
        absent = [sha for sha in dict.fromkeys(order) if sha.encode() not in present]
        if absent:
            history.fetched_blobs, history.fetch_error = fetch_blobs(repo, absent, report)
            present = present_objects(repo)
            if history.fetch_error and report:
                report(0, len(listed), f"{len(absent) - history.fetched_blobs} file versions "
                                       f"the scan needs are absent and could not be fetched "
                                       f"({history.fetch_error}): names not found are not "
                                       f"known, not absent")
    if report:
        report(0, len(listed), f"{len(listed)} commits to read")
    with BlobStream(repo, order, present) as blobs:
        wanted = every
        for done, (commit, kept) in enumerate(listed, start=1):
            history.commits_read += 1
            if _read_commit(blobs, commit, kept, wanted, every, methods, history):
                # Names found need no more looking for: the regex shrinks as the scan goes.
                wanted = names_.Names(n for n in every.names if n not in history.first)
            if report and done % 200 == 0:
                report(done, len(listed), f"{commit.sha[:10]} {commit.committed_at:%Y-%m-%d}")
            if not wanted.names:
                break  # every name found: the later commits cannot change a first hit
        history.missing_blobs = blobs.missing
    if report:
        report(len(listed), len(listed), f"{history.commits_read} commits read, "
                                         f"{len(history.first)} names found")
    if listed:
        history.tip = listed[-1][0].sha
    return history


def _text(data):
    """A blob's text; "" for a binary or an oversized one, None if absent."""
    if data is None:
        return None
    if len(data) > MAX_BLOB or b"\0" in data[:8000]:
        return ""
    return data.decode("utf-8", errors="replace")


def _read_commit(blobs, commit, changes, wanted, every, methods, history):
    """Record the commit's first hits; True if it found any name's first hit."""
    news, olds = {}, {}
    for old_sha, new_sha, status, path in changes:
        for sha, into in ((new_sha, news), (old_sha, olds)):
            if sha == ZERO:
                into[path] = ""
                continue
            data = blobs.read(sha)
            if data is None:
                history.missing_paths[path] += 1
            else:
                history.blobs_read += 1
            into[path] = data
    candidates = []
    for old_sha, new_sha, status, path in changes:
        new = news[path] = _text(news[path]) if isinstance(news[path], bytes) else news[path]
        if new and wanted.search(new):
            candidates.append((old_sha, new_sha, path, new))
    if not candidates:
        return False
    # Which names the commit's code lost (in any file): a name dropped while another name
    # of the same method arrives is a rename.
    deleted = {old for old, _, status, _ in commit.changes if status == "D"}
    lost = set()
    for path, data in olds.items():
        old = olds[path] = _text(data) if isinstance(data, bytes) else data
        if old and every.search(old):
            before = Counter(name for _, _, name in every.matches(old))
            after = Counter(name for _, _, name in every.matches(news[path] or ""))
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
    if not added or not any(wanted.search(new_lines[n - 1]) for n in added):
        return  # no added line names a name still looked for: nothing to classify
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
            added_lines = [new_lines[n - 1] for n in sorted(added)]
            found.renamed, found.rename_reason = _rename(hit, line, removed_lines, added_lines,
                                                         moved, lost, methods)
        table[hit.name] = found


def _rename(hit, line, removed_lines, added_lines, moved, lost, methods):
    """Why this first appearance may be a rename of something older ('' if it is not)."""
    if moved:
        return True, "the file moved here unchanged"
    for removed in removed_lines:
        pair = names_.replaced_token(removed, line)
        if pair and names_.normal(pair[1]).endswith(names_.normal(hit.text)) and \
                not _split(pair, removed_lines, added_lines):
            return True, f"replaces {pair[0]}"
    dropped = sorted((set(methods.get(hit.name, ())) - {hit.name}) & lost)
    if dropped:
        return True, f"the same commit removes {dropped[0]}"
    return False, ""


def _split(pair, removed_lines, added_lines):
    """Whether the old name gave way to several new ones at once (`ratio_eps` to
    `ratio_eps_min` and `ratio_eps_max`): each sibling is a new option, not the old one
    renamed."""
    old, new = (names_.normal(t) for t in pair)
    had = {names_.normal(t) for line in removed_lines for t in names_.tokens(line)}
    siblings = {names_.normal(t) for line in added_lines for t in names_.tokens(line)
                if names_.normal(t).startswith(f"{old}_")} - had - {new}
    return bool(siblings)


# --- writing histories (the demo and the benchmark) ------------------------------

def write_history(path, commits, branch="main"):
    """A bare repository at `path` holding `commits`, oldest first: dicts of message,
    author, authored (aware datetime), committed (aware datetime) and files {path: text,
    or None to delete}. One `git fast-import` writes them all."""
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(path)], check=True,
                   capture_output=True)
    stream = bytearray()
    for commit in commits:
        stream += f"commit refs/heads/{branch}\n".encode()
        for role, when in (("author", commit["authored"]), ("committer", commit["committed"])):
            stream += f"{role} {commit['author']} <{_email(commit['author'])}> " \
                      f"{int(when.timestamp())} {_zone(when)}\n".encode()
        message = commit["message"].encode()
        stream += b"data %d\n%s\n" % (len(message), message)
        for name, text in commit["files"].items():
            if text is None:
                stream += f"D {name}\n".encode()
            else:
                data = text.encode()
                stream += f"M 100644 inline {name}\n".encode() + b"data %d\n%s\n" % (
                    len(data), data)
        stream += b"\n"
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input=bytes(stream),
                   check=True, capture_output=True)
    subprocess.run(["git", "-C", str(path), "symbolic-ref", "HEAD", f"refs/heads/{branch}"],
                   check=True, capture_output=True)
    return path


def _email(author):
    return author.lower().replace(" ", ".") + "@example.org"


def _zone(when):
    minutes = int(when.utcoffset().total_seconds() // 60)
    return f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"

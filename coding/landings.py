"""Method landings from the frameworks' git histories, and what they say about each paper.

A method lands in a framework with the first commit on the framework's main branch
whose code adds one of the method's option names (the pickaxe of `git log -S`,
checked for a whole-word match in added lines; documentation files are left out).
Merge commits count by their diff against the first parent, so merged pull requests
and squashed ones are both seen. A first appearance in a commit touching many files,
or one that renames an existing identifier to the option name, is marked as an upper
bound: the method may have been there earlier under another shape.
"""

import difflib
import re
import statistics
import subprocess
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ingest.models import Document
from workbench.jobs import job_handler

from .models import Decision, FrameworkScan, Landing, Method, MethodLink

# A first appearance among this many changed files is a bulk change (an import, a move).
BULK_FILES = 40
CODE_ONLY = [".", ":(exclude)*.md", ":(exclude)*.rst", ":(exclude)*.txt", ":(exclude)docs/**"]
PULL_REQUEST = re.compile(r"\(#(\d+)\)\s*$|Merge pull request #(\d+)")
INCLUSION_FIELDS = ["included_in", "first_landing", "days_to_first_landing"]


class GitError(Exception):
    pass


@dataclass
class Appearance:
    commit: str
    committed_at: datetime
    author: str
    subject: str
    files_changed: int
    renamed: bool

    @property
    def pull_request(self):
        match = PULL_REQUEST.search(self.subject)
        return int(match.group(1) or match.group(2)) if match else None

    @property
    def upper_bound(self):
        return self.renamed or self.files_changed >= BULK_FILES


def git(repo, *args):
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True).stdout
    except FileNotFoundError as error:
        raise GitError("git is not installed") from error
    except subprocess.CalledProcessError as error:
        raise GitError(f"git {' '.join(args[:2])} in {repo}: {error.stderr.strip()}") from error


def head(repo, branch):
    return git(repo, "rev-parse", "--verify", f"{branch}^{{commit}}").strip()


def first_appearance(repo, branch, name, since=None):
    """The first commit on the branch (after `since`, if given) whose code adds `name`."""
    span = f"{since}..{branch}" if since else branch
    listed = git(repo, "log", "--first-parent", "--diff-merges=first-parent", "--no-patch",
                 "--reverse", f"-S{name}", "--format=%H%x1f%cI%x1f%an%x1f%s", span, "--",
                 *CODE_ONLY)
    for line in filter(None, listed.splitlines()):
        commit, when, author, subject = line.split("\x1f", 3)
        added, renamed = _added_lines(repo, commit, name)
        if added:
            return Appearance(commit, datetime.fromisoformat(when), author, subject,
                              _files_changed(repo, commit), renamed)
    return None


def _words(name):
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")


def _added_lines(repo, commit, name):
    """Whether the commit adds a line naming `name` as a whole word, and whether that line
    replaces a similar line without it (a rename of an existing identifier)."""
    diff = git(repo, "show", "--format=", "--diff-merges=first-parent", "-U0", commit, "--",
               *CODE_ONLY)
    word = _words(name)
    added_any = renamed = False
    removed, added = [], []
    for line in diff.splitlines() + ["@@"]:
        if line.startswith("@@"):
            hits = [a for a in added if word.search(a)]
            added_any |= bool(hits)
            renamed |= any(difflib.SequenceMatcher(None, r, a).ratio() >= 0.6
                           for a in hits for r in removed if not word.search(r))
            removed, added = [], []
        elif line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    return added_any, renamed


def _files_changed(repo, commit):
    names = git(repo, "show", "--format=", "--diff-merges=first-parent", "--name-only", commit)
    return len([n for n in names.splitlines() if n.strip()])


def scan_framework(framework, repo, branch=None, report=None):
    """Record the first landing of each catalog method in this framework. Incremental:
    option names already searched are looked for only in commits after the last scan."""
    branch = branch or framework.main_branch
    tip = head(repo, branch)
    scan, _ = FrameworkScan.objects.get_or_create(framework=framework,
                                                  defaults={"branch": branch})
    since = scan.last_commit if scan.branch == branch else ""
    options = list(framework.option_names.select_related("method").order_by("method_id", "pk"))
    found = 0
    for done, option in enumerate(options, start=1):
        # A name searched through `since` can only appear later than a landing already found;
        # a name never searched (added, renamed) may find an earlier one: its whole history.
        searched = since and option.name in scan.searched_names
        if searched and Landing.objects.filter(method=option.method, framework=framework).exists():
            continue
        appearance = first_appearance(repo, branch, option.name, since if searched else None)
        if appearance:
            landing = record_landing(option.method, framework, option.name, appearance)
            found += landing.commit == appearance.commit
        if report:
            report(done, len(options), f"{framework.name}: {option.name}")
    scan.branch, scan.last_commit = branch, tip
    scan.searched_names = sorted({o.name for o in options})
    scan.save()
    return {"framework": framework.name, "commit": tip, "landings_found": found,
            "landings": Landing.objects.filter(framework=framework).count()}


@transaction.atomic
def record_landing(method, framework, option_name, appearance):
    """Keep the earliest appearance over all of the method's option names."""
    current = Landing.objects.select_for_update().filter(method=method, framework=framework).first()
    if current and current.committed_at <= appearance.committed_at:
        return current
    fields = {"option_name": option_name, "commit": appearance.commit,
              "committed_at": appearance.committed_at, "author": appearance.author,
              "pull_request": appearance.pull_request, "files_changed": appearance.files_changed,
              "upper_bound": appearance.upper_bound}
    landing, _ = Landing.objects.update_or_create(method=method, framework=framework,
                                                  defaults=fields)
    return landing


# --- papers, threads and methods --------------------------------------------------

def link_documents(study):
    """Tie the study's documents to methods: the paper with a method's arXiv identifier is
    its source; a thread naming the identifier cites it, one naming an option proposes it."""
    methods = list(Method.objects.filter(study=study).prefetch_related("option_names__framework"))
    documents = Document.objects.filter(items__study=study, items__deleted_at__isnull=True)
    made = 0
    for document in documents.prefetch_related("posts").iterator(chunk_size=500):
        for method, kind in _mentions(document, methods):
            _, created = MethodLink.objects.get_or_create(method=method, document=document,
                                                          kind=kind)
            made += created
    return made


def _mentions(document, methods):
    if document.kind == Document.Kind.PAPER:
        return [(m, MethodLink.Kind.SOURCE) for m in methods
                if m.source_arxiv_id and m.source_arxiv_id == document.key]
    text = " ".join([document.title, *(p.body for p in document.posts.all())])
    framework = document.metadata.get("framework")
    found = []
    for method in methods:
        options = [o.name for o in method.option_names.all()
                   if not framework or o.framework.name == framework]
        if any(_words(name).search(text) for name in options):
            found.append((method, MethodLink.Kind.PROPOSES))
        elif method.source_arxiv_id and method.source_arxiv_id in text:
            found.append((method, MethodLink.Kind.CITES))
    return found


def first_public(method):
    """The method's first public date as a date (a month or a year alone counts from its
    first day)."""
    text = method.first_public
    return datetime.fromisoformat(text + "-01-01"[len(text) - 4:]).date()


def paper_inclusion(study):
    """{document id: {included_in, first_landing, days_to_first_landing}} for source papers."""
    result = {}
    links = (MethodLink.objects.filter(method__study=study, kind=MethodLink.Kind.SOURCE)
             .select_related("document").prefetch_related("method__landings__framework"))
    for link in links:
        landings = sorted(link.method.landings.all(), key=lambda landing: landing.committed_at)
        entry = result.setdefault(link.document_id, {"included_in": set(), "first_landing": None,
                                                     "days_to_first_landing": None})
        entry["included_in"] |= {landing.framework.name for landing in landings}
        if landings and (entry["first_landing"] is None
                         or landings[0].committed_at < entry["first_landing"]):
            entry["first_landing"] = landings[0].committed_at
            start = link.document.published or timezone.make_aware(
                datetime.combine(first_public(link.method), datetime.min.time()))
            entry["days_to_first_landing"] = (landings[0].committed_at - start).days
    for entry in result.values():
        entry["included_in"] = sorted(entry["included_in"])
    return result


def blind_inclusion(study):
    """Inclusion is exactly what coders must not see: it joins the blinded fields."""
    missing = [f for f in INCLUSION_FIELDS if f not in study.blinded_fields]
    if missing:
        study.blinded_fields = [*study.blinded_fields, *missing]
        study.save(update_fields=["blinded_fields"])


# --- the catalog and framework pages ------------------------------------------------

def catalog(study):
    """One row per method: source, first public, frameworks now, days to first landing."""
    rows = []
    for method in (Method.objects.filter(study=study)
                   .prefetch_related("landings__framework", "option_names__framework")):
        landings = sorted(method.landings.all(), key=lambda landing: landing.committed_at)
        rows.append({
            "method": method, "landings": landings,
            "frameworks": sorted({landing.framework.name for landing in landings}),
            "tracked": sorted({o.framework.name for o in method.option_names.all()}),
            "days_to_first": (landings[0].committed_at.date() - first_public(method)).days
            if landings else None,
        })
    return rows


def framework_report(framework):
    """Methods landed with their delay, and the thread proposals with their coded outcome."""
    landed = []
    for landing in framework.landings.select_related("method").order_by("committed_at"):
        days = (landing.committed_at.date() - first_public(landing.method)).days
        landed.append({"landing": landing, "days": days})
    proposals = (MethodLink.objects.filter(method__study=framework.study,
                                           kind=MethodLink.Kind.PROPOSES,
                                           document__metadata__framework=framework.name)
                 .select_related("method", "document"))
    outcomes = {d.item.document_id: d.value for d in Decision.objects.current()
                .filter(item__study=framework.study, question_key="outcome")
                .select_related("item")}
    return {
        "framework": framework, "landed": landed,
        "median_days": statistics.median([row["days"] for row in landed]) if landed else None,
        "proposals": [{"link": link, "outcome": outcomes.get(link.document_id)}
                      for link in proposals],
    }


@job_handler("scan_framework")
def run_scan(job, report):
    """A rescan is harmless: landings are upserted and only new commits are read."""
    from .models import Framework

    framework = Framework.objects.select_related("study").get(pk=job.params["framework"])
    summary = scan_framework(framework, job.params["repo"], job.params.get("branch"), report)
    summary["links_made"] = link_documents(framework.study)
    blind_inclusion(framework.study)
    return {"counts": summary}

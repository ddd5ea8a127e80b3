"""Method landings from the frameworks' git histories, and what they say about each paper.

A scan reads the framework's first-parent history once for every option name of every
method (coding.catalog.git): each name's own first appearance in code or configuration
is kept (OptionHit), and a method lands with the earliest of its names' hits, so a renamed
option shows as two names on two dates. Names are matched in all their forms
(coding.catalog.names: `--kebab-flags`, dotted config keys); comments, docstrings and
prose are mentions, never landings. Merge commits count by their diff against the first
parent. A first appearance in a commit touching many files (a bulk sync) or one that
renames an older name is an upper bound. Dates keep their offsets: a landing's day is the
committer's own calendar date. docs/scanning.md says more.
"""

import re
import statistics
from collections import Counter
from datetime import datetime
from datetime import timezone as dt_timezone

from django.db import transaction
from django.db.models import Prefetch
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from coding.catalog import git as landings_git
from coding.catalog import names as landings_names
from coding.catalog.git import DEFAULT_EXCLUDE, GitError, git  # noqa: F401 (re-exported)
from coding.models import Decision, FrameworkScan, Landing, Method, MethodLink
from coding.models.catalog import (  # noqa: F401 (re-exported)
    BATCH_SYNC_DAYS, BULK_FILES, OptionHit,
)
from ingest.models import Document
from workbench.jobs import job_handler

PULL_REQUEST = re.compile(r"\(#(\d+)\)\s*$|Merge pull request #(\d+)")
INCLUSION_FIELDS = ["included_in", "first_landing", "days_to_first_landing"]
MISSING_PATHS_KEPT = 50


def pull_request(subject):
    match = PULL_REQUEST.search(subject)
    return int(match.group(1) or match.group(2)) if match else None


def head(repo, branch):
    return git(repo, "rev-parse", "--verify", f"{branch}^{{commit}}").strip()


def _is_ancestor(repo, older, newer):
    try:
        git(repo, "merge-base", "--is-ancestor", older, newer)
        return True
    except GitError:
        return False


def scan_framework(framework, repo, branch=None, report=None):
    """Find each option name's first hit in this framework and each method's landing.
    Incremental: a name already searched through the last scanned commit is looked for
    only in the commits after it; a name with its hit found is not looked for again."""
    branch = branch or framework.main_branch
    tip = head(repo, branch)
    scan, _made = FrameworkScan.objects.get_or_create(framework=framework,
                                                  defaults={"branch": branch})
    since = scan.last_commit if scan.branch == branch else ""
    if since and not _is_ancestor(repo, since, tip):
        since = ""  # the branch was rewritten: read it all again
    # Another branch, or a rewritten one: what was found on the old history does not hold.
    reset = bool(scan.last_commit) and not since
    options = list(framework.option_names.select_related("method").order_by("pk"))
    hit = set() if reset else set(
        OptionHit.objects.filter(option__in=options).values_list("option_id", flat=True))
    names = sorted({o.name for o in options})
    # A name is looked for while one of its options (one per method using it) has no hit.
    looked_for = {o.name for o in options if o.pk not in hit}
    searched = set(scan.searched_names) if since else set()
    full = [n for n in names if n in looked_for and n not in searched]
    newer = [n for n in names if n in looked_for and n in searched]
    methods = {}
    for option in options:
        methods.setdefault(option.name, set()).update(
            o.name for o in options if o.method_id == option.method_id)
    exclude = DEFAULT_EXCLUDE if framework.scan_exclude is None else framework.scan_exclude
    passes = [(tip, full), (f"{since}..{tip}", newer)]
    histories = [landings_git.scan(repo, span, wanted, exclude, methods, report)
                 for span, wanted in passes if wanted]
    with transaction.atomic():
        if reset:
            OptionHit.objects.filter(option__framework=framework).delete()
            Landing.objects.filter(framework=framework).delete()
            scan.mentions = {}
        mentions = dict(scan.mentions)
        for history in histories:
            for name, found in history.mentions.items():
                mentions.setdefault(name, _mention(found))
            for name, found in history.first.items():
                for option in (o for o in options if o.name == name):
                    _record_hit(option, found, mentions.get(name))
        _judge_again(framework, repo, names, methods, exclude)
        found = _rebuild_landings(framework)
        scan.branch, scan.last_commit = branch, tip
        scan.searched_names = names
        hit_names = set(OptionHit.objects.filter(option__framework=framework)
                        .values_list("option__name", flat=True))
        scan.mentions = {n: m for n, m in mentions.items() if n in names and n not in hit_names}
        # What could not be read stays reported until a scan reads the whole history again.
        again = not since
        missing = Counter() if again else Counter(dict(map(tuple, scan.missing_paths)))
        missing = sum((h.missing_paths for h in histories), start=missing)
        scan.partial_clone = landings_git.is_partial_clone(repo)
        scan.fetched_blobs = sum(h.fetched_blobs for h in histories)
        scan.fetch_error = next((h.fetch_error for h in histories if h.fetch_error), "")[:300]
        scan.commits_read = sum(h.commits_read for h in histories)
        scan.missing_blobs = (0 if again else scan.missing_blobs) + sum(
            h.missing_blobs for h in histories)
        scan.missing_paths = [[p, n] for p, n in missing.most_common(MISSING_PATHS_KEPT)]
        scan.excluded_paths = (0 if again else scan.excluded_paths) + sum(
            h.excluded_paths for h in histories)
        scan.save()
    return {"framework": framework.name, "commit": tip, "landings_found": found,
            "landings": Landing.objects.filter(framework=framework).count(),
            "names_found": sum(len(h.first) for h in histories),
            "commits_read": scan.commits_read, "partial_clone": scan.partial_clone,
            "fetched_blobs": scan.fetched_blobs, "fetch_error": scan.fetch_error,
            "complete": scan.complete,
            "missing_blobs": scan.missing_blobs, "missing_paths": scan.missing_paths,
            "excluded_paths": scan.excluded_paths}


def _offset(moment):
    return int(moment.utcoffset().total_seconds() // 60)


def _mention(found):
    return {"commit": found.commit.sha, "committed_on": found.commit.committed_at.date()
            .isoformat(), "path": found.path, "line_number": found.line_number,
            "line": found.line, "kind": found.kind}


def _record_hit(option, found, mention):
    """Keep the option name's earliest hit (a rescan from another branch may find one)."""
    commit = found.commit
    current = OptionHit.objects.filter(option=option).first()
    if current and current.committed_at <= commit.committed_at:
        return current
    if mention and mention["committed_on"] > commit.committed_at.date().isoformat():
        mention = None
    fields = {
        "commit": commit.sha, "subject": commit.subject[:500], "author": commit.author[:200],
        "authored_at": commit.authored_at, "author_offset": _offset(commit.authored_at),
        "committed_at": commit.committed_at, "committer_offset": _offset(commit.committed_at),
        "committed_on": commit.committed_at.date(), "pull_request": pull_request(commit.subject),
        "path": found.path[:500], "line_number": found.line_number, "line": found.line[:500],
        "kind": found.kind, "variant": found.variant[:200], "files_changed": found.files_changed,
        "renamed": found.renamed, "rename_reason": found.rename_reason[:300], "mention": mention}
    hit, _made = OptionHit.objects.update_or_create(option=option, defaults=fields)
    return hit


def _judge_again(framework, repo, names, methods, exclude):
    """Judge every hit's rename flag again with today's catalog, so a fresh scan and an
    incremental one of the same history give the same flags (landings_git.judge)."""
    hits = list(OptionHit.objects.filter(option__framework=framework).select_related("option"))
    verdicts = landings_git.judge(repo, {h.option.name: h.commit for h in hits}, names,
                                  methods, exclude)
    for hit in hits:
        verdict = verdicts.get(hit.option.name)
        if verdict is not None and verdict != (hit.renamed, hit.rename_reason):
            hit.renamed, hit.rename_reason = verdict[0], verdict[1][:300]
            hit.save(update_fields=["renamed", "rename_reason"])


def _rebuild_landings(framework):
    """Each method's landing is its names' earliest hit; returns how many were new or moved."""
    hits = (OptionHit.objects.filter(option__framework=framework)
            .select_related("option").order_by("committed_at", "pk"))
    earliest = {}
    for hit in hits:
        earliest.setdefault(hit.option.method_id, hit)
    current = {landing.method_id: landing for landing in framework.landings.all()}
    changed = 0
    for method_id, hit in earliest.items():
        landing = current.get(method_id)
        if landing and landing.hit_id == hit.pk and landing.commit == hit.commit and \
                landing.upper_bound == hit.upper_bound:
            continue
        Landing.objects.update_or_create(method_id=method_id, framework=framework, defaults={
            "option_name": hit.option.name, "commit": hit.commit,
            "committed_at": hit.committed_at, "landed_on": hit.committed_on,
            "author": hit.author, "pull_request": hit.pull_request,
            "files_changed": hit.files_changed, "upper_bound": hit.upper_bound, "hit": hit})
        changed += landing is None or landing.commit != hit.commit
    return changed


def hit_payload(hit):
    """An option name's first hit as plain data (API, command)."""
    return {"commit": hit.commit, "subject": hit.subject, "author": hit.author,
            "authored_at": hit.authored_at.isoformat(), "author_offset": hit.author_offset,
            "committed_at": hit.committed_at.isoformat(),
            "committer_offset": hit.committer_offset,
            "committed_on": hit.committed_on.isoformat(), "pull_request": hit.pull_request,
            "path": hit.path, "line_number": hit.line_number, "line": hit.line,
            "kind": hit.kind, "variant": hit.variant, "files_changed": hit.files_changed,
            "renamed": hit.renamed, "rename_reason": hit.rename_reason, "bulk": hit.bulk,
            "batch_sync": hit.batch_sync, "upper_bound": hit.upper_bound,
            "mention": hit.mention}


# Where a scan found a name (landings_names: code, config, comment, docstring), as pages say it.
HIT_KIND_WORDS = {"code": gettext_lazy("code"), "config": gettext_lazy("config"),
                  "comment": gettext_lazy("comment"), "docstring": gettext_lazy("docstring")}


# The three kinds of catalog name (landings_names.kind_of), as pages say them.
NAME_KIND_WORDS = {landings_names.OPTION: gettext_lazy("option name"),
                   landings_names.PART: gettext_lazy("part of an identifier"),
                   landings_names.VALUE: gettext_lazy("option with a value")}


def scan_warnings(scan):
    """What the last scan could not read or did not count, one sentence each."""
    if scan is None:
        return []
    warnings = []
    if scan.partial_clone and scan.fetched_blobs:
        warnings.append(ngettext(
            "The clone is partial (made with --filter): %(count)s file version the scan "
            "needed was fetched from its remote.",
            "The clone is partial (made with --filter): %(count)s file versions the scan "
            "needed were fetched from its remote.", scan.fetched_blobs) % {
            "count": scan.fetched_blobs})
    if scan.partial_clone and scan.fetch_error:
        warnings.append(_("The clone is partial and what it lacks could not be fetched "
                          "(%(reason)s).") % {"reason": scan.fetch_error})
    if scan.missing_blobs:
        paths = ", ".join(f"{path} ({n})" for path, n in scan.missing_paths[:10])
        more = len(scan.missing_paths) - 10
        if more > 0:
            paths = _("%(paths)s and %(more)s more paths") % {"paths": paths, "more": more}
        warnings.append(ngettext(
            "%(count)s blob could not be read, so changes to them were not seen: %(paths)s. "
            "A name not found is not known to be absent.",
            "%(count)s blobs could not be read, so changes to them were not seen: %(paths)s. "
            "A name not found is not known to be absent.",
            scan.missing_blobs) % {"count": scan.missing_blobs, "paths": paths})
    for name, mention in sorted(scan.mentions.items()):
        warnings.append(_(
            "%(name)s appears in a %(kind)s (%(path)s line %(line)s, %(day)s, commit "
            "%(commit)s) but not yet in code: no landing.") % {
            "name": name, "kind": HIT_KIND_WORDS.get(mention["kind"], mention["kind"]),
            "path": mention["path"], "line": mention["line_number"],
            "day": mention["committed_on"], "commit": mention["commit"][:10]})
    return warnings


def landing_day(landing):
    """The landing's calendar day: the committer's own (older landings: the UTC date)."""
    return landing.landed_on or landing.committed_at.astimezone(dt_timezone.utc).date()


# --- papers, threads and methods --------------------------------------------------

def link_documents(study):
    """Tie the study's documents to methods: the paper with a method's arXiv identifier is
    its source; a thread proposes a method when its title or opening post names the method
    ("Add Clip-higher") or its framework's option name in any form, or when it is the pull
    request a landing came from; a thread naming only the identifier cites it."""
    methods = list(Method.objects.filter(study=study).prefetch_related("option_names__framework"))
    landed = {(landing.framework.repository.lower(), landing.pull_request): landing.method
              for landing in Landing.objects.filter(method__study=study,
                                                    pull_request__isnull=False)
              .select_related("framework", "method")}
    documents = Document.objects.filter(items__study=study, items__deleted_at__isnull=True)
    have = set(MethodLink.objects.filter(method__study=study)
               .values_list("method_id", "document_id", "kind"))
    made = []
    for document in documents.prefetch_related("posts").distinct().iterator(chunk_size=500):
        for method, kind in _mentions(document, methods, landed):
            if (method.pk, document.pk, kind) not in have:
                have.add((method.pk, document.pk, kind))
                made.append(MethodLink(method=method, document=document, kind=kind))
    MethodLink.objects.bulk_create(made, ignore_conflicts=True)
    return len(made)


def _mentions(document, methods, landed=None):
    if document.kind == Document.Kind.PAPER:
        return [(m, MethodLink.Kind.SOURCE) for m in methods
                if m.source_arxiv_id and m.source_arxiv_id == document.key]
    posts = list(document.posts.all())
    opening = posts[0].body if posts else ""
    text = " ".join([document.title, *(p.body for p in posts)])
    framework = document.metadata.get("framework")
    found = {}
    merged = (landed or {}).get((str(document.metadata.get("repository", "")).lower(),
                                 document.metadata.get("number")))
    if merged:
        found[merged] = MethodLink.Kind.PROPOSES
    for method in landings_names.methods_named(f"{document.title}\n{opening}", methods):
        found.setdefault(method, MethodLink.Kind.PROPOSES)
    for method in methods:
        options = [o.name for o in method.option_names.all()
                   if not framework or o.framework.name == framework]
        if options and landings_names.Names(options).matches(text):
            found.setdefault(method, MethodLink.Kind.PROPOSES)
        elif method.source_arxiv_id and method.source_arxiv_id in text:
            found.setdefault(method, MethodLink.Kind.CITES)
    return list(found.items())


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
    # Frameworks whose scans could not read everything: no landing there is not "none".
    incomplete = set(FrameworkScan.objects.filter(framework__study=study, missing_blobs__gt=0)
                     .values_list("framework__name", flat=True))
    landings_with_hits = Prefetch("landings", Landing.objects.select_related("framework", "hit"))
    for method in (Method.objects.filter(study=study)
                   .prefetch_related(landings_with_hits, "option_names__framework")):
        landings = sorted(method.landings.all(), key=lambda landing: landing.committed_at)
        landed = {landing.framework.name for landing in landings}
        tracked = {o.framework.name for o in method.option_names.all()}
        rows.append({
            "method": method, "landings": landings, "frameworks": sorted(landed),
            "tracked": sorted(tracked), "unknown": sorted((tracked - landed) & incomplete),
            "days_to_first": (landing_day(landings[0]) - first_public(method)).days
            if landings else None,
        })
    return rows


def framework_report(framework):
    """Methods landed with their delay, and the thread proposals with their coded outcome."""
    landed = []
    for landing in framework.landings.select_related("method", "hit").order_by("committed_at"):
        start = first_public(landing.method)
        landed.append({"landing": landing, "days": (landing_day(landing) - start).days,
                       "days_utc": (landing.committed_at.astimezone(dt_timezone.utc).date()
                                    - start).days})
    proposals = (MethodLink.objects.filter(method__study=framework.study,
                                           kind=MethodLink.Kind.PROPOSES,
                                           document__metadata__framework=framework.name)
                 .select_related("method", "document"))
    outcomes = {d.item.document_id: d.value for d in Decision.objects.current()
                .filter(item__study=framework.study, question_key="outcome")
                .select_related("item")}
    scan = FrameworkScan.objects.filter(framework=framework).first()
    return {
        "framework": framework, "landed": landed, "scan": scan, "warnings": scan_warnings(scan),
        "median_days": statistics.median([row["days"] for row in landed]) if landed else None,
        "proposals": [{"link": link, "outcome": outcomes.get(link.document_id)}
                      for link in proposals],
    }


@job_handler("scan_framework")
def run_scan(job, report):
    """A rescan is harmless: landings are upserted and only new commits are read."""
    from coding.models import Framework

    framework = Framework.objects.select_related("study").get(pk=job.params["framework"])
    summary = scan_framework(framework, job.params["repo"], job.params.get("branch"), report)
    summary["links_made"] = link_documents(framework.study)
    blind_inclusion(framework.study)
    return {"counts": summary}

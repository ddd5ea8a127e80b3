"""Importing a REFI-QDA project (.qdpx) made by a QDA tool into a study (issue 41).

The project is read twice. The first pass (ingest.sources.qdpx.Project) checks all of it
(the archive's entries, the XML, every source's text, every selection's positions) and
keeps, per source, only its codings and the quoted text of each selection: a malformed or
hostile archive is refused there, with where, and nothing is stored. Then:

1. Codes become a codebook the owner reviews: the study's paper codebook, when its
   published version already has every code (a project the workbench exported, by the
   `Key:`/`Value:` lines of its descriptions), is used as it is; otherwise a draft is
   made: of a new codebook when the study has none for papers, else of that codebook,
   its published questions kept and the project's codes added (coding.codebooks.qdc
   says what a code becomes).
2. Text sources become items through the study's import flow (ingest format `qdpx_file`:
   counters, a run in the screening flow, located errors), keyed `qdpx:<source guid>`.
3. Each user's codings become the codings of an outside rater named after the user (one
   per user, its provenance naming the project, the tool and the user's guid), through the
   rater import (coding.raters.imports.import_rows: checked against the published
   version, idempotent, all or nothing). Per user, source and question: a choice question
   takes the options whose codes the user applied anywhere in the source (one for a single
   choice or yes/no); a number or free-text question the text of the note on the coding
   (the workbench's export writes values there); the evidence is the text of the user's
   first selection for it unless that selection is the whole text.

Codings of questions the published version does not have yet wait: publish the draft and
import the same file again (sources already in the pool and codings already imported are
not duplicated). Elements the workbench does not read are counted in the report and in
each rater's provenance, never dropped silently.
"""

import contextlib
import os
from collections import defaultdict

from django.db import transaction
from django.utils import translation
from django.utils.text import slugify
from django.utils.translation import gettext as _

from coding.access.archive import check_open
from coding.codebooks import files as codebook_files
from coding.codebooks import qdc
from coding.codebooks.spec import spec_of
from coding.labeling.pool import Screening, import_into_study
from coding.models import Question, Rater
from coding.raters.imports import RaterImportError, import_rows
from coding.raters.imports import where as where_in_file
from ingest.records import BadRecord, DocumentRecord, check_record
from ingest.sources.qdpx import BadArchive, Project
from workbench import jobs

MAX_ERRORS = 100
UNNAMED = "qdpx-user"


class QdpxImportError(ValueError):
    """The project cannot be imported; nothing was stored. `errors`: [(where, message)]."""

    def __init__(self, errors):
        self.errors = errors
        shown = "; ".join(f"{where}: {message}" for where, message in errors[:5])
        more = (_(" (and %(count)s more)") % {"count": len(errors) - 5}
                if len(errors) > 5 else "")
        super().__init__(_("The project cannot be imported, nothing was stored: "
                           "%(shown)s%(more)s") % {"shown": shown, "more": more})


class Read:
    """What the first pass keeps of a project."""

    def __init__(self):
        self.sources = 0
        self.codings = []  # (user guid, source key, code guid, created, line, quote, notes)
        self.errors = []
        self.name = self.origin = ""
        self.users, self.notes, self.unread, self.skipped = {}, {}, {}, []
        self.codebook = None


def read(path, report=None):
    """The first pass: the whole project checked; QdpxImportError if anything is wrong.
    `report(done, total, message)`, a job's, hears every thousandth source."""
    found = Read()
    try:
        with Project(path) as project:
            for source in project:
                found.sources += 1
                if report and found.sources % 1000 == 0:
                    report(found.sources, None, _("%(count)s sources checked") % {
                        "count": f"{found.sources:,}"})
                title, abstract, _start = source.title_and_body()
                try:
                    check_record(DocumentRecord(kind="paper", source="qdpx", key=source.key,
                                                title=title, metadata={"abstract": abstract}))
                except BadRecord as error:
                    found.errors.append((project.line_of(source.line), str(error)))
                for selection in source.selections:
                    whole = (selection.start, selection.end) == (0, len(source.text))
                    quote = "" if whole else source.text[selection.start:selection.end]
                    for code, user, created, notes in selection.codings:
                        # A value's note on the coding (the workbench writes it there), else
                        # on its selection (where some tools put theirs).
                        found.codings.append((user or source.creating_user, source.key, code,
                                              created, selection.line, quote,
                                              notes or tuple(selection.notes)))
                if len(found.errors) >= MAX_ERRORS:
                    break
            found.users, found.notes = project.users, project.notes
            found.unread, found.skipped = dict(project.unread), project.skipped
            found.codebook = project.codebook
            found.name, found.origin = project.name, project.origin
    except BadArchive as error:
        raise QdpxImportError([(error.where, error.message)]) from None
    if found.errors:
        raise QdpxImportError(found.errors)
    return found


def import_qdpx(study, user, path, *, dry_run=False, job=None, report=None):
    """Import the project at `path` into the study; a summary for people and the API."""
    check_open(study)
    project = read(path, report)
    codes, codebook_result, codebook = _codebook(study, user, project, path, dry_run)
    summary = {"dry_run": dry_run, "sources": project.sources, "codebook": codebook_result,
               "unread": project.unread,
               "skipped": [{"where": w, "why": why} for w, why in project.skipped]}
    if dry_run:
        summary["codings"] = len(project.codings)
        return summary
    counts = import_into_study(study, {"format": "qdpx_file", "path": str(path)}, Screening(),
                               job=job, report=report)
    summary["pool"] = {k: counts.get(k, 0) for k in ("read", "added_to_pool",
                                                     "already_in_pool", "failed")}
    rows, waiting, without = _rows(study, project, codes, codebook)
    summary["waiting"], summary["without_code"] = waiting, without
    with transaction.atomic():
        raters = _raters(study, user, project, {row["rater"] for _, row, _ in rows}, path)
        result = import_rows(study, iter(rows)).as_dict()
    summary["raters"] = sorted(raters)
    summary["codings"] = result["counts"]
    return summary


def _codebook(study, user, project, path, dry_run):
    """({code guid: (key, value)}, what was done to the codebook, the codebook or None)."""
    if project.codebook is None:
        return {}, {"action": "none", "note": _("the project has no codes")}, None
    element, lines = project.codebook
    name = (project.name or str(path).rsplit("/", 1)[-1]).strip()[:200] or "Imported codes"
    try:
        spec, reader = qdc.read_codebook(element, lines, name=name, applies_to="paper")
    except qdc.BadQdc as error:
        raise QdpxImportError([(_("project.qde, the codebook: %(where)s") % {"where": where},
                                message) for where, message in error.errors]) from None
    codebook = study.codebooks.filter(applies_to="paper").order_by("-pk").first()
    published = codebook.current_version() if codebook else None
    if published is not None and _covers(published, spec):
        return reader.codes, {"action": "matches", "codebook": codebook.name,
                              "version": published.number}, codebook
    parsed = codebook_files.Parsed(spec if published is None else _merged(published, spec),
                                   "qdc", reader.where)
    try:
        done = codebook_files.import_codebook(study, user, parsed, codebook=codebook,
                                              dry_run=dry_run)
    except codebook_files.BadFile as error:
        raise QdpxImportError([(_("project.qde, the codebook: %(where)s") % {
            "where": e.path}, e.message) for e in error.errors]) from None
    if codebook is None and not dry_run:
        from coding.models import Codebook

        codebook = Codebook.objects.get(pk=done["codebook_id"])
    return reader.codes, {"action": "draft", "codebook": done["codebook"],
                          "version": done["version"], "new_codebook": done["new_codebook"],
                          "questions": done["questions"]}, codebook


def _covers(version, spec):
    have = {q.key: q for q in version.questions.prefetch_related("options")}
    for question in spec["questions"]:
        known = have.get(question["key"])
        if known is None:
            return False
        values = {o.value for o in known.options.all()}
        if any(o["value"] not in values for o in question.get("options") or ()):
            return False
    return True


def _merged(version, spec):
    """The published version's spec with the project's questions and options added."""
    merged = spec_of(version)
    questions = {q["key"]: q for q in merged["questions"]}
    for question in spec["questions"]:
        mine = questions.get(question["key"])
        if mine is None:
            merged["questions"].append(question)
            continue
        values = {o["value"] for o in mine.get("options") or ()}
        mine["options"] = (mine.get("options") or []) + [
            o for o in question.get("options") or () if o["value"] not in values]
    return merged


def _rows(study, project, codes, codebook):
    """The rater import's rows, (line, row, None) each; the codings waiting for a published
    question and those whose code is not in the codebook."""
    version = codebook.current_version() if codebook else None
    questions = ({q.key: q for q in version.questions.prefetch_related("options")}
                 if version else {})
    answers = defaultdict(lambda: {"values": [], "quote": None, "created": "", "line": 0,
                                   "notes": ()})
    waiting = without = 0
    names = _rater_names(project.users)
    for user, source, code, created, line, quote, notes in project.codings:
        meant = codes.get(code)
        if meant is None:
            without += 1
            continue
        key, value = meant
        if key not in questions:
            waiting += 1
            continue
        answer = answers[(names.get(user) or _unnamed(names, user), source, key)]
        if value is not None and value not in answer["values"]:
            answer["values"].append(value)
        if answer["quote"] is None or (notes and not answer["notes"]):
            answer.update(quote=quote, line=line, notes=notes)
        if created and (not answer["created"] or created < answer["created"]):
            answer["created"] = created
    rows = []
    for (rater, source, key), answer in answers.items():
        question = questions[key]
        value = _value(question, answer, project.notes)
        if value is None:
            continue
        rows.append((answer["line"], {"item": source, "rater": rater, "question": key,
                                      "value": value, "evidence": answer["quote"] or "",
                                      "coded_at": _with_zone(answer["created"])}, None))
    return rows, waiting, without


def _value(question, answer, notes):
    values = answer["values"]
    if question.kind == Question.Kind.MULTIPLE:
        order = [o.value for o in question.options.all()]
        return sorted(values, key=lambda v: order.index(v) if v in order else len(order))
    if question.kind in (Question.Kind.NUMBER, Question.Kind.TEXT) and answer["notes"]:
        noted = [notes[n] for n in answer["notes"] if notes.get(n)]
        if noted:
            return noted[0].strip() if question.kind == Question.Kind.NUMBER else noted[0]
    if not values:
        return None
    return values[0] if len(values) == 1 else values


def _with_zone(created):
    if not created:
        return None
    return created if created.endswith("Z") or "+" in created[10:] or "-" in created[10:] \
        else created + "Z"


def _rater_names(users):
    """{user guid: a rater name}: the user's name as a slug, made unique."""
    names, taken = {}, set()
    for guid, name in sorted(users.items(), key=lambda pair: (pair[1], pair[0])):
        base = slugify(name)[:60] or UNNAMED
        candidate, n = base, 2
        while candidate in taken:
            candidate, n = f"{base}-{n}", n + 1
        taken.add(candidate)
        names[guid] = candidate
    return names


def _unnamed(names, guid):
    names[guid] = f"{UNNAMED}-{guid[:8]}" if guid else UNNAMED
    return names[guid]


def _raters(study, user, project, wanted, path):
    """The outside raters the rows name, made where missing; their names."""
    have = set(Rater.objects.filter(study=study, name__in=wanted).values_list("name",
                                                                               flat=True))
    from coding.raters.setup import add_rater

    file_name = str(path).replace("\\", "/").rsplit("/", 1)[-1]
    guids = {name: guid for guid, name in _rater_names(project.users).items()}
    unread = "; ".join(f"{what}: {n}" for what, n in sorted(project.unread.items()))
    for name in sorted(wanted - have):
        provenance = _("REFI-QDA project %(project)r (%(file)s), made by %(origin)s; user "
                       "%(guid)s.") % {"project": project.name, "file": file_name,
                                       "origin": project.origin or _("an unnamed tool"),
                                       "guid": guids.get(name, "?")}
        if unread:
            provenance += " " + _("Not read from the project: %(unread)s.") % {"unread": unread}
        add_rater(study, user, kind=Rater.Kind.OUTSIDE, name=name, provenance=provenance)
    return wanted


# --- as a job ------------------------------------------------------------------------

def start_import(study, user, path, dry_run=False):
    """Queue the import of a saved .qdpx (a stored upload's key, or a path on this machine);
    the Job, whose page shows progress and the report."""
    if not dry_run:
        check_open(study)
    return jobs.enqueue("import_qdpx", {
        "study": study.pk, "study_slug": study.slug, "study_name": study.name, "path": str(path),
        "dry_run": bool(dry_run), "language": translation.get_language()}, user=user)


@jobs.job_handler("import_qdpx")
def run_import(job, report):
    """Running it again is harmless: sources already in the pool and codings already
    imported are not written twice."""
    from coding.accounts.languages import job_language
    from coding.models import Study

    study = Study.objects.get(pk=job.params["study"])
    with translation.override(job_language(job)):
        with opened_path(job.params["path"]) as path:
            try:
                summary = import_qdpx(study, job.created_by, path,
                                      dry_run=job.params["dry_run"], job=job, report=report)
            except QdpxImportError as error:
                for where, message in error.errors:
                    jobs.log(job, message, level="error", location=where)
                raise jobs.JobError(str(error)) from None
            except RaterImportError as error:
                for line, field_name, message in error.errors:
                    jobs.log(job, message, level="error", location=_(
                        "project.qde, %(where)s") % {"where": where_in_file(line, field_name)})
                raise
    book = summary["codebook"]
    if book["action"] == "draft":
        jobs.log(job, _("Codebook %(codebook)s v%(version)s is a draft made from the project's "
                        "codes: review and publish it, then import the same file again to bring "
                        "the codings that wait for it.") % {
                            "codebook": book["codebook"], "version": book["version"]})
    elif book["action"] == "matches":
        jobs.log(job, _("The project's codes match codebook %(codebook)s v%(version)s.") % {
            "codebook": book["codebook"], "version": book["version"]})
    if summary.get("raters"):
        jobs.log(job, _("Its users' codings are those of the raters %(raters)s: compare them "
                        "on the raters page.") % {"raters": ", ".join(summary["raters"])})
    for what, count in sorted(summary["unread"].items()):
        jobs.log(job, _("not read from the project: %(count)s %(what)s") % {
            "count": f"{count:,}", "what": what}, level="warning")
    for skipped in summary["skipped"]:
        jobs.log(job, skipped["why"], level="warning", location=skipped["where"])
    return {**summary, "counts": flat_counts(summary), "study": study.slug}


def flat_counts(summary):
    """The summary's numbers as one table (the job page shows `counts`, named by
    workbench's counter labels)."""
    counts = {"sources": summary["sources"]}
    pool = summary.get("pool") or {}
    counts.update({key: pool[key] for key in ("added_to_pool", "already_in_pool", "failed")
                   if key in pool})
    codings = summary.get("codings")
    if isinstance(codings, dict):
        counts.update({f"codings_{key}": codings[key] for key in ("new", "changed",
                                                                  "unchanged")})
    elif codings is not None:
        counts["codings_read"] = codings
    for key in ("waiting", "without_code"):
        if key in summary:
            counts[f"codings_{key}"] = summary[key]
    return counts


@contextlib.contextmanager
def opened_path(path):
    """A path on this machine for a stored upload's key (workbench.storage), or the path."""
    if os.path.exists(path):
        yield path
        return
    from workbench import storage

    with storage.local_copy(path) as local:
        yield local


__all__ = ["QdpxImportError", "RaterImportError", "import_qdpx", "read", "start_import"]

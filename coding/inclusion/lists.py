"""Inclusion a team already knows: a CSV list of the papers included in frameworks,
imported as an inclusion source beside the method tracker (coding.catalog.landings).

The file has a header and one row per paper and framework:

    paper      the paper's key in the study (its arXiv identifier); required
    framework  where the paper's method was included; required (written as the catalog's
               framework when the catalog has one of that name, in any case)
    date       the day it was included, YYYY-MM-DD; optional
    link       the commit, pull request or release that included it; optional

A paper of the study that the list does not name is not included by that list. Every
error names its line and column, and nothing is stored unless the whole file is good.
Importing a list under a name it already has replaces that list; each import is
audited with the file's name and SHA-256, and the inclusion fields join the study's
blinded fields, as a scan's do.
"""

import csv
import hashlib
import re
from datetime import date

from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from coding.access import audit
from coding.access.archive import check_open
from coding.access.limits import IMPORT_LINE_MAX_BYTES
from coding.catalog.landings import blind_inclusion
from coding.models import InclusionList, ListedInclusion
from ingest.models import Document
from ingest.sources.lines import TextLines, Unreadable
from workbench.jobs import user_facing

COLUMNS = ("paper", "framework", "date", "link")
REQUIRED = ("paper", "framework")
MAX_ERRORS = 100
# A list names the included papers only, a small share of a study: this many rows is
# far more than a million-paper study needs, and bounds what one upload may hold.
MAX_ROWS = 500_000
NAME_MAX, FRAMEWORK_MAX, LINK_MAX = 100, 100, 500
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
EXAMPLE = ("paper,framework,date,link\n"
           "2599.00001,verl,2025-04-02,https://github.com/example/verl/pull/123\n")


@user_facing
class InclusionListError(Exception):
    """The list has bad rows or a bad name; nothing was stored. `errors`: [(line, column,
    message)], line 0 for the list as a whole."""

    def __init__(self, errors):
        self.errors = errors
        shown = _("; ").join(_("line %(line)s, %(column)s: %(problem)s") % {
            "line": line, "column": column, "problem": message} if line else message
            for line, column, message in errors[:5])
        more = (_(" (and %(count)s more)") % {"count": len(errors) - 5}
                if len(errors) > 5 else "")
        super().__init__(ngettext(
            "%(count)s problem, nothing imported: %(shown)s%(more)s",
            "%(count)s problems, nothing imported: %(shown)s%(more)s", len(errors))
            % {"count": len(errors), "shown": shown, "more": more})


class _Hashed:
    """A binary stream that keeps the SHA-256 of what was read from it."""

    def __init__(self, raw):
        self.raw, self.digest = raw, hashlib.sha256()

    def readline(self, size=-1):
        data = self.raw.readline(size)
        self.digest.update(data)
        return data


def import_list(study, raw, name, actor, file_name=""):
    """Read the CSV list in the binary stream `raw` and store it as the study's inclusion
    list `name` (replacing a list of that name). Returns what was stored, in counts."""
    check_open(study)
    name = str(name or "").strip()
    if not name or len(name) > NAME_MAX or CONTROL.search(name):
        raise InclusionListError([(0, "name", _(
            "a list needs a name of 1 to %(max)s characters, on one line") % {"max": NAME_MAX})])
    hashed = _Hashed(raw)
    rows, errors = _read(hashed, study)
    if not errors and not rows:
        errors = [(2, "paper", _("the list has a header but no rows"))]
    if errors:
        raise InclusionListError(errors[:MAX_ERRORS])
    with transaction.atomic():
        found, made = InclusionList.objects.select_for_update().get_or_create(
            study=study, name=name, defaults={"sha256": ""})
        replaced = 0 if made else found.rows.count()
        found.rows.all().delete()
        found.file_name, found.sha256 = str(file_name)[:255], hashed.digest.hexdigest()
        found.imported_by = actor
        found.save()
        ListedInclusion.objects.bulk_create(
            [ListedInclusion(inclusion_list=found, **row) for row in rows], batch_size=2_000)
        summary = {"name": name, "rows": len(rows),
                   "papers": len({row["document_id"] for row in rows}),
                   "frameworks": sorted({row["framework"] for row in rows}),
                   "replaced": replaced, "sha256": found.sha256}
        audit.record(actor, study, "inclusion_list.import",
                     audit.target_of("inclusion_list", name=name), file=found.file_name,
                     sha256=found.sha256, rows=len(rows), replaced=replaced)
        blind_inclusion(study)
    return summary


def _read(stream, study):
    """([row fields], [(line, column, message)]) for the whole file."""
    rows, errors, seen, wanted = [], [], {}, []
    frameworks = {f.name.lower(): f.name for f in study.frameworks.all()}
    try:
        reader = csv.DictReader(TextLines(stream, IMPORT_LINE_MAX_BYTES))
        header = [str(c or "").strip().lower() for c in reader.fieldnames or ()]
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            return [], [(1, ", ".join(missing), _(
                "the header lacks %(missing)s (columns: %(columns)s)") % {
                "missing": ", ".join(missing), "columns": ", ".join(COLUMNS)})]
        reader.fieldnames = header
        for row in reader:
            line = reader.line_num
            if len(wanted) >= MAX_ROWS:
                return [], [(line, "-", _("more than %(max)s rows: a list names the included "
                                          "papers only") % {"max": f"{MAX_ROWS:,}"})]
            if None in row:
                errors.append((line, "-", _("more cells than the header has columns")))
                continue
            cells = {c: str(row.get(c) or "").strip() for c in COLUMNS}
            parsed = _row(line, cells, frameworks, errors)
            if parsed is None:
                continue
            key = (cells["paper"], parsed["framework"].lower())
            if key in seen:
                errors.append((line, "framework", _(
                    "%(paper)s in %(framework)s is already on line %(line)s") % {
                    "paper": cells["paper"], "framework": parsed["framework"],
                    "line": seen[key]}))
                continue
            seen[key] = line
            wanted.append((line, cells["paper"], parsed))
            if len(errors) >= MAX_ERRORS:
                break
    except Unreadable as problem:
        return [], [(problem.line, "-", problem.problem)]
    except csv.Error as problem:
        return [], [(getattr(reader, "line_num", 1) or 1, "-",
                     _("not CSV: %(problem)s") % {"problem": problem})]
    papers = _papers(study, {paper for _, paper, _ in wanted})
    for line, paper, parsed in wanted:
        if paper not in papers:
            errors.append((line, "paper", _("no paper %(paper)s in this study") % {
                "paper": paper}))
            continue
        rows.append({**parsed, "document_id": papers[paper], "line": line})
    errors.sort()
    return rows, errors


def _row(line, cells, frameworks, errors):
    """The row's stored fields, or None with its errors added."""
    problems = []
    if not cells["paper"]:
        problems.append((line, "paper", _("empty: the paper's key (its arXiv identifier)")))
    framework = cells["framework"]
    if not framework:
        problems.append((line, "framework", _("empty: the framework's name")))
    elif len(framework) > FRAMEWORK_MAX or CONTROL.search(framework):
        problems.append((line, "framework", _("a name of at most %(max)s characters") % {
            "max": FRAMEWORK_MAX}))
    included_on = None
    if cells["date"]:
        try:
            included_on = date.fromisoformat(cells["date"])
        except ValueError:
            problems.append((line, "date", _("%(value)r is not a date written YYYY-MM-DD") % {
                "value": cells["date"][:40]}))
    if len(cells["link"]) > LINK_MAX or CONTROL.search(cells["link"]):
        problems.append((line, "link", _("a link of at most %(max)s characters") % {
            "max": LINK_MAX}))
    if problems:
        errors.extend(problems)
        return None
    return {"framework": frameworks.get(framework.lower(), framework),
            "included_on": included_on, "link": cells["link"]}


def _papers(study, keys, chunk=5_000):
    """{key: document id} of the study's live papers among `keys`."""
    found, keys = {}, sorted(keys)
    for start in range(0, len(keys), chunk):
        found.update(Document.objects.filter(
            kind=Document.Kind.PAPER, key__in=keys[start:start + chunk],
            items__study=study, items__deleted_at__isnull=True)
            .values_list("key", "pk").distinct())
    return found


def listed_inclusion(inclusion_list):
    """{document id: {included_in, first_landing}} as the list says, shaped as the
    tracker's paper_inclusion (first_landing a date here, or None)."""
    result = {}
    for document, framework, day in (inclusion_list.rows.order_by()
                                     .values_list("document_id", "framework", "included_on")):
        entry = result.setdefault(document, {"included_in": set(), "first_landing": None})
        entry["included_in"].add(framework)
        if day and (entry["first_landing"] is None or day < entry["first_landing"]):
            entry["first_landing"] = day
    for entry in result.values():
        entry["included_in"] = sorted(entry["included_in"])
    return result


def lists_payload(study):
    """The study's inclusion lists with their provenance (page, API, command)."""
    return [{"name": found.name, "file_name": found.file_name, "sha256": found.sha256,
             "rows": found.row_count,
             "imported_by": found.imported_by.username if found.imported_by else None,
             "imported_at": found.imported_at.isoformat()}
            for found in _with_counts(study)]


def _with_counts(study):
    return (InclusionList.objects.filter(study=study).select_related("imported_by")
            .annotate(row_count=Count("rows")).order_by("name"))

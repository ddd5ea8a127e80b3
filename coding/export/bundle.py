"""The export bundle: tables, data dictionary, codebook, provenance README and checksums, zipped.

Reproducible (design brief, rule 6): the same data and options give the same
bytes. Rows come in a fixed order, writers add nothing run-dependent, zip entries
carry a fixed date, and the README states when the data was last changed rather
than when it was exported (the job row keeps that).

Blinding (rule 2): a bundle is written for one set of roles, the requester's
(`roles`; an operator's command works at owner level). What those roles may not
receive (coding.access.blinding.hidden_fields_for, the projection the pages use) is left
out of every table and of the data dictionary, and the README says what and why.
The same data and the same roles give the same bytes.
"""

import csv
import functools
import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from importlib.metadata import version as package_version
from pathlib import Path

from django.db.models import Count, Max
from django.utils.text import slugify
from django.utils.translation import gettext

from coding.access.blinding import (
    CODER_LEVEL, KINDS, OWNER_LEVEL, hidden_fields_for, withheld_names,
)
from coding.access.names import pseudonyms
from coding.agreement import snapshots
from coding.export import analysis_tables, rows
from coding.export.fields import (
    DECISION_FIELDS, EVIDENCE_FIELDS, LONG_FIELDS, NOTE_FIELDS, STATUS_NOTE, item_fields,
    wide_fields, withheld_item_columns,
)
from coding.export.writers import FORMULA_NOTE, WRITERS, neutralised
from coding.model_raters import exports as model_exports
from coding.models import AgreementSnapshot, Coding, Decision, Item, RaterCoding
from coding.models.reliability import SampleDraw

SHAPES = ("wide", "long", "decisions", "items", "reliability", "inclusion", "evidence")
FORMATS = ("csv", "parquet", "jsonl")
MEDIA_TYPES = {"csv": "text/csv", "jsonl": "application/x-ndjson",
               "parquet": "application/vnd.apache.parquet"}
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def check_options(shapes, fmt):
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown or not shapes:
        raise ValueError(gettext("shapes must be some of %(shapes)s; got %(given)s") % {
            "shapes": ", ".join(SHAPES), "given": ", ".join(shapes) or gettext("none")})
    if fmt not in FORMATS:
        raise ValueError(gettext("format must be one of %(formats)s; got %(format)r") % {
            "formats": ", ".join(FORMATS), "format": fmt})


def tables(study, shape, names, withheld, roles=OWNER_LEVEL):
    """(table name, fields, rows) for one shape; wide gives one table per codebook.
    Only the items table holds item content, and so the only blinded fields; the
    reliability and inclusion tables are written empty for roles that may not see them."""
    if shape == "reliability":
        return [("reliability", analysis_tables.RELIABILITY_FIELDS,
                 analysis_tables.reliability_batches(study, roles))]
    if shape == "inclusion":
        return [("inclusion", analysis_tables.INCLUSION_FIELDS,
                 analysis_tables.inclusion_batches(study, withheld, roles))]
    if shape == "items":
        return [("items", item_fields(withheld), rows.items_batches(study, withheld))]
    if shape == "long":
        return [("long", LONG_FIELDS, rows.long_batches(study, names))]
    if shape == "decisions":
        return [("decisions", DECISION_FIELDS, rows.decisions_batches(study, names))]
    if shape == "evidence":
        hidden = {kind: hidden_fields_for(study, roles, kind) for kind in KINDS}
        return [("evidence", EVIDENCE_FIELDS, rows.evidence_batches(study, names, hidden)),
                ("notes", NOTE_FIELDS, rows.notes_batches(study, names))]
    found = []
    for codebook in study.codebooks.order_by("pk"):
        version = codebook.current_version()
        if version is not None:
            screening = (study.screening or {}).get("question", "")
            found.append((f"wide-{slugify(codebook.name)}", wide_fields(version, screening),
                          rows.wide_batches(study, codebook, version)))
    return found


def estimate_rows(study, shapes):
    """Rows the export will write, for the progress bar."""
    items = Item.objects.alive().filter(study=study).count()
    questions = max(1, max((c.current_version().questions.count() for c in study.codebooks.all()
                            if c.current_version()), default=1))
    per_shape = {
        "items": items, "wide": items,
        # Codings fill a row per question; raters' imported answers a row each.
        "long": Coding.objects.filter(assignment__item__study=study).count() * questions
        + RaterCoding.objects.filter(rater__study=study, item__deleted_at__isnull=True).count(),
        "decisions": Decision.objects.filter(item__study=study).count(),
        "reliability": 0, "inclusion": 0,
        # At most a row per quote and one per note; counted by the revisions, a bound.
        "evidence": Coding.objects.filter(assignment__item__study=study).count(),
    }
    return sum(per_shape[s] for s in shapes)


def build_bundle(study, out_path, *, shapes, fmt, include_mapping=False, report=None,
                 roles=OWNER_LEVEL):
    """Write the bundle to out_path (atomically: a temporary file renamed when complete),
    as the holder of `roles` in the study may receive it. Pages, the API and the export
    job pass the requester's roles; the default is an operator's (owner level)."""
    check_options(shapes, fmt)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    names = pseudonyms(study)
    withheld = withheld_item_columns(study, roles)
    write, extension = WRITERS[fmt]
    # The README's counts, on a connection of their own while the tables are written
    # where the database allows it (rows.in_background).
    facts = rows.in_background(provenance, study)
    # The progress bar's total too: its counts are not needed before the first batch.
    estimate = functools.cache(rows.in_background(estimate_rows, study, shapes))
    done = 0

    def progress(count):
        nonlocal done
        done += count
        if report:
            total = estimate()
            report(min(done, total), total, f"{done} rows written")

    with tempfile.TemporaryDirectory(dir=out_path.parent) as tmp:
        tmp = Path(tmp)
        resources = []
        for shape in shapes:
            for name, fields, table_rows in tables(study, shape, names, withheld, roles):
                filename = f"{name}.{extension}"
                count = write(tmp / filename, fields, table_rows, on_batch=progress)
                resources.append(resource(tmp / filename, name, fmt, fields, count))
        estimate()  # waited for (its thread ended) even when no batch asked for it
        files = {r["path"] for r in resources}
        (tmp / "codebook.json").write_text(codebook_json(study), encoding="utf-8")
        files.add("codebook.json")
        machines = model_exports.summary(study, names)
        if machines:
            (tmp / "model_raters.json").write_text(
                json.dumps(machines, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                encoding="utf-8")
            with open(tmp / "model_calls.jsonl", "w", encoding="utf-8") as calls:
                for row in model_exports.call_rows(study, roles):
                    calls.write(json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n")
            files |= {"model_raters.json", "model_calls.jsonl"}
        if include_mapping:
            (tmp / "coders.csv").write_text(mapping_csv(study, names), encoding="utf-8")
            files.add("coders.csv")
        datapackage = data_package(study, resources)
        (tmp / "datapackage.json").write_text(datapackage, encoding="utf-8")
        (tmp / "README.md").write_text(
            readme(study, shapes, fmt, include_mapping, resources,
                   blinding_note(study, roles, shapes, withheld), facts(), roles, machines),
            encoding="utf-8")
        # The loader travels with the data: coding.dataset's own source, which needs only
        # pandas and pyarrow (read as a file: the export layer never imports it).
        (tmp / "load.py").write_bytes(LOADER.read_bytes())
        files |= {"datapackage.json", "README.md", "load.py"}
        sums = "".join(f"{sha256(tmp / f)}  {f}\n" for f in sorted(files))
        (tmp / "SHA256SUMS").write_text(sums, encoding="utf-8")
        partial = out_path.with_suffix(".partial")
        zip_files(tmp, sorted(files | {"SHA256SUMS"}), partial)
        os.replace(partial, out_path)
    # Names and sizes only: where the file is on the server is nobody's business but the
    # caller's, which knows it already.
    return {"rows": {r["name"]: r["rows"] for r in resources}, "filename": out_path.name,
            "bytes": out_path.stat().st_size, "sha256": sha256(out_path),
            "withheld": withheld_names(study, roles)}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resource(path, name, fmt, fields, count):
    return {"name": name, "path": path.name, "format": fmt, "mediatype": MEDIA_TYPES[fmt],
            "encoding": "utf-8", "rows": count, "bytes": path.stat().st_size,
            "hash": f"sha256:{sha256(path)}",
            **({"description": FORMULA_NOTE} if fmt == "csv" else {}),
            "schema": {"fields": [f.schema() for f in fields], "missingValues": [""]}}


def data_package(study, resources):
    package = {
        "profile": "tabular-data-package", "name": study.slug, "title": study.name,
        "description": study.description,
        "missing_and_not_applicable": STATUS_NOTE,
        "resources": resources,
    }
    return json.dumps(package, indent=2, ensure_ascii=False) + "\n"


def codebook_json(study):
    books = []
    for codebook in study.codebooks.order_by("pk").prefetch_related("versions__questions__options"):
        books.append({"name": codebook.name, "applies_to": codebook.applies_to,
                      "description": codebook.description, "versions": [{
                          "number": v.number, "status": v.status, "note": v.note,
                          "published_at": v.published_at.isoformat() if v.published_at else None,
                          "questions": [{
                              "key": q.key, "text": q.text, "definition": q.definition,
                              "kind": q.kind, "required": q.required, "level": q.level,
                              "show_if": q.show_if,
                              "options": [{"value": o.value, "label": o.label,
                                           "definition": o.definition, "examples": o.examples}
                                          for o in q.options.all()],
                          } for q in v.questions.all()],
                      } for v in codebook.versions.all()]})
    return json.dumps({"study": study.slug, "codebooks": books}, indent=2, ensure_ascii=False) + "\n"


def usernames(names):
    """{user id: username} of the people a {user id: pseudonym} map names."""
    from django.contrib.auth import get_user_model

    return dict(get_user_model().objects.filter(pk__in=names).values_list("pk", "username"))


def mapping_csv(study, names):
    users = usernames(names)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["pseudonym", "username"])
    writer.writerows(sorted((pseudonym, neutralised(users[pk]))
                            for pk, pseudonym in names.items()))
    return out.getvalue()


def blinding_note(study, roles, shapes, withheld):
    """The README's lines on blinded fields: which were withheld from this bundle, and why.
    Depends only on the study's settings and the roles, so the bytes stay reproducible."""
    names = withheld_names(study, roles)
    blinded = withheld_names(study, CODER_LEVEL)
    if not blinded:
        return ["The study blinds no fields: nothing was withheld."]
    if not names:
        return [f"The study blinds {', '.join(blinded)} from its coders. This bundle was "
                "written for someone who may see them (an owner, or an adjudicator or viewer "
                "while the study's `adjudicators_see_blinded` setting is on): nothing was "
                "withheld."]
    lines = [f"Withheld: {', '.join(names)}. The study blinds these fields from its coders, "
             "and whoever asked for this bundle may not see them either (adjudicators and "
             "viewers see blinded fields only while the study's `adjudicators_see_blinded` "
             "setting is on; anyone who codes in the study, never). They were removed on the "
             "server before anything was written."]
    if "items" in shapes:
        dropped = [c for c, kinds in withheld.items() if set(kinds) >= set(KINDS)]
        emptied = {c: kinds for c, kinds in withheld.items() if c not in dropped}
        if dropped:
            lines.append(f"The items table leaves out the columns {', '.join(dropped)}; "
                         "datapackage.json describes only the columns that are there.")
        for column, kinds in emptied.items():
            lines.append(f"The items column {column} is empty for "
                         f"{' and '.join(k + 's' for k in kinds)}.")
        if "snapshot_sha256" in withheld:
            lines.append("snapshot_sha256 is withheld with them: a hash of the whole snapshot "
                         "would let one test guesses of a blinded value.")
    return lines


def provenance(study):
    """The README's figures from the database, counted in a few aggregate queries.
    rows.current_decisions and rows.independent_count find what Decision.objects.current()
    and coding.labeling.codings.independent_codings define, without a subquery per row."""
    codings = Coding.objects.filter(assignment__item__study=study).aggregate(
        latest=Max("submitted_at"), count=Count("pk"))
    items = Item.objects.alive().filter(study=study)
    data_as_of = max(filter(None, [
        codings["latest"],
        Decision.objects.filter(item__study=study).aggregate(t=Max("decided_at"))["t"],
        items.aggregate(t=Max("added_at"))["t"]]), default=None)
    methods = dict(rows.current_decisions(Decision.objects.filter(item__study=study))
                   .values_list("method").annotate(n=Count("pk")).order_by("method"))
    kinds = dict(items.values_list("document__kind").annotate(n=Count("pk")).order_by())
    drawers = drawer_names(study)
    draws = [pseudonymised_draw(record, drawers) for record in
             SampleDraw.objects.filter(study=study).order_by("drawn_at", "id")
             .values_list("record", flat=True)]
    return {"data_as_of": data_as_of, "methods": methods, "kinds": kinds,
            "codings": codings["count"], "independent": rows.independent_count(study),
            "draws": draws, "sample": pseudonymised_draw(study.reliability_sample, drawers),
            "agreement": agreement_freshness(study)}


def agreement_freshness(study):
    """When the agreement figures the reliability table holds were computed (the newest
    snapshot), and how many independent codings came after them."""
    computed_at = AgreementSnapshot.objects.filter(study=study, estimate=False).aggregate(
        at=Max("created_at"))["at"]
    return {"computed_at": computed_at, "new_codings": (
        snapshots.new_codings(study, estimates=False) if computed_at else None)}


def reliability_line(agreement, roles=None):
    """The README's line on the reliability table: whether it is empty, or how current."""
    if roles is not None and not set(roles) & analysis_tables.SEES_AGREEMENT:
        return ("- Reliability table: empty: agreement figures are for owners, adjudicators "
                "and viewers, not for whoever asked for this bundle.")
    if agreement["computed_at"] is None:
        return ("- Reliability table: empty: no agreement report had been computed when this "
                "was exported. Recompute on the agreement page (or run `agreement_report "
                "<study> --save`), then export again.")
    at = agreement["computed_at"].isoformat()
    if agreement["new_codings"]:
        return (f"- Reliability table: the agreement snapshot of {at}; "
                f"{agreement['new_codings']} independent codings came after it and are not "
                "in its figures (recompute, then export again to count them).")
    return (f"- Reliability table: the agreement snapshot of {at}, which counts every "
            "independent coding.")


def drawer_names(study):
    """{username: pseudonym} of the study's members: a draw records who drew it by
    username, and the bundle names people only by pseudonym."""
    names = pseudonyms(study)
    return {username: names[pk] for pk, username in usernames(names).items()}


def pseudonymised_draw(record, drawers):
    """A draw's record as the README shows it: who drew it by pseudonym, or "operator"
    for someone outside the study (a site administrator); the record is otherwise as
    stored."""
    if not record or not record.get("drawn_by"):
        return record
    return {**record, "drawn_by": drawers.get(record["drawn_by"], "operator")}


def earlier_draws(draws, in_force):
    """README lines for the reliability sample's draws before the one in force (each kept
    as a SampleDraw, oldest first, with the plan made then), as stored: reproducible.
    Both as the README shows them (pseudonymised_draw)."""
    newest = dict(draws[-1]) if draws else None
    if newest is not None:
        newest.pop("overlap", None)
    earlier = list(draws[:-1]) if in_force and newest == in_force else list(draws)
    if not earlier:
        return []
    return [f"- Earlier draws of the reliability sample, oldest first ({len(earlier)}; each "
            "with the overlap and sample-size plan of its time): "
            + "; ".join(json.dumps(record, sort_keys=True) for record in earlier) + "."]


def readme(study, shapes, fmt, include_mapping, resources, blinding=(), facts=None,
           roles=None, machines=()):
    facts = facts or provenance(study)
    data_as_of, methods, kinds = facts["data_as_of"], facts["methods"], facts["kinds"]
    lines = [
        f"# {study.name}: coded dataset", "",
        f"Study `{study.slug}`. {study.description}".strip(), "",
        "## Provenance", "",
        f"- Data as of: {data_as_of.isoformat() if data_as_of else 'no data'} (latest coding, "
        "decision or item; the export time is kept with the export job).",
        f"- Shapes: {', '.join(shapes)}; format: {fmt}.",
        "- Coders are pseudonymised (coder_1, coder_2 …, stable within the study); "
        + ("the mapping is in coders.csv." if include_mapping else "the mapping is not included."),
        "- Codebooks: " + "; ".join(
            f"{c.name} v{v.number}" for c in study.codebooks.order_by("pk")
            for v in [c.current_version()] if v) + " (all versions in codebook.json).",
        f"- Items: {sum(kinds.values())} ({', '.join(f'{n} {k}s' for k, n in sorted(kinds.items()))}); "
        f"coding revisions: {facts['codings']}; independent codings: "
        f"{facts['independent']}; current decisions: "
        + (", ".join(f"{n} {m}" for m, n in methods.items()) or "none") + ".",
        f"- Overlap: {study.overlap} coders per item in the reliability sample"
        + (f"; sample drawn: {json.dumps(facts['sample'], sort_keys=True)}."
           if study.reliability_sample else "; every item is in it."),
        *earlier_draws(facts["draws"], facts["sample"]),
        *([reliability_line(facts["agreement"], roles)] if "reliability" in shapes else []),
        *model_rater_lines(machines),
        "", "## Blinded fields", "", *blinding,
        "", "## Files", "",
        "| file | rows | sha256 |", "|---|---|---|",
        *[f"| {r['path']} | {r['rows']} | {r['hash'][7:]} |" for r in resources],
        "", "Column meanings, types and categories (in codebook order) are in datapackage.json "
        "(Frictionless Table Schema). SHA256SUMS holds the checksum of every file.", "",
        "## Not applicable and missing", "", STATUS_NOTE, "",
        *(["## Opening in a spreadsheet", "", FORMULA_NOTE, ""] if fmt == "csv" else []),
        "## Loading", "",
        "load.py, in this bundle, reads it into pandas with the types datapackage.json gives "
        "(categories in codebook order, nullable integers, UTC timestamps). It needs only "
        "pandas and pyarrow, not the workbench:", "",
        "```python", "from load import load", "tables = load('this-bundle.zip')",
        "tables['long'].head()", "```", "",
        *(["In CSV, an arXiv identifier that reads as a number is written arXiv:2501.90100, "
           "so that plain pandas.read_csv, R and spreadsheets keep it as text; load.py gives "
           "it back bare.", ""] if fmt == "csv" else []),
        f"Written by coding-workbench {package_version('coding-workbench')} "
        f"with pyarrow {package_version('pyarrow')}.", "",
    ]
    return "\n".join(lines)


def model_rater_lines(machines):
    """The README's account of the model raters run from the workbench (none: nothing)."""
    if not machines:
        return []
    lines = ["", "## Model raters", "",
             "Language models run from the workbench as raters (never coders): their answers "
             "are rows of the long table with rater_kind model; model_raters.json holds each "
             "one's runs, settings (never the API key) and validation against the coders; "
             "model_calls.jsonl every call with its raw response.", ""]
    for machine in machines:
        if machine["methods_text"]:
            lines += [f"{machine['rater']}: {machine['methods_text']}", ""]
    return lines[:-1]


LOADER = Path(__file__).resolve().parents[1] / "dataset.py"

# Stored as they are in the zip: their pages are compressed already (zstd), and deflating
# them again took about 0.75 s of CPU at 100k items to save 5% of the bundle's size.
STORED = (".parquet",)


def zip_files(folder, names, target):
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name in names:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = (zipfile.ZIP_STORED if name.endswith(STORED)
                                  else zipfile.ZIP_DEFLATED)
            info.external_attr = 0o644 << 16
            with open(folder / name, "rb") as source, bundle.open(info, "w", force_zip64=True) as sink:
                shutil.copyfileobj(source, sink, 1 << 20)

"""Exports: round trips for every shape and format, reproducible bytes, who may export."""

import hashlib
import io
import json
import zipfile

import pandas as pd
import pytest
from django.utils import timezone

from coding.actions import sample
from coding.actions.submit import submit
from coding.adjudication import decisions as adjudication
from coding.dataset import data_dictionary, load
from coding.export.bundle import FORMATS, SHAPES, build_bundle
from coding.labeling import queue
from coding.models import Assignment, Coding, Decision
from tests import factories

BASE = {"size_b": 7, "failures": ["none"], "code_released": "no"}


@pytest.fixture
def coded(alpha, people, django_capture_on_commit_callbacks):
    """Paper 0: agreed (analysis); paper 1: split on label, decided by ada; paper 2 and a
    paper with a blinded inclusion field uncoded."""
    def code(item, coder, **values):
        assignment = queue.assign(item, coder)
        with django_capture_on_commit_callbacks(execute=True):
            submit(Assignment.objects.get(pk=assignment.pk), {**BASE, **values})

    alpha.blinded_fields = ["included_in"]
    alpha.save()
    alpha.included = queue.add_item(alpha, factories.paper(80, included_in=["verl", "TRL"]),
                                    alpha.paper_codebook)
    code(alpha.papers[0], people["cora"], label="analysis")
    code(alpha.papers[0], people["cyril"], label="analysis", note="a remark")
    code(alpha.papers[1], people["cora"], label="rl_method", scope="general",
         failures=["entropy_collapse", "none"])
    code(alpha.papers[1], people["cyril"], label="analysis", size_b="not_reported")
    adjudication.decide(alpha.papers[1], "label", "rl_method", people["ada"])
    adjudication.decide(alpha.papers[1], "scope", "general", people["ada"])
    return alpha


@pytest.fixture
def export(coded, tmp_path):
    def run(fmt="csv", shapes=SHAPES, **options):
        path = tmp_path / f"export-{fmt}-{len(list(tmp_path.iterdir()))}.zip"
        build_bundle(coded, path, shapes=list(shapes), fmt=fmt, **options)
        return path
    return run


@pytest.mark.parametrize("fmt", FORMATS)
def test_long_round_trip_matches_every_coding_revision(coded, export, fmt):
    long = load(export(fmt))["long"]
    questions = coded.paper_codebook.current_version().questions.count()
    assert len(long) == Coding.objects.count() * questions
    row = long[(long.item_id == coded.papers[1].pk) & (long.coder == "coder_1")
               & (long.question == "failures")].iloc[0]
    assert json.loads(row.value) == ["entropy_collapse", "none"]
    assert (row.phase, bool(row.independent), int(row.revision)) == ("independent", True, 1)
    sizes = long[(long.item_id == coded.papers[1].pk) & (long.question == "size_b")]
    assert sorted(sizes.value) == ["7", "not_reported"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_wide_round_trip_holds_the_final_values_and_how_they_were_reached(coded, export, fmt):
    wide = load(export(fmt))["wide-small-paper-codebook"].set_index("item_id")
    agreed, split, uncoded = (wide.loc[i.pk] for i in coded.papers)
    assert (agreed["label"], agreed["label__method"]) == ("analysis", "unanimous")
    assert (split["label"], split["label__method"]) == ("rl_method", "adjudicated")
    assert split["scope"] == "general"
    # Its codings are not all in: pending, not a disagreement waiting (undecided).
    assert uncoded["label__status"] == "pending" and pd.isna(uncoded["label"])
    assert bool(agreed["failures__none"]) and not bool(agreed["failures__entropy_collapse"])
    assert list(wide["label"].cat.categories) == ["rl_method", "analysis"]  # codebook order


@pytest.mark.parametrize("fmt", FORMATS)
def test_not_applicable_and_missing_stay_distinct(coded, export, fmt):
    tables = load(export(fmt))
    wide = tables["wide-small-paper-codebook"].set_index("item_id")
    assert wide.loc[coded.papers[0].pk, "scope__status"] == "not_applicable"
    assert pd.isna(wide.loc[coded.papers[0].pk, "scope"])
    long = tables["long"]
    notes = long[(long.item_id == coded.papers[0].pk) & (long.question == "note")]
    assert sorted(notes.status) == ["answered", "missing"]
    scopes = long[(long.item_id == coded.papers[0].pk) & (long.question == "scope")]
    assert set(scopes.status) == {"not_applicable"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_decisions_and_items_round_trip(coded, export, fmt):
    tables = load(export(fmt))
    decisions = tables["decisions"]
    assert len(decisions) == Decision.objects.count()
    adjudicated = decisions[decisions.method == "adjudicated"]
    assert set(adjudicated.question) == {"label", "scope"}
    assert set(adjudicated.decided_by) == {"adjudicator_1"}
    items = tables["items"].set_index("item_id")
    assert len(items) == 4
    assert items.loc[coded.included.pk, "included_in"] == "verl; TRL"  # blinded, for analysts


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_same_data_gives_the_same_bytes(export, fmt):
    first, second = export(fmt), export(fmt)
    assert hashlib.sha256(first.read_bytes()).digest() == hashlib.sha256(second.read_bytes()).digest()


def test_checksums_and_data_dictionary_describe_every_file(export):
    path = export("csv")
    with zipfile.ZipFile(path) as bundle:
        sums = dict(line.split("  ")[::-1] for line in bundle.read("SHA256SUMS").decode().splitlines())
        for name, digest in sums.items():
            assert hashlib.sha256(bundle.read(name)).hexdigest() == digest
        assert set(sums) == set(bundle.namelist()) - {"SHA256SUMS"}
        readme = bundle.read("README.md").decode()
    package = data_dictionary(path)
    label = next(f for r in package["resources"] if r["name"].startswith("wide")
                 for f in r["schema"]["fields"] if f["name"] == "label")
    assert label["categories"] == ["rl_method", "analysis"]
    assert "not_applicable" in package["missing_and_not_applicable"]
    assert "Data as of" in readme and "adjudicated" in readme


def test_coders_are_pseudonymised_and_the_mapping_is_optional(coded, export):
    plain = export("jsonl")
    with zipfile.ZipFile(plain) as bundle:
        text = b"".join(bundle.read(n) for n in bundle.namelist()).decode()
    assert "cora" not in text and "cyril" not in text and "coder_2" in text
    with zipfile.ZipFile(export("jsonl", include_mapping=True)) as bundle:
        mapping = bundle.read("coders.csv").decode().splitlines()
    assert mapping[0] == "pseudonym,username" and "coder_1,cora" in mapping


def test_a_coder_cannot_export(coded, people, client_for):
    cora = client_for(people["cora"])
    assert cora.get(f"/studies/{coded.slug}/export/").status_code == 403
    assert cora.post(f"/studies/{coded.slug}/export/", {"shapes": ["long"], "format": "csv"}).status_code == 403
    assert cora.post(f"/api/studies/{coded.slug}/exports/", {"shapes": ["long"]},
                     content_type="application/json").status_code == 403


def test_owner_downloads_a_small_export_at_once_from_the_browser(coded, people, client_for):
    response = client_for(people["olive"]).post(
        f"/studies/{coded.slug}/export/", {"shapes": ["wide", "long"], "format": "parquet"})
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    with zipfile.ZipFile(io.BytesIO(body)) as bundle:
        assert "long.parquet" in bundle.namelist()
    # Saved under a name that tells exports apart (issue 39, finding 7): study, shapes,
    # format and day (and the job, for one that ran as a job), never one name for all.
    assert response["Content-Disposition"] == (
        f'attachment; filename="{coded.slug}-wide-long-parquet-{timezone.now():%Y-%m-%d}.zip"')


def test_only_owners_may_export_the_mapping(coded, people, client_for):
    response = client_for(people["vera"]).post(
        f"/api/studies/{coded.slug}/exports/", {"include_mapping": True},
        content_type="application/json")
    assert response.status_code == 400


def test_an_unknown_shape_or_format_is_named(coded, tmp_path):
    with pytest.raises(ValueError, match="shapes must be"):
        build_bundle(coded, tmp_path / "x.zip", shapes=["tall"], fmt="csv")
    with pytest.raises(ValueError, match="format must be"):
        build_bundle(coded, tmp_path / "x.zip", shapes=["long"], fmt="xlsx")


def test_export_command_writes_the_bundle(coded, tmp_path, capsys):
    from django.core.management import call_command

    out = tmp_path / "cli.zip"
    call_command("export_dataset", coded.slug, "--format", "parquet", "--shape", "long,items",
                 "--out", str(out))
    assert set(load(out)) == {"long", "items"}
    assert "long:" in capsys.readouterr().out


@pytest.mark.worker
def test_a_large_export_runs_as_a_job_with_a_download_link(transactional_db, celery_worker,
                                                            alpha, people, client_for):
    from tests.conftest import wait_for_job
    from workbench.models import Job

    for n in range(2):
        factories.code(alpha.papers[n], people["cora"])
    olive = client_for(people["olive"])
    started = olive.post(f"/api/studies/{alpha.slug}/exports/",
                         {"shapes": ["long", "decisions"], "format": "parquet"},
                         content_type="application/json")
    assert started.status_code == 202
    job = wait_for_job(Job.objects.get(pk=started.json()["id"]))
    assert job.status == Job.Status.DONE, job.error
    assert job.result["rows"]["long"] == 2 * 6
    download = olive.get(job.result["download"])
    assert download["Content-Disposition"].endswith(
        f'-{job.created_at:%Y-%m-%d}-{job.pk}.zip"') and job.result["filename"] in \
        download["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content))) as bundle:
        assert {"long.parquet", "decisions.parquet", "datapackage.json"} <= set(bundle.namelist())
    assert client_for(people["cora"]).get(job.result["download"]).status_code == 403


def test_every_format_loads_to_the_same_frames(export):
    loaded = [load(export(fmt)) for fmt in FORMATS]
    for name in loaded[0]:
        for other in loaded[1:]:
            pd.testing.assert_frame_equal(loaded[0][name], other[name])


def test_the_analysis_in_the_docs_runs_on_an_exported_demo_bundle(db, tmp_path, capsys):
    """docs/analysis.md's code, exactly as written, on the demo study."""
    import re
    from pathlib import Path

    from django.core.management import call_command

    from coding.demo.study import DEMO_SLUG
    from coding.models import Study

    call_command("load_demo", verbosity=0)
    bundle = tmp_path / "demo.zip"
    build_bundle(Study.objects.get(slug=DEMO_SLUG), bundle, shapes=["wide", "items"], fmt="parquet")
    doc = (Path(__file__).resolve().parents[3] / "docs" / "analysis.md").read_text()
    code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    exec(code, {"BUNDLE": str(bundle)})
    printed = capsys.readouterr().out
    assert "code_released" in printed and "Fisher's exact p = " in printed
    # The figures the doc shows come from a study built to known counts, on which
    # tests/coding/inclusion/test_inclusion.py runs the same recipe and compares every line.


# --- revisions: what is current and independent is the newest, found while streaming ---

@pytest.fixture
def revised(coded, people):
    """The coded study with revisions: paper 1's label decided three times (rl_method,
    rl_method, then analysis); paper 0's label and size_b re-decided by ada; cora's
    coding of paper 0 revised as independent (2), then after discussion (3); paper 2
    decided, then soft-deleted."""
    agreed, split, deleted = coded.papers
    adjudication.decide(split, "label", "rl_method", people["ada"], "A second look.")
    adjudication.decide(split, "label", "analysis", people["ada"], "Third thoughts.")
    adjudication.decide(agreed, "label", "rl_method", people["ada"], "Reread the method.")
    adjudication.decide(agreed, "size_b", "not_reported", people["ada"], "The size is a guess.")
    first = Coding.objects.get(assignment__item=agreed, assignment__coder=people["cora"])
    for revision, phase in ((2, Coding.Phase.INDEPENDENT), (3, Coding.Phase.RECONCILIATION)):
        Coding.objects.create(assignment=first.assignment, revision=revision, phase=phase,
                              codebook_version=first.codebook_version,
                              values={**first.values, "note": f"revision {revision}"})
    Decision.objects.create(item=deleted, question_key="label", revision=1, value="analysis",
                            method=Decision.Method.ADJUDICATED, decided_by=people["ada"])
    deleted.deleted_at = deleted.added_at
    deleted.save(update_fields=["deleted_at"])
    return coded


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_wide_table_holds_the_newest_decision_revision(revised, export, fmt):
    tables = load(export(fmt))
    wide = tables["wide-small-paper-codebook"].set_index("item_id")
    agreed, split, deleted = revised.papers
    assert deleted.pk not in wide.index
    assert (wide.loc[split.pk, "label"], wide.loc[split.pk, "label__method"]) == (
        "analysis", "adjudicated")
    assert (wide.loc[agreed.pk, "label"], wide.loc[agreed.pk, "label__method"]) == (
        "rl_method", "adjudicated")
    assert wide.loc[agreed.pk, "size_b__status"] == "not_reported"
    assert pd.isna(wide.loc[agreed.pk, "size_b"])
    decisions = tables["decisions"]
    assert deleted.pk not in set(decisions.item_id)
    labels = decisions[(decisions.item_id == split.pk) & (decisions.question == "label")]
    assert list(labels.revision) == [1, 2, 3]
    assert list(labels.current.astype(bool)) == [False, False, True]
    assert list(labels.value) == ["rl_method", "rl_method", "analysis"]
    current = decisions[decisions.current.astype(bool)]
    assert not current.duplicated(["item_id", "question"]).any()
    assert len(current) == Decision.objects.current().filter(item__deleted_at__isnull=True).count()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_long_table_marks_the_last_independent_revision(revised, export, people, fmt):
    long = load(export(fmt))["long"]
    agreed = revised.papers[0]
    cora = long[(long.item_id == agreed.pk) & (long.coder == "coder_1")
                & (long.question == "note")].sort_values("revision")
    assert list(cora.revision) == [1, 2, 3]
    assert list(cora.independent.astype(bool)) == [False, True, False]
    assert list(cora.phase) == ["independent", "independent", "reconciliation"]
    assert pd.isna(cora.value.iloc[0]) and list(cora.value)[1:] == ["revision 2", "revision 3"]
    assert revised.papers[2].pk not in set(long.item_id)
    from coding.labeling.codings import independent_codings

    assert long.independent.astype(bool).sum() == (
        independent_codings(revised).count()
        * revised.paper_codebook.current_version().questions.count())


def test_the_export_queries_find_what_the_product_definitions_find(revised):
    from coding.export import rows
    from coding.labeling.codings import independent_codings

    # The definition, worked out in Python from every coding: each assignment's highest
    # unassisted independent revision, on items not deleted.
    newest = {}
    for coding in Coding.objects.filter(assignment__item__study=revised,
                                        assignment__item__deleted_at__isnull=True):
        if coding.phase == Coding.Phase.INDEPENDENT and not coding.assisted:
            held = newest.get(coding.assignment_id)
            if held is None or held.revision < coding.revision:
                newest[coding.assignment_id] = coding
    assert sorted(c.pk for c in newest.values()) == sorted(
        independent_codings(revised).values_list("pk", flat=True))
    assert rows.independent_count(revised) == independent_codings(revised).count()
    assert sorted(rows.current_decisions(Decision.objects.all()).values_list("pk", flat=True)) \
        == sorted(Decision.objects.current().values_list("pk", flat=True))


def test_the_row_generators_give_dicts_of_each_shapes_fields(revised):
    from coding.access.names import pseudonyms
    from coding.export import rows
    from coding.export.fields import DECISION_FIELDS, LONG_FIELDS, item_fields, wide_fields

    names = pseudonyms(revised)
    version = revised.paper_codebook.current_version()
    long = list(rows.long(revised, names))
    assert len(long) == version.questions.count() * Coding.objects.filter(
        assignment__item__deleted_at__isnull=True).count()
    assert set(long[0]) == {f.name for f in LONG_FIELDS}
    decisions = list(rows.decisions(revised, names))
    assert set(decisions[0]) == {f.name for f in DECISION_FIELDS}
    assert sum(d["current"] for d in decisions) == Decision.objects.current().filter(
        item__deleted_at__isnull=True).count()
    wide = list(rows.wide(revised, revised.paper_codebook, version))
    assert {f.name for f in wide_fields(version)} <= set(wide[0])
    assert {f.name for f in item_fields({})} == set(next(rows.items(revised, {})))


def test_the_readme_counts_current_decisions_and_independent_codings(revised, export):
    from coding.labeling.codings import independent_codings

    with zipfile.ZipFile(export("csv", shapes=["items"])) as bundle:
        readme = bundle.read("README.md").decode()
    current = Decision.objects.current().filter(item__study=revised)
    counted = ", ".join(f"{current.filter(method=m).count()} {m}"
                        for m in sorted(set(current.values_list("method", flat=True))))
    assert "adjudicated" in counted and "unanimous" in counted
    assert (f"independent codings: {independent_codings(revised).count()}; current decisions: "
            f"{counted}.") in readme


# --- writers: rows in any batches give the same bytes ------------------------------------

def mixed_rows():
    """Rows holding what each cell conversion handles: empty text, ISO text and datetime
    objects for datetimes, ints and floats for numbers, nulls everywhere."""
    from datetime import UTC, datetime

    for n in range(47):
        yield {"id": n, "text": ("", None, f"text {n}", "ünïcode")[n % 4],
               "number": (None, n, n + 0.5, 10**3)[n % 4], "flag": (None, True, False)[n % 3],
               "when": (None, datetime(2025, 1, 1, n % 24, tzinfo=UTC),
                        f"2025-02-01T{n % 24:02d}:30:00+00:00")[n % 3]}


def as_batches(rows, sizes):
    from itertools import cycle, islice

    from coding.export.rows import Columns

    rows = iter(rows)
    for size in cycle(sizes):
        part = list(islice(rows, size))
        if not part:
            return
        yield Columns({name: [row[name] for row in part] for name in part[0]}, len(part))


@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_as_dicts_or_column_batches_of_any_size_give_the_same_bytes(tmp_path, monkeypatch,
                                                                          fmt):
    from coding.export import writers
    from coding.export.fields import Field

    fields = [Field("id", "integer", ""), Field("text", "string", ""),
              Field("number", "number", ""), Field("flag", "boolean", ""),
              Field("when", "datetime", ""), Field("absent", "string", "")]
    monkeypatch.setattr(writers, "BATCH", 10)
    write = writers.WRITERS[fmt][0]
    written = []
    for n, rows in enumerate([mixed_rows(), as_batches(mixed_rows(), [7, 13, 1]),
                              as_batches(mixed_rows(), [47]),
                              [*as_batches(list(mixed_rows())[:5], [5]), *list(mixed_rows())[5:]]]):
        path = tmp_path / f"{n}.{fmt}"
        assert write(path, fields, rows) == 47
        written.append(path.read_bytes())
    assert len(set(written)) == 1
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        stored = pq.ParquetFile(tmp_path / "0.parquet")
        assert [stored.metadata.row_group(g).num_rows for g in range(stored.num_row_groups)] == [
            10, 10, 10, 10, 7]
        schema = writers.arrow_schema(fields)
        cell_by_cell = pa.Table.from_arrays(
            [pa.array([writers._arrow_cell(row.get(f.name), f.type) for row in mixed_rows()],
                      type=schema.field(i).type) for i, f in enumerate(fields)], schema=schema)
        assert stored.read().equals(cell_by_cell)


@pytest.mark.parametrize("fmt", FORMATS)
def test_columns_of_runs_write_what_their_rows_write(tmp_path, monkeypatch, fmt):
    """The long table gives a coding's own columns as runs (rows.Repeated): one value for
    each of its questions' rows. Written, they are the rows they stand for."""
    from itertools import groupby

    from coding.export import writers
    from coding.export.fields import Field
    from coding.export.rows import Columns, Repeated

    fields = [Field("id", "integer", ""), Field("text", "string", ""),
              Field("number", "number", ""), Field("flag", "boolean", ""),
              Field("when", "datetime", "")]
    rows = [row for row in mixed_rows() for _ in range(row["id"] % 3 + 1)]

    def runs(column):
        groups = [list(group) for _, group in groupby(column, key=lambda v: (type(v), v))]
        return Repeated([group[0] for group in groups], [len(group) for group in groups])

    def batches(sizes):
        start = 0
        for size in sizes * len(rows):
            part = rows[start:start + size]
            if not part:
                return
            start += size
            yield Columns({f.name: runs([row[f.name] for row in part]) for f in fields},
                          len(part))

    monkeypatch.setattr(writers, "BATCH", 10)
    write = writers.WRITERS[fmt][0]
    written = []
    for n, given in enumerate([rows, batches([7, 13, 1]), batches([len(rows)])]):
        assert write(tmp_path / f"{n}.{fmt}", fields, given) == len(rows)
        written.append((tmp_path / f"{n}.{fmt}").read_bytes())
    assert len(set(written)) == 1


def test_the_readme_keeps_every_draw_of_the_reliability_sample(coded, export):
    """The draw in force in the provenance line as before; the earlier ones beside it, each
    with the plan of its time, oldest first (the page and API show them too)."""

    def readme():
        with zipfile.ZipFile(export()) as bundle:
            return bundle.read("README.md").decode()

    assert "Earlier draws" not in readme()
    sample.draw_reliability_sample(coded, count=2, seed=3)
    first = readme()
    assert "sample drawn: " in first and "Earlier draws" not in first
    sample.draw_reliability_sample(coded, count=3, seed=5)
    sample.draw_reliability_sample(coded, count=1, seed=7)
    text = readme()
    line = next(line for line in text.splitlines() if "Earlier draws" in line)
    assert "oldest first (2;" in line and '"seed": 3' in line and '"seed": 5' in line
    assert line.index('"seed": 3') < line.index('"seed": 5') and '"seed": 7' not in line
    assert '"seed": 7' in next(line for line in text.splitlines() if "sample drawn: " in line)
    assert readme() == text  # reproducible


def test_the_readme_names_who_drew_the_sample_by_pseudonym(coded, export, people):
    """The bundle says coders are pseudonymised: who drew each sample is no exception, in
    the draw in force and the earlier ones; someone outside the study is "operator"."""
    from django.contrib.auth import get_user_model

    from coding.access.names import pseudonyms

    admin = get_user_model().objects.create_user("site-admin-x")
    sample.draw_reliability_sample(coded, count=2, seed=3, user=people["ada"])
    sample.draw_reliability_sample(coded, count=1, seed=7, user=admin)
    with zipfile.ZipFile(export()) as bundle:
        text = bundle.read("README.md").decode()
    ada = pseudonyms(coded)[people["ada"].pk]
    assert '"ada"' not in text and "site-admin-x" not in text
    earlier = next(line for line in text.splitlines() if "Earlier draws" in line)
    assert f'"drawn_by": "{ada}"' in earlier and '"seed": 3' in earlier
    in_force = next(line for line in text.splitlines() if "sample drawn: " in line)
    assert '"drawn_by": "operator"' in in_force and '"seed": 7' in in_force


@pytest.mark.parametrize("fmt", FORMATS)
def test_timestamps_as_the_database_gives_them_write_what_their_datetimes_write(tmp_path, fmt):
    """Decisions' and codings' times come as the database's text (rows.Timestamps): the
    Parquet writer has Arrow parse PostgreSQL's, the rest parse each in Python; either
    way the same instants as the datetimes the ORM would make, alone or as runs."""
    from coding.export import writers
    from coding.export.fields import Field
    from coding.export.rows import Columns, Repeated, Timestamps, parse_datetime

    postgres = ["2026-12-03 14:59:38.632687+00", "2026-12-03 14:59:38.63+00",
                "2026-12-03 00:00:00+00", None, "2024-02-29 23:59:59.000001+00",
                "2026-06-01 12:00:00+02"]
    sqlite = ["2026-12-03 14:59:38.632687", None, "2026-12-03 00:00:00"]
    fields = [Field("when", "datetime", "")]
    for n, texts in enumerate([postgres, sqlite]):
        parsed = [parse_datetime(text) for text in texts]
        write = writers.WRITERS[fmt][0]
        counts = [1 + at % 3 for at in range(len(texts))]
        written = []
        for m, given in enumerate([
                [{"when": moment} for moment in parsed],
                [Columns({"when": Timestamps(texts)}, len(texts))],
                [{"when": moment} for moment, count in zip(parsed, counts)
                 for _ in range(count)],
                [Columns({"when": Repeated(Timestamps(texts), counts)}, sum(counts))]]):
            path = tmp_path / f"{n}-{m}.{fmt}"
            write(path, fields, given)
            written.append(path.read_bytes())
        assert written[0] == written[1] and written[2] == written[3]


def test_multiple_choice_texts_are_remembered_only_for_lists_of_text():
    from coding.export.rows import as_text, remembered_lists

    text = remembered_lists(as_text)
    assert text(["a", "ü"]) == as_text(["a", "ü"]) == '["a", "ü"]'
    assert text(["a", "ü"]) is text(["a", "ü"])
    # 1 == 1.0 == True as keys, but not as JSON: such lists are never remembered
    assert [text([1]), text([1.0]), text([True])] == ["[1]", "[1.0]", "[true]"]
    assert text([["nested"]]) == '[["nested"]]' and text(7) == "7" and text(None) is None


def test_parquet_files_are_stored_in_the_zip_as_they_are(export):
    """Their pages are compressed already: deflating them again costs time for little."""
    with zipfile.ZipFile(export("parquet")) as bundle:
        kinds = {info.filename: info.compress_type for info in bundle.infolist()}
    assert {name for name, kind in kinds.items() if kind == zipfile.ZIP_STORED} == {
        name for name in kinds if name.endswith(".parquet")} != set()
    assert {kind for name, kind in kinds.items() if not name.endswith(".parquet")} == {
        zipfile.ZIP_DEFLATED}


# --- reading ahead on a thread (PostgreSQL, outside a transaction) ------------------------

@pytest.mark.django_db(transaction=True)
def test_reading_ahead_on_threads_gives_the_same_bundle(revised, tmp_path, monkeypatch):
    from django.db import connection

    from coding.export import rows

    assert rows.reads_ahead() == (connection.vendor == "postgresql")
    ahead = [build_bundle(revised, tmp_path / f"ahead.{fmt}.zip", shapes=list(SHAPES),
                          fmt=fmt)["sha256"] for fmt in FORMATS]
    monkeypatch.setattr(rows, "reads_ahead", lambda: False)
    here = [build_bundle(revised, tmp_path / f"here.{fmt}.zip", shapes=list(SHAPES),
                         fmt=fmt)["sha256"] for fmt in FORMATS]
    assert ahead == here


@pytest.mark.django_db(transaction=True)
def test_reading_ahead_hands_on_errors_and_stops_when_the_reader_does(alpha):
    import threading

    from django.db import DatabaseError
    from django.db.models.expressions import RawSQL

    from coding.export import rows
    from coding.models import Item

    with pytest.raises(DatabaseError):
        list(rows.read_ahead(Item.objects.annotate(x=RawSQL("no_such_function()", []))
                             .values_list("x"), 1))
    chunks = rows.read_ahead(Item.objects.order_by("pk").values_list("pk"), 1)
    assert next(chunks) == [(alpha.papers[0].pk,)]
    chunks.close()  # the reader, if there is one, stops and closes its connection
    assert not [t for t in threading.enumerate() if t.name == "export-read-ahead"]
    assert rows.in_background(lambda: Item.objects.count())() == Item.objects.count()

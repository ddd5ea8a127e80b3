"""Raters that are not coders: imported from files, kept apart, compared with people.

The people are conftest's: olive owns alpha, cora and cyril code it, ada adjudicates,
vera views. Model labels and an outside colleague's labels come in from files."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from sklearn.metrics import cohen_kappa_score

from coding.agreement import alpha as agreement
from coding.labeling import queue
from coding.models import Assignment, Rater, RaterCoding, Role
from coding.raters.imports import RaterImportError, import_codings
from coding.raters.setup import add_comparison, add_rater
from tests import factories

THREE = {
    "name": "Screening codebook", "applies_to": "paper",
    "questions": [
        {"key": "label", "kind": "single", "text": "What does the paper do?",
         "options": [{"value": "rl_method"}, {"value": "analysis"}, {"value": "systems"}]},
        {"key": "scope", "kind": "single", "text": "Scope?",
         "show_if": {"question": "label", "in": ["rl_method"]},
         "options": [{"value": "general"}, {"value": "embedded"}]},
        {"key": "size_b", "kind": "number", "text": "Largest policy (B)", "level": "ratio",
         "min_value": 0, "max_value": 2000, "options": [{"value": "not_reported"}]},
    ],
}
LABELS = ("rl_method", "analysis", "systems")


@pytest.fixture
def screening(people):
    """A study of 200 papers with one three-option question, a model and a colleague."""
    study = factories.study("Screening study", owner=people["olive"])
    for name in ("olive", "cora", "vera", "ada"):
        factories.member(study, people[name], people["names"][name])
    codebook = factories.codebook(study, THREE)
    study.papers = [factories.paper_item(study, codebook, n) for n in range(200)]
    return study


def labels_for(n_items, seed):
    """Synthetic labels: a model leaning to rl_method, a person mostly agreeing with it."""
    rng = np.random.default_rng(seed)
    person = rng.choice(LABELS, size=n_items, p=[0.4, 0.4, 0.2])
    model = np.where(rng.random(n_items) < 0.75, person, "rl_method")
    return list(model), list(person)


def csv_file(rows, name="labels.csv"):
    text = "item,rater,question,value\n" + "".join(f"{i},{r},{q},{v}\n" for i, r, q, v in rows)
    upload = io.BytesIO(text.encode())
    upload.name = name
    return upload


def jsonl(rows):
    return io.StringIO("".join(json.dumps(row) + "\n" for row in rows))


def rater(study, name="gpt-labeller", kind=Rater.Kind.MODEL, **fields):
    fields.setdefault("model_version", "v2026-01" if kind == Rater.Kind.MODEL else "")
    return add_rater(study, None, kind=kind, name=name, **fields)


# --- the issue's "done when" -----------------------------------------------------------

def test_two_hundred_model_and_human_labels_compare_as_sklearn_says(
        screening, client_for, people, django_capture_on_commit_callbacks):
    client = client_for(people["olive"])
    api = f"/api/studies/{screening.slug}"
    assert client.post(f"{api}/raters/", {
        "kind": "model", "name": "gpt-labeller", "model_version": "gpt-x-2026-01-31",
        "config_hash": "sha256:abc123", "provenance": "zero-shot prompt v3"},
        content_type="application/json").status_code == 201
    assert client.post(f"{api}/raters/", {"kind": "person", "name": "cora", "member": "cora"},
                       content_type="application/json").status_code == 201
    model, person = labels_for(200, seed=7)
    keys = [item.document.key for item in screening.papers]
    for name, values in (("gpt-labeller", model), ("cora", person)):
        upload = csv_file([(k, name, "label", v) for k, v in zip(keys, values)])
        with django_capture_on_commit_callbacks(execute=True):  # the job runs in-process
            response = client.post(f"{api}/rater-codings/", {"file": upload})
        assert response.status_code == 202, response.content
        job = client.get(f"/api/jobs/{response.json()['id']}/").json()
        assert job["status"] == "done", job
        assert job["result"]["counts"]["new"] == 200
    response = client.post(f"{api}/comparisons/", {
        "name": "model vs cora", "first": "gpt-labeller", "second": "cora",
        "question": "label"}, content_type="application/json")
    assert response.status_code == 201, response.content
    numbers = client.get(f"{api}/comparisons/{response.json()['id']}/").json()

    expected = np.zeros((3, 3), dtype=int)
    for m, p in zip(model, person):
        expected[LABELS.index(m), LABELS.index(p)] += 1
    assert numbers["labels"] == list(LABELS)
    assert numbers["table"] == expected.tolist()
    assert numbers["row_totals"] == expected.sum(axis=1).tolist()
    assert numbers["column_totals"] == expected.sum(axis=0).tolist()
    assert numbers["kappa"]["value"] == pytest.approx(cohen_kappa_score(model, person))
    codes = np.column_stack([[LABELS.index(v) for v in model],
                             [LABELS.index(v) for v in person]]).astype(float)
    low, high = agreement.bootstrap_ci(agreement.cohen_kappa, codes)
    assert (numbers["kappa"]["low"], numbers["kappa"]["high"]) == pytest.approx((low, high))
    assert numbers["alpha"] == pytest.approx(agreement.krippendorff_alpha(codes))
    assert numbers["percent_agreement"] == pytest.approx(np.mean(np.array(model) ==
                                                                 np.array(person)))

    page = client.get(f"/studies/{screening.slug}/comparisons/{response.json()['id']}/")
    html = page.content.decode()
    assert f'<span id="kappa-low">{low:.3f}</span>' in html
    assert f'<span id="kappa-high">{high:.3f}</span>' in html
    assert f"{cohen_kappa_score(model, person):.3f}" in html
    for row in expected:
        assert "".join(f"<td>{c}</td>" for c in row) in html
    assert '<svg class="chart heatmap"' in html
    assert not Assignment.objects.filter(study=screening).exists()  # no coder-queue call


# --- import -----------------------------------------------------------------------------

def test_a_bad_file_names_line_and_field_and_writes_nothing(screening):
    rater(screening)
    key = screening.papers[0].document.key
    rows = [
        {"item": key, "rater": "gpt-labeller", "question": "label", "value": "analysis"},
        {"item": "2599.99999", "rater": "gpt-labeller", "question": "label", "value": "analysis"},
        {"item": key, "rater": "nobody", "question": "label", "value": "analysis"},
        {"item": key, "rater": "gpt-labeller", "question": "colour", "value": "red"},
        {"item": screening.papers[1].document.key, "rater": "gpt-labeller", "question": "label",
         "value": "poetry"},
        {"item": key, "rater": "gpt-labeller", "question": "size_b", "value": 5000},
        {"item": key, "rater": "gpt-labeller", "question": "scope", "value": "general"},
        {"item": key, "rater": "gpt-labeller", "question": "label", "value": "systems"},
        {"item": key, "rater": "gpt-labeller", "question": "size_b", "value": "7",
         "coded_at": "2026-01-31 12:00"},
    ]
    with pytest.raises(RaterImportError) as raised:
        import_codings(screening, jsonl(rows), "jsonl")
    located = {(line, field) for line, field, _ in raised.value.errors}
    assert located == {(2, "item"), (3, "rater"), (4, "question"), (5, "value"), (6, "value"),
                       (8, "question"), (9, "coded_at"), (7, "question")}
    messages = dict(((line, field), text) for line, field, text in raised.value.errors)
    assert "scope does not apply: label is not one of ['rl_method']" in messages[(7, "question")]
    assert "already given on line 1" in messages[(8, "question")]
    assert "at most 2000" in messages[(6, "value")]
    assert not RaterCoding.objects.exists()


def test_a_condition_is_met_by_another_row_of_the_item_in_any_order(screening):
    rater(screening)
    key = screening.papers[0].document.key
    rows = csv_file([(key, "gpt-labeller", "scope", "general"),
                     (key, "gpt-labeller", "label", "rl_method"),
                     (key, "gpt-labeller", "size_b", "not_reported")])
    report = import_codings(screening, io.StringIO(rows.getvalue().decode()), "csv")
    assert report.new == 3
    values = dict(RaterCoding.objects.values_list("question_key", "value"))
    assert values == {"scope": "general", "label": "rl_method", "size_b": "not_reported"}


def test_dry_run_reports_changes_and_reimport_changes_nothing(screening):
    rater(screening)
    keys = [item.document.key for item in screening.papers[:3]]
    first = [{"item": k, "rater": "gpt-labeller", "question": "label", "value": "analysis"}
             for k in keys]
    dry = import_codings(screening, jsonl(first), "jsonl", dry_run=True).as_dict()
    assert dry["counts"] == {"rows": 3, "new": 3, "changed": 0, "unchanged": 0, "errors": 0}
    assert not dry["written"] and not RaterCoding.objects.exists()
    import_codings(screening, jsonl(first), "jsonl")
    again = import_codings(screening, jsonl(first), "jsonl").as_dict()
    assert again["counts"]["unchanged"] == 3 and again["counts"]["new"] == 0
    first[0]["value"] = "systems"
    dry = import_codings(screening, jsonl(first), "jsonl", dry_run=True).as_dict()
    assert dry["counts"]["changed"] == 1
    assert dry["examples"][0]["before"] == "analysis" and dry["examples"][0]["after"] == "systems"
    assert RaterCoding.objects.get(item__document__key=keys[0]).value == "analysis"
    import_codings(screening, jsonl(first), "jsonl")
    changed = RaterCoding.objects.get(item__document__key=keys[0])
    assert changed.value == "systems"
    assert [old["value"] for old in changed.previous] == ["analysis"]  # nothing is lost


def test_the_command_imports_and_refuses_a_bad_file_with_its_lines(screening, tmp_path):
    rater(screening)
    good = tmp_path / "labels.csv"
    good.write_text("item,rater,question,value\n"
                    f"{screening.papers[0].document.key},gpt-labeller,label,analysis\n")
    out = io.StringIO()
    call_command("import_rater_codings", screening.slug, str(good), "--dry-run", stdout=out)
    assert "Dry run: would import 1 rows: 1 new" in out.getvalue()
    assert not RaterCoding.objects.exists()
    call_command("import_rater_codings", screening.slug, str(good), stdout=out)
    assert RaterCoding.objects.count() == 1
    bad = tmp_path / "bad.csv"
    bad.write_text("item,rater,question,value\n"
                   f"{screening.papers[1].document.key},gpt-labeller,label,maybe\n")
    with pytest.raises(CommandError, match="line 2, value: 'maybe' is not one of"):
        call_command("import_rater_codings", screening.slug, str(bad))


# --- kept apart -------------------------------------------------------------------------

@pytest.fixture
def labelled(alpha, people):
    """alpha with a model's labels on its papers, marked so a leak would show."""
    model = rater(alpha, name="leaky-model", provenance="prompt SECRET-PROVENANCE")
    for item in alpha.papers:
        RaterCoding.objects.create(rater=model, item=item, question_key="label",
                                   value="rl_method", evidence="MODEL-EVIDENCE-TEXT",
                                   codebook_version=alpha.paper_codebook.current_version(),
                                   imported_at=item.added_at)
    add_comparison(alpha, people["olive"], name="model vs decisions", first="leaky-model",
                   second=None, question="label")
    return model


@pytest.mark.parametrize("path", ["/studies/{slug}/raters/", "/api/studies/{slug}/raters/",
                                  "/api/studies/{slug}/comparisons/",
                                  "/studies/{slug}/comparisons/{cid}/",
                                  "/api/studies/{slug}/comparisons/{cid}/"])
def test_coder_is_refused_every_rater_door(alpha, labelled, people, client_for, path):
    cid = alpha.comparisons.get().pk
    response = client_for(people["cora"]).get(path.format(slug=alpha.slug, cid=cid))
    assert response.status_code == 403
    assert b"leaky-model" not in response.content


def test_coder_never_meets_a_model_label_while_coding(alpha, labelled, people, client_for):
    client = client_for(people["cora"])
    pages = [client.post(f"/api/studies/{alpha.slug}/next/").content]
    assignment = Assignment.objects.get(coder=people["cora"])
    pages.append(client.get(f"/studies/{alpha.slug}/code/{assignment.pk}/").content)
    pages.append(client.get(f"/api/studies/{alpha.slug}/assignments/{assignment.pk}/").content)
    pages.append(client.get(f"/api/studies/{alpha.slug}/codings/").content)
    pages.append(client.get(f"/studies/{alpha.slug}/").content)
    for body in pages:
        for secret in (b"leaky-model", b"MODEL-EVIDENCE-TEXT", b"SECRET-PROVENANCE",
                       b"Raters"):
            assert secret not in body


def test_raters_are_not_in_the_queue_nor_in_human_reliability(alpha, labelled, people):
    from coding.agreement.reliability import study_report

    before = json.dumps(study_report(alpha, n_boot=10), sort_keys=True, default=str)
    factories.code(alpha.papers[0], people["cora"], label="analysis")
    factories.code(alpha.papers[0], people["cyril"], label="analysis")
    with_people = study_report(alpha, n_boot=10)
    assert "leaky-model" not in json.dumps(with_people, default=str)
    assert before != json.dumps(with_people, sort_keys=True, default=str)
    assert set(Assignment.objects.values_list("coder__username", flat=True)) == {"cora", "cyril"}
    assert queue.queue_summary(alpha)  # the queue page's numbers build without raters


@pytest.mark.parametrize("who", ["ada", "vera", "cora"])
def test_only_owners_add_raters_and_comparisons(alpha, labelled, people, client_for, who):
    client = client_for(people[who])
    api = client.post(f"/api/studies/{alpha.slug}/raters/", {
        "kind": "outside", "name": "sneaky"}, content_type="application/json")
    page = client.post(f"/studies/{alpha.slug}/raters/", {
        "action": "rater", "kind": "outside", "name": "sneaky"})
    assert (api.status_code, page.status_code) == (403, 403)
    assert not Rater.objects.filter(name="sneaky").exists()


def test_owner_adds_a_rater_and_a_comparison_on_the_page(alpha, people, client_for):
    client = client_for(people["olive"])
    response = client.post(f"/studies/{alpha.slug}/raters/", {
        "action": "rater", "kind": "model", "name": "labeller", "model_version": "m-1",
        "config_hash": "cafe", "provenance": "few-shot"})
    assert response.status_code == 302
    response = client.post(f"/studies/{alpha.slug}/raters/", {
        "action": "rater", "kind": "model", "name": "unversioned"})
    assert response.status_code == 400 and b"a model rater needs its version" in response.content
    response = client.post(f"/studies/{alpha.slug}/raters/", {
        "action": "comparison", "name": "labeller vs decisions", "first": "labeller",
        "second": "", "question": "label"})
    assert response.status_code == 302
    page = client.get(f"/studies/{alpha.slug}/raters/").content.decode()
    assert "labeller vs decisions" in page and "few-shot" in page
    assert "Raters" in client.get(f"/studies/{alpha.slug}/").content.decode()


def test_rater_pages_cost_the_same_queries_at_any_size(alpha, labelled, people, client_for,
                                                        django_assert_max_num_queries):
    client = client_for(people["olive"])
    cid = alpha.comparisons.get().pk
    for n in range(3, 30):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    with django_assert_max_num_queries(12):
        assert client.get(f"/studies/{alpha.slug}/raters/").status_code == 200
    with django_assert_max_num_queries(14):
        assert client.get(f"/studies/{alpha.slug}/comparisons/{cid}/").status_code == 200


def test_a_rater_against_the_final_decisions(alpha, labelled, people):
    from coding.raters import comparisons

    for item, value in zip(alpha.papers, ["rl_method", "analysis"]):
        scope = {"scope": "general"} if value == "rl_method" else {}
        factories.code(item, people["cora"], label=value, **scope)
        factories.code(item, people["cyril"], label=value, **scope)
    result = comparisons.compute(alpha.comparisons.get())
    assert result["second"] == "final decisions"
    assert result["units"] == 2 and result["first_only"] == 1
    assert result["labels"] == ["rl_method", "analysis"]
    assert result["table"] == [[1, 1], [0, 0]]  # the model said rl_method both times
    assert result["categories"][0]["second_agrees_when_first_says"] == 0.5


def test_compare_raters_command_prints_the_table(alpha, labelled):
    out = io.StringIO()
    call_command("compare_raters", alpha.slug, "model vs decisions", stdout=out)
    assert "leaky-model \\ final decisions" in out.getvalue()
    with pytest.raises(CommandError, match="No comparison"):
        call_command("compare_raters", alpha.slug, "nothing")


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_upload_runs_on_the_worker_with_progress(celery_worker, people, client_for):
    from tests.conftest import wait_for_job
    from workbench.models import Job

    study = factories.study("Worker study", owner=people["olive"])
    factories.member(study, people["olive"], Role.OWNER)
    codebook = factories.codebook(study, THREE)
    items = [factories.paper_item(study, codebook, n) for n in range(20)]
    rater(study)
    client = client_for(people["olive"])
    upload = csv_file([(i.document.key, "gpt-labeller", "label", "systems") for i in items])
    response = client.post(f"/api/studies/{study.slug}/rater-codings/", {"file": upload})
    assert response.status_code == 202
    job = wait_for_job(Job.objects.get(pk=response.json()["id"]))
    assert job.status == "done", job.error
    assert (job.done, job.total) == (20, 20)
    assert RaterCoding.objects.filter(rater__study=study).count() == 20


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_the_export_long_table_carries_rater_answers_with_kind_and_provenance(
        alpha, labelled, people, tmp_path, fmt):
    from coding.dataset import data_dictionary, load
    from coding.export.bundle import build_bundle

    factories.code(alpha.papers[0], people["cora"], label="analysis")
    path = tmp_path / f"bundle.{fmt}.zip"
    build_bundle(alpha, path, shapes=["long"], fmt=fmt)
    long = load(path)["long"]
    model = long[long.rater_kind == "model"]
    assert len(model) == 3 and set(model.coder) == {"leaky-model"}
    assert set(model.value) == {"rl_method"} and set(model.question) == {"label"}
    assert set(model.rater_provenance) == {"version v2026-01; prompt SECRET-PROVENANCE"}
    coders = long[long.rater_kind == "coder"]
    assert set(coders.coder) == {"coder_1"} and coders.rater_provenance.isna().all()
    assert not model.independent.astype(bool).any()
    assert "rater_kind" in json.dumps(data_dictionary(path), default=str)


def test_export_progress_counts_rater_rows(screening, tmp_path):
    """The export job's progress estimate counts raters' imported answers (a long row each):
    it once counted codings only, so a bundle with model labels ran past its total."""
    from coding.export.bundle import build_bundle, estimate_rows

    rater(screening)
    model, _person = labels_for(200, seed=3)
    import_codings(screening, jsonl([
        {"item": item.document.key, "rater": "gpt-labeller", "question": "label", "value": v}
        for item, v in zip(screening.papers, model)]), "jsonl")
    assert estimate_rows(screening, ["long"]) == 200
    reports = []
    written = build_bundle(screening, tmp_path / "bundle.zip", shapes=["long"], fmt="csv",
                           report=lambda done, total, message: reports.append((done, total)))
    assert written["rows"]["long"] == 200
    assert reports[-1] == (200, 200)

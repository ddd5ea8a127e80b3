"""The agreement page, API and command: who sees them, and that they show the same numbers.

Rule 1: a coder never sees a figure derived from other coders' work, so coders get 403
on every agreement door and no agreement number appears on any page a coder opens.
"""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from coding.actions import sample
from coding.agreement import snapshots
from coding.models import AgreementSnapshot
from tests import factories


@pytest.fixture
def coded(alpha, people):
    """Both coders coded the three papers; label agrees on two; a snapshot is taken."""
    for paper, (a, b) in zip(alpha.papers, [("analysis", "analysis"),
                                            ("rl_method", "rl_method"),
                                            ("analysis", "rl_method")]):
        for coder, label in (("cora", a), ("cyril", b)):
            scope = {"scope": "general"} if label == "rl_method" else {}
            factories.code(paper, people[coder], label=label, **scope)
    snapshots.take_snapshot(alpha)
    return alpha


def alpha_of(doc, key="label"):
    return next(q for book in doc["rounds"]["main"]["codebooks"] for q in book["questions"]
                if q["key"] == key)["alpha"]["value"]


@pytest.mark.parametrize("name", ["olive", "ada", "vera"])
def test_owner_adjudicator_and_viewer_see_the_agreement_page_and_api(coded, people, client_for,
                                                                     name):
    client = client_for(people[name])
    page = client.get(f"/studies/{coded.slug}/agreement/")
    assert page.status_code == 200
    html = page.content.decode()
    value = alpha_of(client.get(f"/api/studies/{coded.slug}/agreement/").json())
    assert f"{value:.3f}" in html
    assert "<svg" in html and "Report for a paper" in html
    assert "Planning the reliability sample" in html


def test_coder_gets_403_on_every_agreement_door(coded, people, client_for):
    client = client_for(people["cora"])
    assert client.get(f"/studies/{coded.slug}/agreement/").status_code == 403
    assert client.post(f"/studies/{coded.slug}/agreement/recompute/").status_code == 403
    assert client.get(f"/api/studies/{coded.slug}/agreement/").status_code == 403
    assert client.get(f"/api/studies/{coded.slug}/agreement/history/").status_code == 403
    assert client.post(f"/api/studies/{coded.slug}/agreement/recompute/").status_code == 403


def test_non_member_gets_404_on_every_agreement_door(coded, people, client_for):
    client = client_for(people["otto"])
    assert client.get(f"/studies/{coded.slug}/agreement/").status_code == 404
    assert client.get(f"/api/studies/{coded.slug}/agreement/").status_code == 404
    assert client.post(f"/api/studies/{coded.slug}/agreement/recompute/").status_code == 404


def test_no_agreement_number_appears_on_any_coder_page(coded, people, client_for):
    value = f"{alpha_of(snapshots.stored_report(coded)):.3f}"
    client = client_for(people["cora"])
    assignment = coded.papers[0].assignments.get(coder=people["cora"])
    for url in ["/", f"/studies/{coded.slug}/", f"/studies/{coded.slug}/codings/",
                f"/studies/{coded.slug}/code/{assignment.pk}/", f"/studies/{coded.slug}/code/",
                f"/api/studies/{coded.slug}/", f"/api/studies/{coded.slug}/codings/"]:
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert value not in text, url
        for word in ("Krippendorff", "kappa", "/agreement/", "% agreement"):
            assert word not in text, (url, word)


def test_viewer_may_read_but_not_recompute(coded, people, client_for):
    client = client_for(people["vera"])
    assert client.post(f"/studies/{coded.slug}/agreement/recompute/").status_code == 403
    assert client.post(f"/api/studies/{coded.slug}/agreement/recompute/").status_code == 403


def test_owner_recomputes_on_demand(coded, people, client_for, django_capture_on_commit_callbacks):
    client = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/api/studies/{coded.slug}/agreement/recompute/")
    assert response.status_code == 202 and response.json()["kind"] == "agreement"
    assert AgreementSnapshot.objects.filter(study=coded, round="main").count() == 2
    history = client.get(f"/api/studies/{coded.slug}/agreement/history/").json()
    assert [point["n_codings"] for point in history["main"]] == [6, 6]


def test_page_api_and_command_give_the_same_numbers(coded, people, client_for):
    api = client_for(people["olive"]).get(f"/api/studies/{coded.slug}/agreement/").json()
    out = StringIO()
    call_command("agreement_report", coded.slug, "--json", stdout=out)
    command = json.loads(out.getvalue())
    assert api["rounds"] == command["rounds"]
    assert api["planning"] == command["planning"]
    text = StringIO()
    call_command("agreement_report", coded.slug, stdout=text)
    assert f"{alpha_of(api):.3f}" in text.getvalue() and "Sample size." in text.getvalue()


def test_planner_takes_its_inputs_from_the_query_string(coded, people, client_for):
    client = client_for(people["olive"])
    url = f"/api/studies/{coded.slug}/agreement/"
    doc = client.get(f"{url}?alpha_min=0.667&smallest_share=0.1").json()
    assert (doc["planning"]["alpha_min"], doc["planning"]["smallest_share"]) == (0.667, 0.1)
    assert client.get(f"{url}?smallest_share=0.9").status_code == 400
    page = client.get(f"/studies/{coded.slug}/agreement/?alpha_min=0.667")
    assert "α ≥ <b>0.667</b>" in page.content.decode()


def test_study_overview_links_agreement_for_those_who_may_see_it(coded, people, client_for):
    assert f"/studies/{coded.slug}/agreement/" in client_for(people["vera"]).get(
        f"/studies/{coded.slug}/").content.decode()


def test_agreement_api_is_in_the_schema(coded, people, client_for):
    schema = client_for(people["olive"]).get("/api/schema/").content.decode()
    assert "/api/studies/{slug}/agreement/" in schema
    assert "/api/studies/{slug}/agreement/recompute/" in schema


def test_page_reads_plainly_before_any_coding(alpha, people, client_for):
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/agreement/")
    assert page.status_code == 200
    assert "Not computed yet" in page.content.decode()


def test_page_shows_a_question_without_units(alpha, people, client_for):
    for coder in ("cora", "cyril"):  # label analysis: scope never applies
        factories.code(alpha.papers[0], people[coder], label="analysis")
    snapshots.take_snapshot(alpha)
    html = client_for(people["olive"]).get(f"/studies/{alpha.slug}/agreement/").content.decode()
    assert "<code>scope</code>" in html and "undefined" in html


def test_paper_block_names_the_sample_the_coders_calibration_and_procedure(coded, people,
                                                                          client_for):

    sample.draw_reliability_sample(coded, count=3, seed=11)
    coded.discussion_step = True
    coded.save(update_fields=["discussion_step"])
    text = client_for(people["olive"]).get(f"/api/studies/{coded.slug}/agreement/").json()["text"]
    assert "Two coders coded the reliability sample" in text
    assert "all 3 main-round items (the draw took every item), drawn " in text
    assert "after coding had begun (3 of the 3 items already coded" in text
    assert "Calibration. No calibration round was run." in text
    assert "shown the disagreement" in text and "adjudicator who had not coded the item" in text
    assert "Variable" in text and "α [95% CI]" in text and "N/A" in text


def label_row(doc):
    return next(q for book in doc["rounds"]["main"]["codebooks"] for q in book["questions"]
                if q["key"] == "label")


def test_paper_block_counts_undecided_disagreements_as_they_stand(coded, people, client_for):
    """The third paper's label differs and nobody decided it: the text says one is
    undecided, not that disagreements "were decided by an adjudicator"."""
    client = client_for(people["olive"])
    doc = client.get(f"/api/studies/{coded.slug}/agreement/").json()
    assert doc["disagreements"]["undecided"] >= 1
    assert f"{doc['disagreements']['undecided']} " in doc["text"]
    assert "still undecided" in doc["text"] and "were decided by" not in doc["text"]
    html = client.get(f"/studies/{coded.slug}/agreement/").content.decode()
    assert f"<b>{doc['disagreements']['undecided']} undecided</b>" in html


def test_kappa_and_every_coefficient_reach_api_page_and_paper_text(coded, people, client_for):
    client = client_for(people["olive"])
    doc = client.get(f"/api/studies/{coded.slug}/agreement/").json()
    label = label_row(doc)
    kappa = label["kappa"]
    assert kappa["name"] == "Cohen's kappa" and kappa["low"] <= kappa["value"] <= kappa["high"]
    names = {c["name"] for c in label["coefficients"]}
    assert {"Cohen's kappa", "Scott's pi", "Gwet's AC1", "Brennan-Prediger"} <= names
    assert "pabak" in label["two_coders"] and "stuart_maxwell" in label["two_coders"]
    text = doc["text"]
    assert f"{kappa['value']:.3f} [{kappa['low']:.3f}, {kappa['high']:.3f}] (Cohen)" in text
    assert "Scott's pi" in text and "Gwet's AC1" in text and "PABAK" in text
    assert "Stuart–Maxwell" in text and "lower bound" in text
    html = client.get(f"/studies/{coded.slug}/agreement/").content.decode()
    for words in ("Gwet&#x27;s AC1", "Brennan-Prediger", "PABAK", "Stuart–Maxwell",
                  "What α counts", "lower bound", "made by an adjudicator other than this coder"):
        assert words in html, words


def test_verdict_reads_the_lower_bound(coded, people, client_for):
    doc = client_for(people["olive"]).get(f"/api/studies/{coded.slug}/agreement/").json()
    alpha = label_row(doc)["alpha"]
    from coding.agreement.sample_size import verdict

    assert alpha["verdict"] == verdict(alpha["low"])
    assert "lower bound" in doc["thresholds"]["applied_to"]


def test_calendar_drift_reaches_page_chart_api_and_export(alpha, people, client_for, tmp_path):
    """Five weeks of codings, cyril moving from week 4 (tests/coding/agreement/test_reliability.py):
    the page draws the weekly table and chart with cyril's flagged points ringed, the API
    carries the same points, and the export's reliability table one row per point."""
    import csv
    import io
    import zipfile

    from coding.export.bundle import build_bundle
    from tests.coding.agreement.test_reliability import three_coders_over_five_weeks

    three_coders_over_five_weeks(alpha, people, drifting_from_week=3)
    snapshots.take_snapshot(alpha)
    client = client_for(people["olive"])
    doc = client.get(f"/api/studies/{alpha.slug}/agreement/").json()
    drift = next(q for book in doc["rounds"]["main"]["codebooks"] for q in book["questions"]
                 if q["key"] == "code_released")["drift_calendar"]
    assert drift["unit"] == "week"
    flagged = {c["coder"]: [p["window"] for p in c["points"] if p["flag"]]
               for c in drift["coders"]}
    assert flagged == {"cora": [], "cyril": [3, 4], "dana": []}
    html = client.get(f"/studies/{alpha.slug}/agreement/").content.decode()
    assert "Drift: each coder against the others, week by week" in html
    assert "code_released: each coder&#x27;s alpha against the others, week by week" in html
    assert html.count('class="flag"') >= 2  # cyril's two flagged weeks, ringed
    assert "2026-01-26" in html  # week 4's column and tick
    bundle = tmp_path / "bundle.zip"
    build_bundle(alpha, bundle, shapes=["reliability"], fmt="csv")
    with zipfile.ZipFile(bundle) as z:
        rows = [r for r in csv.DictReader(io.StringIO(z.read("reliability.csv").decode()))
                if r["figure"] == "drift_alpha" and r["question"] == "code_released"
                and r["window"] == "week"]
    assert {(r["coder"], r["window_number"]) for r in rows if r["flag"] == "true"} == {
        ("cyril", "4"), ("cyril", "5")}
    assert {r["window_from"] for r in rows} == {
        "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26", "2026-02-02"}
    # Each point's alpha is the page's (the export once left every drift value empty).
    page_points = {(c["coder"], str(p["window"] + 1)): p["alpha"] for c in drift["coders"]
                   for p in c["points"]}
    assert {(r["coder"], r["window_number"]): float(r["value"]) if r["value"] else None
            for r in rows} == page_points


@pytest.mark.worker
def test_the_worker_takes_the_snapshot_with_its_calendar_drift(transactional_db, celery_worker,
                                                                alpha, people, client_for):
    """The agreement job on the real worker (PostgreSQL and Redis when set): the snapshot
    it stores carries the weekly drift, cyril flagged in weeks 4 and 5."""
    from tests.coding.agreement.test_reliability import three_coders_over_five_weeks
    from tests.conftest import wait_for_job
    from workbench.models import Job

    three_coders_over_five_weeks(alpha, people, drifting_from_week=3)
    job = wait_for_job(snapshots.recompute(alpha, people["olive"]))
    assert job.status == Job.Status.DONE, job.error
    doc = client_for(people["olive"]).get(f"/api/studies/{alpha.slug}/agreement/").json()
    drift = next(q for book in doc["rounds"]["main"]["codebooks"] for q in book["questions"]
                 if q["key"] == "code_released")["drift_calendar"]
    assert {c["coder"]: [p["window"] for p in c["points"] if p["flag"]]
            for c in drift["coders"]} == {"cora": [], "cyril": [3, 4], "dana": []}


def test_page_draws_its_rounds_once_per_snapshot_and_language(coded, people, client_for,
                                                              monkeypatch):
    """The rounds' charts and tables come from the snapshots alone: drawn once per
    snapshot and language and then read from the cache; a new snapshot is drawn anew."""
    from coding.agreement import report as agreement_report
    from coding.models import LanguagePreference

    drawn = []
    real = agreement_report.rounds_charts
    monkeypatch.setattr(agreement_report, "rounds_charts",
                        lambda *args: drawn.append(1) or real(*args))
    url = f"/studies/{coded.slug}/agreement/"
    olive = client_for(people["olive"])
    first = olive.get(url).content.decode()
    again = client_for(people["vera"]).get(url).content.decode()
    assert len(drawn) == 1
    rounds = first[first.index('<section class="round"'):first.index('<section id="planning"')]
    assert rounds in again and "<svg" in rounds and "6 independent codings" in rounds

    paper = factories.paper_item(coded, coded.paper_codebook, 3)
    for coder in ("cora", "cyril"):
        factories.code(paper, people[coder], label="analysis")
    snapshots.take_snapshot(coded)
    newer = olive.get(url).content.decode()
    assert len(drawn) == 2 and "8 independent codings" in newer
    olive.get(url)
    assert len(drawn) == 2

    LanguagePreference.objects.create(user=people["ada"], language="zh-hans")
    chinese = client_for(people["ada"]).get(url).content.decode()
    assert len(drawn) == 3 and "8 independent codings" not in chinese and "<svg" in chinese

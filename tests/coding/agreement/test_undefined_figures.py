"""A figure the data cannot give is recorded as undefined, never as NaN (issue 35, 1).

A small fresh study meets what the demo never does: two coders, a handful of items, and
disagreements that fall into separate groups of categories, where Stuart-Maxwell's
covariance matrix is singular. The report must still be stored, with every number finite.
"""

import json
import math

import numpy as np

from coding.agreement import snapshots
from coding.agreement.coefficients import stuart_maxwell
from coding.models import AgreementSnapshot
from tests import factories

# Two groups of disagreement: {1, 2} and {3, 4}; the margins' covariance is singular.
SEPARATE_GROUPS = [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]


def all_numbers(value):
    if isinstance(value, dict):
        return [n for v in value.values() for n in all_numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in all_numbers(v)]
    return [value] if isinstance(value, float) else []


def test_stuart_maxwell_on_separate_groups_of_disagreement_is_a_finite_test():
    result = stuart_maxwell(SEPARATE_GROUPS)
    assert all(math.isfinite(result[key]) for key in ("statistic", "p"))
    # One degree of freedom per group: the sum of each group's own test.
    assert result["df"] == 2
    apart = [stuart_maxwell([[0, 1], [0, 0]]), stuart_maxwell([[0, 1], [1, 0]])]
    assert math.isclose(result["statistic"], sum(r["statistic"] for r in apart))


def test_stuart_maxwell_keeps_its_figures_where_the_matrix_is_regular():
    table = np.array([[3, 0, 1, 0], [0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 0, 0]])
    assert stuart_maxwell(table) == {"statistic": 3.0000000000000067, "df": 3,
                                     "p": 0.3916251762710883}


def test_the_agreement_report_of_a_small_fresh_study_is_stored_with_finite_numbers(
        alpha, people):
    papers = alpha.papers + [factories.paper_item(alpha, alpha.paper_codebook, n)
                             for n in range(3, 5)]
    for item, (mine, theirs) in zip(papers, [(1, 2), (3, 4), (4, 3), (7, 7), (7, 7)]):
        factories.code(item, people["cora"], size_b=mine)
        factories.code(item, people["cyril"], size_b=theirs)
    snapshots.take_snapshot(alpha)
    stored = AgreementSnapshot.objects.get(study=alpha, round="main").report
    assert all(math.isfinite(n) for n in all_numbers(stored))
    json.dumps(stored, allow_nan=False)
    size = next(q for book in stored["codebooks"] for q in book["questions"]
                if q["key"] == "size_b")
    assert size["two_coders"]["stuart_maxwell"]["df"] == 2


def test_a_figure_that_comes_out_non_finite_anyway_is_stored_as_undefined_and_named(
        alpha, people, monkeypatch):
    from coding.agreement import metrics

    for item in alpha.papers:
        factories.code(item, people["cora"], label="rl_method", scope="general")
        factories.code(item, people["cyril"])
    real = metrics._two_coder_figures
    monkeypatch.setattr(metrics, "_two_coder_figures",
                        lambda *args: {**real(*args), "units": float("nan")})
    snapshots.take_snapshot(alpha)
    stored = AgreementSnapshot.objects.get(study=alpha, round="main").report
    assert all(math.isfinite(n) for n in all_numbers(stored))
    assert any(place.endswith("two_coders.units") for place in stored["not_finite"])


def test_a_one_coder_study_is_told_that_agreement_needs_two_coders(alpha, people, client_for):
    """Issue 35, 6: it said "59 units coded by each of 1 coders" and nothing else."""
    alpha.overlap = 1
    alpha.save()
    factories.code(alpha.papers[0], people["cora"])
    snapshots.take_snapshot(alpha)
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/agreement/")
    assert "agreement needs at least two coders on the same items" in page.content.decode()


# --- the page, the API and the export tell the truth about the figures (issue 35, 1) --

def code_pairs(study, people, papers, pairs):
    for item, (mine, theirs) in zip(papers, pairs):
        factories.code(item, people["cora"], size_b=mine)
        factories.code(item, people["cyril"], size_b=theirs)


def fail_the_agreement_job(study, monkeypatch):
    from coding.agreement import reliability
    from workbench import jobs

    def broken(*args, **kwargs):
        raise RuntimeError("the report could not be computed")

    monkeypatch.setattr(snapshots, "study_report", broken)
    job = snapshots.recompute(study)
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed"
    monkeypatch.setattr(snapshots, "study_report", reliability.study_report)
    return job


def test_a_failed_computation_leaves_the_page_saying_so_and_no_methods_text(
        alpha, people, client_for, monkeypatch):
    """It said "No independent codings in this round" beside "12 so far", and a methods
    text counting 0 items coded by two coders, after the job failed."""
    code_pairs(alpha, people, alpha.papers, [(1, 2), (3, 3), (4, 4)])
    fail_the_agreement_job(alpha, monkeypatch)
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/agreement/").content.decode()
    failed = page[page.index('id="agreement-failed"'):].split("</p>")[0]
    assert "The last computation failed at" in failed and "no figures have been computed" in failed
    assert 'id="paper-text-withheld"' in page and "none has been computed yet" in page
    assert 'class="paper"' not in page and "So far 0 items" not in page
    doc = olive.get(f"/api/studies/{alpha.slug}/agreement/").json()
    assert doc["text"] is None and doc["freshness"]["last_failure"]["at"]
    assert doc["freshness"]["current"] is False

    snapshots.take_snapshot(alpha, force=True)  # a later computation that works
    fail_the_agreement_job(alpha, monkeypatch)  # and a failed one after it
    page = olive.get(f"/studies/{alpha.slug}/agreement/").content.decode()
    failed = page[page.index('id="agreement-failed"'):].split("</p>")[0]
    assert "the figures below are from" in failed
    doc = olive.get(f"/api/studies/{alpha.slug}/agreement/").json()
    assert doc["text"].startswith("Reliability.") and "3 items" in doc["text"]


def test_the_methods_text_waits_for_a_report_that_counts_every_coding(
        alpha, people, client_for):
    papers = alpha.papers + [factories.paper_item(alpha, alpha.paper_codebook, 3)]
    code_pairs(alpha, people, papers[:3], [(1, 2), (3, 3), (4, 4)])
    snapshots.take_snapshot(alpha)
    olive = client_for(people["olive"])
    assert olive.get(f"/api/studies/{alpha.slug}/agreement/").json()["text"]
    code_pairs(alpha, people, papers[3:], [(5, 5)])
    doc = olive.get(f"/api/studies/{alpha.slug}/agreement/").json()
    assert doc["text"] is None and doc["freshness"]["new_codings"] == 2
    assert doc["text_withheld"].startswith("2 independent codings arrived after")
    snapshots.take_snapshot(alpha)
    doc = olive.get(f"/api/studies/{alpha.slug}/agreement/").json()
    assert doc["freshness"]["current"] and "4 items" in doc["text"]


def test_the_export_readme_says_why_the_reliability_table_is_empty(alpha, people, tmp_path):
    import zipfile

    from coding.export.bundle import build_bundle
    from coding.models import Role

    code_pairs(alpha, people, alpha.papers, [(1, 2), (3, 3)])
    path = tmp_path / "bundle.zip"

    def readme(roles):
        build_bundle(alpha, path, shapes=["wide", "reliability"], fmt="csv", roles=roles)
        with zipfile.ZipFile(path) as bundle:
            return bundle.read("README.md").decode(), bundle.read("reliability.csv").decode()

    text, table = readme({Role.OWNER})
    assert table.count("\n") == 1  # the header alone
    assert "Reliability table: empty: no agreement report had been computed" in text
    snapshots.take_snapshot(alpha)
    text, table = readme({Role.OWNER})
    assert table.count("\n") > 1 and "which counts every independent coding" in text
    text, table = readme({Role.CODER})
    assert "Reliability table: empty: agreement figures are for owners" in text


def test_an_undefined_figure_is_exported_with_its_reason(alpha, people, tmp_path):
    """Every coder gave one and the same answer: alpha has no value, and the export says
    why instead of leaving an empty cell to be read as zero or as a bug."""
    import zipfile

    import pandas as pd

    from coding.export.bundle import build_bundle
    from coding.models import Role

    code_pairs(alpha, people, alpha.papers, [(7, 7), (7, 7), (7, 7)])
    snapshots.take_snapshot(alpha)
    path = tmp_path / "bundle.zip"
    build_bundle(alpha, path, shapes=["reliability"], fmt="csv", roles={Role.OWNER})
    with zipfile.ZipFile(path) as bundle, bundle.open("reliability.csv") as table:
        rows = pd.read_csv(table)
    alpha_row = rows[(rows.question == "size_b") & (rows.figure == "alpha")].iloc[0]
    assert pd.isna(alpha_row["value"]) and isinstance(alpha_row["undefined"], str)
    assert alpha_row["undefined"]
    defined = rows[rows.value.notna()]
    assert defined["undefined"].isna().all()

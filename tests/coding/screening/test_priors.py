"""Prior labels from an ASReview-style CSV (issue 37): the records join the pool without
their labels, the labels become an outside rater's answers, and a screener's first ranking
starts from them."""

import io

import pytest
from django.core.management import CommandError, call_command

from coding.labeling import queue
from coding.labeling.pool import Screening, import_into_study
from coding.models import RaterCoding
from coding.screening import rankings
from coding.screening.priors import PriorLabelsError, import_priors
from coding.screening.setup import configure
from tests import factories
from tests.coding.screening.conftest import SCREENING_CODEBOOK


def write_csv(path, size=40):
    lines = ["title,abstract,year,label_included"]
    for n in range(size):
        relevant = n % 5 == 0
        topic = "reward policy rollout verifier" if relevant else "soil irrigation crop orchard"
        label = "1" if n in (0, 5) else "0" if n in (1, 2) else ""
        lines.append(f"Invented record {n} {topic},An abstract on {topic} {n}.,2020,{label}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def pooled(people, tmp_path):
    study = factories.study("Prior study", owner=people["olive"], overlap=2)
    for name in ("olive", "cora", "cyril"):
        factories.member(study, people[name], people["names"][name])
    factories.codebook(study, SCREENING_CODEBOOK)
    path = write_csv(tmp_path / "set.csv")
    import_into_study(study, {"format": "asreview_csv_file", "path": str(path)}, Screening())
    configure(study, question="decision", include=["include"], random_share=0.0)
    return study, path


def test_the_labels_become_an_outside_raters_answers_and_never_the_documents(pooled, people):
    study, path = pooled
    assert study.items.count() == 40
    assert not any("label" in str(item.snapshot.content) for item in study.items.all())
    report = import_priors(study, path, question="decision", include="include",
                           exclude="exclude", user=people["olive"])
    assert report.as_dict()["errors"] == [] and report.as_dict()["counts"]["new"] == 4
    answers = sorted(RaterCoding.objects.filter(rater__study=study, rater__name="prior-labels")
                     .values_list("value", flat=True))
    assert answers == ["exclude", "exclude", "include", "include"]
    # Again: nothing changes.
    again = import_priors(study, path, question="decision", include="include",
                          exclude="exclude").as_dict()
    assert again["errors"] == [] and RaterCoding.objects.filter(rater__study=study).count() == 4


def test_a_screener_with_no_labels_of_their_own_is_ranked_from_the_priors(pooled, people):
    study, path = pooled
    import_priors(study, path, question="decision", include="include", exclude="exclude")
    cora = people["cora"]
    assert rankings.retrain(study, cora) is None  # the study does not name its priors yet
    configure(study, question="decision", include=["include"], random_share=0.0,
              prior_rater="prior-labels")
    study.refresh_from_db()
    assert rankings.retrain(study, cora) is not None
    served = queue.next_item(study, cora)
    assert served.served == "ranked"
    assert "reward policy" in served.item.document.title


def test_a_bad_label_is_named_by_its_line_and_nothing_is_written(pooled, tmp_path):
    study, _ = pooled
    bad = tmp_path / "bad.csv"
    bad.write_text("title,label_included\nInvented record 0 x,1\nInvented record 1 y,yes\n")
    with pytest.raises(PriorLabelsError, match=r"bad.csv, line 3: label_included is “yes”"):
        import_priors(study, bad, question="decision", include="include", exclude="exclude")
    assert not RaterCoding.objects.filter(rater__study=study).exists()


def test_the_command_imports_priors_and_names_them_in_the_settings(pooled, people):
    study, path = pooled
    out = io.StringIO()
    call_command("screening", study.slug, "--prior-labels", str(path), stdout=out)
    study.refresh_from_db()
    assert study.screening["prior_rater"] == "prior-labels"
    assert "4 prior labels imported" in out.getvalue()
    with pytest.raises(CommandError, match="no column “label_included”"):
        other = path.parent / "nolabels.csv"
        other.write_text("title\nA\n")
        call_command("screening", study.slug, "--prior-labels", str(other), stdout=out)


def test_the_api_and_the_page_import_priors_from_an_upload(pooled, people, client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile

    study, path = pooled
    client = client_for(people["olive"])
    done = client.post(f"/api/studies/{study.slug}/screening-round/priors/",
                       {"file": SimpleUploadedFile("set.csv", path.read_bytes())})
    assert done.status_code == 200 and done.json()["rows"] == 4
    study.refresh_from_db()
    assert study.screening["prior_rater"] == "prior-labels"
    bad = client.post(f"/api/studies/{study.slug}/screening-round/priors/",
                      {"file": SimpleUploadedFile("odd.csv", b"title,label_included\nA,2\n")})
    assert bad.status_code == 400
    assert "odd.csv, line 2: label_included is “2”" in bad.json()["file"][0]
    page = client.post(f"/studies/{study.slug}/screening-round/", {
        "action": "priors", "file": SimpleUploadedFile("set.csv", path.read_bytes())})
    assert page.status_code == 302
    refused = client.post(f"/studies/{study.slug}/screening-round/", {
        "action": "priors", "file": SimpleUploadedFile("odd.csv", b"title\nA\n")})
    assert refused.status_code == 400 and "<code>file</code>" in refused.content.decode()

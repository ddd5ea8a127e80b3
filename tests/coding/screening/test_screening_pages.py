"""Screening from the browser's page, the API and the command (issue 37): the owner turns it
on (a refusal names the field), reads each screener's and the study's figures with the
stopping rule, stops with the estimate recorded, and resumes; coders never read it."""

import io
import json

import pytest
from django.core.management import call_command

from coding.actions.submit import record_coding
from coding.labeling import queue
from coding.models import AuditEntry, OthersWorkRead
from coding.screening import rankings
from tests.coding.screening.conftest import answer, make_screening
from tests.coding.screening.test_ranked_queue import screen
from tests.conftest import page_queries


@pytest.fixture
def screened(people):
    """The screening study with cora's and cyril's first labels: 8 records each, the first
    an include."""
    study, relevant = make_screening(people)
    first = study.items.get(pk=min(relevant))
    for coder in (people["cora"], people["cyril"]):
        # One include each for sure (the random order alone gave none now and then).
        record_coding(queue.assign(first, coder), answer(True))
        for _ in range(7):
            screen(study, coder, relevant, retrain=False)
    return study, relevant


def test_the_api_turns_screening_on_and_names_a_refused_field(client_for, people):
    study, _ = make_screening(people)
    client = client_for(people["olive"])
    url = f"/api/studies/{study.slug}/screening-round/"
    for body, field in (({"question": "note", "include": ["x"]}, "question"),
                        ({"question": "decision", "include": ["maybe"]}, "include"),
                        ({"question": "decision", "include": ["include"],
                          "random_share": 0.9}, "random_share")):
        refused = client.put(url, body, content_type="application/json")
        assert refused.status_code == 400 and list(refused.json()) == [field], refused.json()
    study.refresh_from_db()
    assert study.screening["random_share"] == 0.0  # as the fixture set it: nothing changed
    done = client.put(url, {"question": "decision", "include": ["include"],
                            "random_share": 0.1, "target_recall": 0.9},
                      content_type="application/json")
    assert done.status_code == 200
    assert done.json()["settings"] == {
        "question": "decision", "include": ["include"], "model": "tfidf-svm",
        "random_share": 0.1, "target_recall": 0.9, "confidence": 0.95, "prior_rater": ""}
    entry = AuditEntry.objects.filter(study=study, action="screening.configure").first()
    assert entry.details["random_share"] == {"from": 0.0, "to": 0.1}


def test_the_progress_counts_each_screener_and_the_study(client_for, people, screened):
    study, relevant = screened
    body = client_for(people["olive"]).get(f"/api/studies/{study.slug}/screening-round/").json()
    assert body["total"] == 60 and body["stopped"] is None
    rows = {row["screener"]: row for row in body["screeners"]}
    assert set(rows) == {"cora", "cyril"}
    for name in ("cora", "cyril"):
        mine = [a.item_id for a in queue.Assignment.objects.filter(
            study=study, coder=people[name])]
        assert rows[name]["screened"] == 8
        assert rows[name]["includes"] == sum(1 for pk in mine if pk in relevant)
        assert rows[name]["not_screened"] == 52
        assert rows[name]["curve"][-1] == [8, rows[name]["includes"]]
        assert 0 <= rows[name]["test"]["p"] <= 1
    everyone = {a.item_id for a in queue.Assignment.objects.filter(study=study)}
    assert body["study"]["screened"] == len(everyone)
    assert body["study"]["includes"] == len(everyone & relevant)


def test_stopping_records_the_estimate_serves_nothing_more_and_resuming_undoes_it(
        client_for, people, screened):
    study, relevant = screened
    client = client_for(people["olive"])
    stop = client.post(f"/api/studies/{study.slug}/screening-round/stop/")
    assert stop.status_code == 200
    recorded = stop.json()
    assert recorded["by"] == "olive" and recorded["estimate"]["screened"] >= 8
    study.refresh_from_db()
    assert queue.next_item(study, people["cora"]) is None
    assert AuditEntry.objects.filter(study=study, action="screening.stop").count() == 1
    page = client.get(f"/studies/{study.slug}/screening-round/").content.decode()
    assert "Stopped on" in page and "Resume screening" in page
    assert client.post(f"/api/studies/{study.slug}/screening-round/resume/").status_code == 200
    study.refresh_from_db()
    assert queue.next_item(study, people["cora"]) is not None


def test_the_page_shows_the_figures_the_rule_in_words_and_the_curve(client_for, people,
                                                                     screened):
    study, _ = screened
    response = client_for(people["olive"]).get(f"/studies/{study.slug}/screening-round/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Not yet: recall below 95% cannot be rejected at 95% confidence" in html
    assert "<svg" in html and "Includes found so far" in html
    assert "hypergeometric test" in html
    refused = client_for(people["olive"]).post(f"/studies/{study.slug}/screening-round/", {
        "action": "configure", "question": "decision", "include": "maybe",
        "random_share": "0.05", "target_recall": "0.95", "confidence": "0.95"})
    assert refused.status_code == 400
    assert "<code>include</code>" in refused.content.decode()


def test_an_owner_who_also_screens_has_read_the_others_work(client_for, people, screened):
    from coding.models import Membership, Role

    study, _ = screened
    study.coders_hold_other_roles = True
    study.save()
    Membership.objects.create(study=study, user=people["olive"], role=Role.CODER)
    client_for(people["olive"]).get(f"/api/studies/{study.slug}/screening-round/")
    assert OthersWorkRead.objects.filter(study=study, coder=people["olive"],
                                         kind="screening", item=None).count() == 1


def test_the_page_and_api_cost_the_same_queries_at_any_size(client_for, people):
    study, relevant = make_screening(people, size=30)
    client = client_for(people["olive"])
    urls = [f"/studies/{study.slug}/screening-round/",
            f"/api/studies/{study.slug}/screening-round/"]

    for _ in range(3):
        screen(study, people["cora"], relevant, retrain=False)
    small = [page_queries(client, url) for url in urls]
    for _ in range(12):
        screen(study, people["cora"], relevant, retrain=False)
        screen(study, people["cyril"], relevant, retrain=False)
    assert [page_queries(client, url) for url in urls] == small


def test_the_command_configures_stops_and_prints_the_figures(people, screened):
    study, _ = screened
    out = io.StringIO()
    call_command("screening", study.slug, "--random-share", "0.1", stdout=out)
    text = out.getvalue()
    assert "screening on decision (include: include), model tfidf-svm, 10% served" in text
    assert "cora" in text and "cyril" in text and "stop?" in text
    call_command("screening", study.slug, "--stop", stdout=io.StringIO())
    study.refresh_from_db()
    assert study.screening["stopped"]["by"] is None
    with pytest.raises(Exception, match="include: name the answers"):
        call_command("screening", study.slug, "--include", "maybe", stdout=io.StringIO())


def test_a_retrain_of_one_screener_changes_no_figure_of_another(client_for, people, screened):
    study, _ = screened
    client = client_for(people["olive"])
    before = client.get(f"/api/studies/{study.slug}/screening-round/").json()
    rankings.retrain(study, people["cora"])
    after = client.get(f"/api/studies/{study.slug}/screening-round/").json()
    assert json.dumps(before["screeners"]) == json.dumps(after["screeners"])


def test_a_replay_of_the_decided_records_runs_as_a_job_with_its_figures(
        client_for, people, screened, django_capture_on_commit_callbacks):
    from coding.models import Decision, Item
    from workbench.models import Job

    study, relevant = screened
    # Decide every record, as adjudicators would have by the end of a study.
    for item in Item.objects.filter(study=study):
        Decision.objects.create(item=item, question_key="decision", revision=99,
                                value="include" if item.pk in relevant else "exclude",
                                method="adjudicated", decided_by=people["ada"])
    client = client_for(people["olive"])
    refused = client.post(f"/api/studies/{study.slug}/screening-round/replay/",
                          {"seeds": 50}, content_type="application/json")
    assert refused.status_code == 400 and "seeds" in refused.json()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(f"/api/studies/{study.slug}/screening-round/replay/",
                              {"seeds": 2}, content_type="application/json")
    assert started.status_code == 202
    job = Job.objects.get(pk=started.json()["id"])
    assert job.status == Job.Status.DONE, job.error
    counts = job.result["counts"]
    assert counts["seeds"] == 2 and counts["records_to_100"] is not None
    assert counts["records_to_100"] <= 58  # 60 records, two of them priors
    assert [run["seed"] for run in job.result["runs"]] == [0, 1]

"""The pages people live in all day (issue 20): labels, not keys; nothing typed is lost;
progress; two languages; readable job pages. Real requests on a real database."""

import json
from pathlib import Path

import polib
import pytest
from django.conf import settings

from coding.actions.submit import submit
from coding.labeling import queue
from coding.models import Assignment, Item
from tests import factories
from workbench import jobs
from workbench.models import Job

ANSWERS = {"q-label": "analysis", "q-size_b": "7", "q-failures": ["none"], "q-code_released": "no"}
CATALOG = Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES"


@pytest.fixture(autouse=True)
def run_after_commit(django_capture_on_commit_callbacks):
    global after_commit
    after_commit = django_capture_on_commit_callbacks


def code(item, coder, **values):
    assignment = (Assignment.objects.filter(item=item, coder=coder).first()
                  or queue.assign(item, coder))
    answers = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no",
               **values}
    with after_commit(execute=True):
        return submit(Assignment.objects.get(pk=assignment.pk), answers)


@pytest.fixture
def split(alpha, people):
    """Paper 0: cora says analysis, cyril rl_method/general: a disagreement on label."""
    code(alpha.papers[0], people["cora"], label="analysis", size_b="not_reported")
    code(alpha.papers[0], people["cyril"], label="rl_method", scope="general", size_b=3)
    return alpha


def open_next(client, study):
    return client.post(f"/studies/{study.slug}/code/")["Location"]


def test_the_review_page_and_queue_show_labels_with_keys_only_in_tooltips(split, people, client_for):
    ada = client_for(people["ada"])
    queue_page = ada.get(f"/studies/{split.slug}/review/").content.decode()
    assert "<b><span title=\"rl_method\">RL method</span></b>" in queue_page
    assert "<code>label</code>" not in queue_page and "Main contribution?" in queue_page
    page = ada.get(f"/studies/{split.slug}/review/{split.papers[0].pk}/").content.decode()
    assert '<span title="not_reported">Not reported</span>' in page
    assert '<span title="analysis">Analysis</span>' in page
    assert '<legend title="label">Main contribution?</legend>' in page
    assert ">rl_method<" not in page and ">not_reported<" not in page


def test_another_value_left_empty_says_so_and_keeps_every_choice(split, people, client_for):
    ada = client_for(people["ada"])
    url = f"/studies/{split.slug}/review/{split.papers[0].pk}/"
    response = ada.post(url, {"d-label": "other", "why-label": "Both read it wrongly",
                              "d-size_b": json.dumps(3)})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Enter the other value, or choose one of the coders&#x27; values." in page
    assert "[" not in page[page.index('id="error-summary"'):page.index("</ul>", page.index('id="error-summary"'))]
    assert 'value="other" class="other-choice" checked' in page
    assert ">Both read it wrongly</textarea>" in page
    assert f'value="{json.dumps(3)}" checked' in page
    assert '<a href="#question-label">Main contribution?</a>' in page
    assert not split.papers[0].decisions.filter(method="adjudicated").exists()


def test_check_answers_error_is_a_sentence_in_the_api_too(split, people, client_for):
    ada = client_for(people["ada"])
    response = ada.post(f"/api/studies/{split.slug}/items/{split.papers[0].pk}/review/",
                        {"question": "size_b", "value": "lots", "rationale": "x"},
                        content_type="application/json")
    assert response.status_code == 400
    text = json.dumps(response.json())
    assert "Not a number: expected a number or \\u201cNot reported\\u201d (not_reported)." in text
    assert "['not_reported']" not in text


def test_an_incomplete_submit_keeps_every_value_and_lists_each_problem_at_the_top(alpha, cora_client):
    url = open_next(cora_client, alpha)
    response = cora_client.post(url, {"q-label": "analysis", "q-size_b": "12",
                                      "notes": "half done", "unsure": "on"})
    assert response.status_code == 400
    page = response.content.decode()
    summary = page[page.index('id="error-summary"'):]
    summary = summary[:summary.index("</div>")]
    # Numbered among the questions shown: scope is hidden (label is not rl_method).
    assert '<a href="#question-failures">3. Failures addressed</a>: This question needs an answer.' in summary
    assert '<a href="#question-code_released">4. Code released?</a>' in summary
    assert "Main contribution" not in summary
    assert 'value="analysis" checked' in page and 'value="12"' in page
    assert ">half done</textarea>" in page and 'id="unsure" checked' in page


def test_questions_are_numbered_among_those_shown(alpha, cora_client):
    page = cora_client.get(open_next(cora_client, alpha)).content.decode()
    numbers = {key: page.split(f'id="question-{key}"')[1].split('class="qnum">')[1].split("<")[0]
               for key in ("label", "scope", "size_b")}
    assert numbers == {"label": "1", "scope": "", "size_b": "2"}


def test_the_coder_sees_what_is_left_and_this_sittings_pace(alpha, cora_client):
    url = open_next(cora_client, alpha)
    # Three papers, none coded: the one held is not done yet (issue 35, 6: it said 2 of 2).
    assert "3 of 3 left" in cora_client.get(url).content.decode()
    cora_client.post(url, ANSWERS)
    page = cora_client.get(open_next(cora_client, alpha)).content.decode()
    assert "2 of 3 left" in page and "1 this sitting" in page and "min each" in page


def test_a_calibration_round_of_one_item_shows_that_item_left(alpha, cora_client):
    calibration = factories.paper_item(alpha, alpha.paper_codebook, 9,
                                       round=Item.Round.CALIBRATION,
                                       reference_values={"label": "analysis"})
    page = cora_client.get(open_next(cora_client, alpha)).content.decode()
    assert calibration.document.title in page
    assert "1 of 1 left" in page  # it said 0 of 0


def test_a_chinese_reader_sees_chinese_chrome_and_the_codebook_as_written(alpha, cora_client):
    cora_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = cora_client.get(open_next(cora_client, alpha)).content.decode()
    assert '<html lang="zh-hans">' in page
    assert "提交并继续" in page and "Submit and next" not in page
    assert "Main contribution?" in page and "RL method" in page  # the study's own words


def test_the_switcher_remembers_the_language(alpha, cora_client):
    response = cora_client.post("/language/", {"language": "zh-hans", "next": "/"})
    assert response.status_code == 302
    assert cora_client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert "编码工作台" in cora_client.get("/").content.decode()


def test_the_api_stays_english_for_a_chinese_reader(alpha, cora_client):
    cora_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    response = cora_client.get("/api/studies/no-such-study/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 404
    assert response.json()["detail"].isascii()


def test_every_catalog_entry_is_translated_and_compiled():
    po = polib.pofile(str(CATALOG / "django.po"))
    missing = [e.msgid for e in po if not e.translated() and not e.obsolete]
    assert missing == [], "strings without a Chinese translation"
    compiled = {e.msgid: e.msgstr or e.msgstr_plural for e in polib.mofile(str(CATALOG / "django.mo"))}
    stale = [e.msgid for e in po if e.translated() and e.msgid not in compiled]
    assert stale == [], "django.mo is older than django.po: run `make messages`"


def test_the_job_page_names_the_job_its_counters_the_study_and_the_file(alpha, people, client_for):
    job = Job.objects.create(
        kind="import_to_study", created_by=people["olive"], status=Job.Status.DONE,
        params={"study": alpha.pk, "study_slug": alpha.slug, "study_name": alpha.name,
                "source": {"format": "jsonl_file", "path": "/srv/var/uploads/x/1f3e/papers.jsonl"}},
        result={"counts": {"added_to_pool": 2, "no_codebook": 1}})
    jobs.log(job, "bad JSON", location="/srv/var/uploads/x/1f3e/papers.jsonl line 3")
    page = client_for(people["olive"]).get(f"/jobs/{job.pk}/").content.decode()
    assert f"<h1>Import into a study — job #{job.pk}</h1>" in page
    assert ">Added to the pool</td>" in page and ">No codebook for their kind</td>" in page
    assert f">{alpha.name}</a>" in page
    assert "papers.jsonl line 3" in page and "/srv/var/uploads" not in page


@pytest.fixture
def cora_client(people, client_for):
    return client_for(people["cora"])


def test_the_pages_ask_for_a_favicon_that_exists(alpha, cora_client):
    page = cora_client.get("/").content.decode()
    href = page.split('rel="icon" href="')[1].split('"')[0]
    assert href.endswith("favicon.svg")
    assert (Path(settings.BASE_DIR) / "workbench" / "static" / "workbench" / "favicon.svg").exists()



def test_the_adjudicator_sees_their_decisions_of_today(split, people, client_for):
    ada = client_for(people["ada"])
    url = f"/studies/{split.slug}/review/"
    assert "You recorded 0 decisions today." in ada.get(url).content.decode()
    ada.post(f"{url}{split.papers[0].pk}/", {"d-label": json.dumps("analysis"),
                                             "partial": "1"})  # the other question stays open
    assert "You recorded 1 decision today." in ada.get(url).content.decode()


def test_a_day_of_decisions_is_counted_up_to_a_bound(split, people, client_for, monkeypatch):
    """Counted up to DAY_COUNTED (a bulk load's day took 300 ms to count at 1M items)."""
    from coding.adjudication import views

    monkeypatch.setattr(views, "DAY_COUNTED", 1)
    ada = client_for(people["ada"])
    url = f"/studies/{split.slug}/review/"
    ada.post(f"{url}{split.papers[0].pk}/", {"d-label": json.dumps("analysis"),
                                             "partial": "1"})
    assert "You recorded 1 decision today." in ada.get(url).content.decode()
    ada.post(f"{url}{split.papers[0].pk}/", {"d-size_b": json.dumps(3), "partial": "1"})
    assert "You recorded more than 1 decisions today." in ada.get(url).content.decode()

"""The coding page and the coder's API, through real requests; the form works without JavaScript."""

import json

import pytest
from django.conf import settings

from coding.labeling import queue
from coding.models import Assignment, Coding
from tests import factories

ANSWERS = {"q-label": "analysis", "q-size_b": "7", "q-failures": ["none"], "q-code_released": "no"}


@pytest.fixture
def cora(alpha, people, client_for):
    return client_for(people["cora"])


def open_next(client, study):
    response = client.post(f"/studies/{study.slug}/code/")
    assert response.status_code == 302
    return response["Location"]


def test_code_next_reserves_an_item_and_opens_its_page(alpha, cora):
    url = open_next(cora, alpha)
    page = cora.get(url)
    assert page.status_code == 200
    assignment = Assignment.objects.get()
    assert assignment.item.document.title in page.content.decode()


def test_a_plain_form_post_submits_and_opens_the_next_item(alpha, cora, people):
    url = open_next(cora, alpha)
    response = cora.post(url, ANSWERS)
    next_url = response["Location"]
    assert response.status_code == 302 and next_url != url and "/code/" in next_url
    coding = Coding.objects.get()
    assert coding.values == {"label": "analysis", "size_b": 7, "failures": ["none"],
                             "code_released": "no"}
    assert coding.assignment.coder == people["cora"] and coding.seconds_spent is not None


def test_a_missing_answer_is_named_and_the_other_answers_stay(alpha, cora):
    url = open_next(cora, alpha)
    response = cora.post(url, {**ANSWERS, "q-code_released": ""})
    assert response.status_code == 400
    html = response.content.decode()
    assert "required" in html
    assert 'value="analysis" checked' in html
    assert not Coding.objects.exists()


def test_an_answer_left_on_a_question_that_no_longer_applies_is_dropped(alpha, cora):
    url = open_next(cora, alpha)
    cora.post(url, {**ANSWERS, "q-scope": "general"})
    assert "scope" not in Coding.objects.get().values


def test_number_questions_take_their_special_option(alpha, cora):
    url = open_next(cora, alpha)
    cora.post(url, {**ANSWERS, "q-size_b": ["", "not_reported"]})
    assert Coding.objects.get().values["size_b"] == "not_reported"


def test_an_evidence_quote_is_stored_with_its_offsets_in_the_snapshot(alpha, cora):
    url = open_next(cora, alpha)
    assignment = Assignment.objects.get()
    abstract = assignment.item.snapshot.content["abstract"]
    quote = {"question": "label", "field": "abstract", "quote": "invented abstract"}
    cora.post(url, {**ANSWERS, "evidence": json.dumps([quote])})
    stored = Coding.objects.get().evidence
    start = abstract.index("invented abstract")
    assert stored == [{**quote, "start": start, "end": start + len("invented abstract")}]


def test_a_quote_that_is_not_in_the_item_is_refused_by_name(alpha, cora):
    url = open_next(cora, alpha)
    quote = {"question": "label", "field": "abstract", "quote": "words nobody wrote"}
    response = cora.post(url, {**ANSWERS, "evidence": json.dumps([quote])})
    assert response.status_code == 400
    assert "words nobody wrote" in response.content.decode()
    assert not Coding.objects.exists()


def test_a_saved_draft_comes_back_after_a_reload(alpha, cora):
    url = open_next(cora, alpha)
    saved = cora.post(url + "draft/", {"q-label": "rl_method", "q-scope": "embedded",
                                       "notes": "half-way thought"})
    assert saved.status_code == 200 and b"Draft saved" in saved.content
    html = cora.get(url).content.decode()
    assert 'value="rl_method" checked' in html and 'value="embedded" checked' in html
    assert "half-way thought" in html
    assert not Coding.objects.exists()


def test_revising_a_submitted_item_keeps_both_revisions(alpha, cora):
    url = open_next(cora, alpha)
    cora.post(url, ANSWERS)
    page = cora.get(url).content.decode()
    assert "Submit revision" in page and 'value="analysis" checked' in page
    cora.post(url, {**ANSWERS, "q-label": "rl_method", "q-scope": "general"})
    assert list(Coding.objects.order_by("revision").values_list("revision", "values__label")) == [
        (1, "analysis"), (2, "rl_method")]


def test_previous_reopens_the_last_finished_item(alpha, cora):
    first = open_next(cora, alpha)
    cora.post(first, ANSWERS)
    second = open_next(cora, alpha)
    pk = second.rstrip("/").split("/")[-1]
    response = cora.get(f"/studies/{alpha.slug}/code/previous/?before={pk}")
    assert response["Location"] == first


def test_skipping_without_a_reason_is_refused(alpha, cora):
    url = open_next(cora, alpha)
    refused = cora.post(url + "skip/", {"reason": ""})
    assert refused.status_code == 400
    assert "Say why you skip this item." in refused.content.decode()
    cora.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    refused = cora.post(url + "skip/", {"reason": "  "})
    assert refused.status_code == 400 and "请说明跳过此条目的原因" in refused.content.decode()
    del cora.cookies[settings.LANGUAGE_COOKIE_NAME]
    response = cora.post(url + "skip/", {"reason": "Not a paper about RL"})
    assert response.status_code == 302 and response["Location"] != url  # the next item
    pk = int(url.rstrip("/").split("/")[-1])
    assert Assignment.objects.get(pk=pk).status == Assignment.Status.SKIPPED


def test_a_coder_cannot_open_another_coders_assignment(alpha, people, client_for):
    theirs = queue.next_item(alpha, people["cyril"])
    client = client_for(people["cora"])
    assert client.get(f"/studies/{alpha.slug}/code/{theirs.pk}/").status_code == 404
    assert client.post(f"/studies/{alpha.slug}/code/{theirs.pk}/", ANSWERS).status_code == 404
    assert client.get(f"/api/studies/{alpha.slug}/assignments/{theirs.pk}/").status_code == 404
    assert not Coding.objects.exists()


def test_only_coders_get_items_to_code(alpha, people, client_for):
    for name in ("olive", "ada", "vera"):
        assert client_for(people[name]).get(f"/studies/{alpha.slug}/code/").status_code == 403


def test_when_nothing_is_left_the_coder_is_told_so(alpha, people, cora):
    for item in alpha.papers:
        factories.code(item, people["cora"])
    response = cora.post(f"/studies/{alpha.slug}/code/", follow=True)
    assert response.status_code == 200
    assert "Nothing left for you to code" in response.content.decode()


def test_thread_posts_render_markdown_and_no_script(alpha, people, cora):
    document = factories.thread(7, posts=["**Bold claim** <script>alert('x')</script>",
                                          "```python\nloss = 1\n```"])
    item = queue.add_item(alpha, document, alpha.paper_codebook, priority=9)
    url = open_next(cora, alpha)
    assert Assignment.objects.get().item == item
    html = cora.get(url).content.decode()
    assert "<strong>Bold claim</strong>" in html
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert '<code class="language-python">loss = 1' in html


# --- the same workflow over the API --------------------------------------------

def test_api_coder_takes_next_item_submits_and_gets_a_new_one(alpha, cora):
    base = f"/api/studies/{alpha.slug}"
    first = cora.post(f"{base}/next/").json()
    assert first["item"]["content"]["title"].startswith("Invented paper")
    body = {"values": {"label": "analysis", "size_b": 7, "failures": ["none"],
                       "code_released": "no"}}
    submitted = cora.post(f"{base}/assignments/{first['id']}/submit/", body,
                          content_type="application/json")
    assert submitted.status_code == 201 and submitted.json()["latest"]["revision"] == 1
    second = cora.post(f"{base}/next/").json()
    assert second["id"] != first["id"]


def test_api_submission_errors_name_the_question(alpha, cora):
    base = f"/api/studies/{alpha.slug}"
    first = cora.post(f"{base}/next/").json()
    response = cora.post(f"{base}/assignments/{first['id']}/submit/",
                         {"values": {"label": "poetry"}}, content_type="application/json")
    assert response.status_code == 400
    assert {"label", "size_b", "failures", "code_released"} <= set(response.json())


def test_api_draft_and_skip(alpha, cora):
    base = f"/api/studies/{alpha.slug}"
    first = cora.post(f"{base}/next/").json()
    draft = {"values": {"label": "rl_method"}, "notes": "unsure about scope"}
    assert cora.put(f"{base}/assignments/{first['id']}/draft/", draft,
                    content_type="application/json").status_code == 204
    assert cora.get(f"{base}/assignments/{first['id']}/").json()["draft"]["notes"] == "unsure about scope"
    assert cora.post(f"{base}/assignments/{first['id']}/skip/", {"reason": "Duplicate"},
                     content_type="application/json").status_code == 204
    assert cora.post(f"{base}/next/").json()["id"] != first["id"]


def test_api_says_204_when_nothing_is_left(alpha, people, cora):
    for item in alpha.papers:
        factories.code(item, people["cora"])
    assert cora.post(f"/api/studies/{alpha.slug}/next/").status_code == 204


def test_owner_sees_the_queue_and_draws_a_sample_over_the_api(alpha, people, client_for):
    olive = client_for(people["olive"])
    base = f"/api/studies/{alpha.slug}"
    drawn = olive.post(f"{base}/reliability-sample/", {"count": 2, "seed": 3},
                       content_type="application/json")
    assert drawn.status_code == 201 and drawn.json()["size"] == 2
    summary = olive.get(f"{base}/queue/").json()
    assert {row["coder"] for row in summary["coders"]} == {"cora", "cyril"}
    assert client_for(people["cora"]).get(f"{base}/queue/").status_code == 403


def test_owner_queue_page_draws_a_sample(alpha, people, client_for):
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/queue/")
    assert page.status_code == 200 and "Median seconds per item" in page.content.decode()
    response = olive.post(f"/studies/{alpha.slug}/queue/", {"share": "0.34", "seed": "1"},
                          follow=True)
    assert "Drew a reliability sample of 1 item." in response.content.decode()


def test_a_condition_hint_names_the_question_and_its_answers_as_coders_read_them(alpha, cora):
    """Issue 39, finding 5: "when Main contribution? is RL method", not "when label is
    rl_method"; the keys stay in the tooltips."""
    import re

    html = cora.get(open_next(cora, alpha)).content.decode()
    hint = re.search(r'<span class="cond">(.*?)</span></legend>', html, re.S).group(1)
    text = re.sub(r"<[^>]+>", "", hint)
    assert text == "when Main contribution? is RL method"
    assert 'title="label"' in hint and 'title="rl_method"' in hint

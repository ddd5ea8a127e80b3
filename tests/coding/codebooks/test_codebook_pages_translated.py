"""Codebook texts in the reader's language beyond the coding page (issue 20): the review
page and the codebook page show the translation with the original one click away, the
same markup as the coding page; the "as written" switch is remembered per person; the
decision and the API keep the option values."""

import pytest
from django.test import Client

from coding.codebooks.versions import create_codebook
from coding.models import Decision, LanguagePreference
from tests import factories
from tests.coding.codebooks.test_codebook_translations import translated_spec

LEGEND = '<span class="tr-text">主要贡献？</span><span class="tr-original">Main contribution?</span>'
ANALYSIS = '<span class="tr-text">分析</span><span class="tr-original">Analysis</span>'


@pytest.fixture
def translated(people):
    """A study whose codebook has Chinese texts, a definition and a unit among them; cora
    reads Chinese, cyril English."""
    spec = translated_spec()
    questions = {q["key"]: q for q in spec["questions"]}
    questions["label"]["definition"] = "Pick one."
    questions["size_b"]["unit"] = "billion parameters"
    questions["label"]["options"][0]["examples"] = "PPO with a new clip"
    spec["translations"]["zh-hans"]["questions"]["label"]["options"]["rl_method"]["examples"] = "新裁剪的 PPO"
    study = factories.study("Translated study", owner=people["olive"])
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    study.codebook = create_codebook(study, spec)
    study.papers = [factories.paper_item(study, study.codebook, n) for n in range(100, 102)]
    LanguagePreference.objects.create(user=people["cora"], language="zh-hans")
    return study


@pytest.fixture
def disputed(translated, people):
    """The first paper coded apart by cora and cyril; ada (adjudicator) reads Chinese."""
    item = translated.papers[0]
    factories.code(item, people["cora"], label="analysis")
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    LanguagePreference.objects.create(user=people["ada"], language="zh-hans")
    translated.item = item
    return translated


def review_url(study):
    return f"/studies/{study.slug}/review/{study.item.pk}/"


def test_the_review_page_reads_in_chinese_with_the_original_one_click_away(
        disputed, people, client_for):
    html = client_for(people["ada"]).get(review_url(disputed)).content.decode()
    assert LEGEND in html
    assert ANALYSIS in html  # a coder's value by its translated label
    assert '<span class="tr-text">选一个。</span><span class="tr-original">' in html
    assert 'id="show-original"' in html and 'id="show-original" name="show_original" value="1">' in html
    # The choices still carry the option values.
    assert "&quot;analysis&quot;" in html and "&quot;分析&quot;" not in html


def test_a_decision_taken_on_the_chinese_page_stores_the_key(disputed, people, client_for):
    client = client_for(people["ada"])
    response = client.post(review_url(disputed), {"d-label": '"analysis"'})
    assert response.status_code == 302
    assert Decision.objects.get(item=disputed.item, question_key="label").value == "analysis"


def test_an_english_reviewer_sees_the_codebook_as_written_without_the_switch(
        disputed, people, client_for):
    html = client_for(people["olive"]).get(review_url(disputed)).content.decode()
    assert "主要贡献" not in html and 'id="show-original"' not in html
    assert "Main contribution?" in html


def codebook_url(study):
    return f"/studies/{study.slug}/codebooks/{study.codebook.pk}/"


def test_the_codebook_page_reads_in_chinese_with_the_original_one_click_away(
        translated, people, client_for):
    html = client_for(people["cora"]).get(codebook_url(translated)).content.decode()
    assert LEGEND in html
    assert '<span class="tr-text">强化学习方法</span><span class="tr-original">' in html
    assert '<span class="tr-text">十亿参数</span><span class="tr-original">billion parameters</span>' in html
    assert '<span class="tr-text">新裁剪的 PPO</span><span class="tr-original">PPO with a new clip</span>' in html
    assert 'id="show-original"' in html
    assert "<code>rl_method</code>" in html  # keys stay keys
    english_reader = Client()  # a browser of their own: cora's left a Chinese cookie
    english_reader.force_login(people["cyril"])
    english = english_reader.get(codebook_url(translated)).content.decode()
    assert "主要贡献" not in english and 'id="show-original"' not in english


def test_the_as_written_choice_is_remembered_per_person_on_every_page(
        disputed, people, client_for):
    ada = client_for(people["ada"])
    assert ada.post("/language/original/", {"show_original": "1"}).status_code == 204
    assert LanguagePreference.objects.get(user=people["ada"]).show_original
    assert LanguagePreference.objects.get(user=people["ada"]).language == "zh-hans"  # kept
    for url in (review_url(disputed), codebook_url(disputed)):
        assert 'id="show-original" name="show_original" value="1" checked>' in \
            ada.get(url).content.decode()
    assert ada.post("/language/original/", {}).status_code == 204
    assert not LanguagePreference.objects.get(user=people["ada"]).show_original
    assert 'value="1" checked>' not in ada.get(review_url(disputed)).content.decode()


def test_the_choice_of_someone_who_never_chose_a_language_stores_no_language(
        translated, people, client_for):
    client = client_for(people["cyril"])
    assert client.post("/language/original/", {"show_original": "1"}).status_code == 204
    preference = LanguagePreference.objects.get(user=people["cyril"])
    assert preference.show_original and preference.language == ""
    from coding.accounts.languages import stored_language
    assert stored_language(people["cyril"]) is None
    # Their pages still follow the browser: English here.
    assert "Main contribution?" in client.get(codebook_url(translated)).content.decode()


def test_the_switch_is_for_people_signed_in(client):
    response = client.post("/language/original/", {"show_original": "1"})
    assert response.status_code == 302 and "/login/" in response["Location"]


# --- the diff between versions names translation changes ---------------------------------

def test_the_diff_lists_each_translation_added_changed_or_removed():
    from coding.codebooks.diff import diff, is_empty, summary_line

    old = translated_spec()
    new = translated_spec()
    zh = new["translations"]["zh-hans"]["questions"]
    zh["label"]["text"] = "主要的贡献？"  # changed
    del zh["label"]["options"]["analysis"]  # removed
    zh["failures"] = {"options": {"none": {"label": "无"}}}  # added
    found = diff(old, new)
    assert found["translations"] == [
        {"language": "zh-hans", "question": "label", "option": None, "field": "text",
         "old": "主要贡献？", "new": "主要的贡献？"},
        {"language": "zh-hans", "question": "label", "option": "analysis", "field": "label",
         "old": "分析", "new": None},
        {"language": "zh-hans", "question": "failures", "option": "none", "field": "label",
         "old": None, "new": "无"},
    ]
    assert not is_empty(found) and summary_line(found) == "translations changed"
    from coding.management.commands.codebook_diff import lines

    assert list(lines(found)) == [
        "~ translation zh-hans label text: '主要贡献？' → '主要的贡献？'",
        "- translation zh-hans label.options.analysis label: '分析' → None",
        "+ translation zh-hans failures.options.none label: None → '无'"]
    assert diff(old, translated_spec())["translations"] == []
    assert is_empty(diff(old, translated_spec()))
    # A first version lists its translations as added.
    assert len(diff(None, old)["translations"]) == 8


def test_the_version_page_shows_translation_changes(translated, people, client_for):
    from coding.actions.publish import publish_draft
    from coding.codebooks.editing import save_spec, start_draft
    from coding.codebooks.spec import spec_of

    draft, _ = start_draft(translated.codebook, people["olive"])
    spec = spec_of(draft)
    spec["translations"]["zh-hans"]["questions"]["label"]["text"] = "主要的贡献？"
    del spec["translations"]["zh-hans"]["questions"]["code_released"]
    save_spec(draft, people["olive"], spec)
    publish_draft(translated.codebook, people["olive"], "Chinese reworded", "switch")
    html = client_for(people["olive"]).get(
        f"/studies/{translated.slug}/codebooks/{translated.codebook.pk}/v2/").content.decode()
    section = html[html.index('id="diff"'):html.index("</section>", html.index('id="diff"'))]
    assert "Translations" in section and "简体中文" in section  # the language in itself
    assert "<del>主要贡献？</del>" in section and "<ins>主要的贡献？</ins>" in section
    assert "<del>是否公开代码？</del>" in section and "(removed)" in section
    assert "<code>code_released</code>" in section
    assert "No changes." not in section


def test_a_chinese_coder_in_discussion_reads_the_differing_answers_in_chinese(
        translated, people, client_for):
    from coding.models import Assignment

    translated.discussion_step = True
    translated.save()
    item = translated.papers[0]
    factories.code(item, people["cora"], label="analysis")
    factories.code(item, people["cyril"], label="rl_method", scope="general")
    mine = Assignment.objects.get(coder=people["cora"], item=item)
    html = client_for(people["cora"]).get(
        f"/studies/{translated.slug}/code/{mine.pk}/").content.decode()
    discussion = html[html.index('class="discussion'):html.index("</section>", html.index('class="discussion'))]
    assert LEGEND in discussion and ANALYSIS in discussion
    assert '<span class="tr-text">强化学习方法</span>' in discussion


def test_the_review_list_reads_in_chinese_its_filter_too(disputed, people, client_for):
    html = client_for(people["ada"]).get(f"/studies/{disputed.slug}/review/").content.decode()
    assert LEGEND in html  # the question of each row
    assert ANALYSIS in html  # an answer group by its translated label
    assert '<option value="label" title="label">主要贡献？</option>' in html
    assert 'id="show-original"' in html
    english = client_for(people["cyril"]).get(f"/studies/{disputed.slug}/review/")
    assert english.status_code == 403 or "主要贡献" not in english.content.decode()


def test_a_coders_feedback_reads_in_their_language(disputed, people, client_for):
    disputed.show_feedback = True
    disputed.save(update_fields=["show_feedback"])
    from coding.adjudication import decisions as adjudication
    adjudication.decide(disputed.item, "label", "rl_method", people["ada"])
    html = client_for(people["cora"]).get(f"/studies/{disputed.slug}/feedback/").content.decode()
    assert LEGEND in html and ANALYSIS in html  # her answer, by its translated label
    assert 'id="show-original"' in html

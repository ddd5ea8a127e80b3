"""Codebook texts in other languages (coding.codebooks.translations): carried by the file
formats and the API, checked with located errors, kept with the version, shown to a coder
in their language with the original one click away, and never stored in a coding."""

import copy
import json

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from coding.codebooks import files as codebook_files
from coding.codebooks.editing import save_spec, start_draft
from coding.codebooks.files import dump, import_file
from coding.codebooks.spec import InvalidSpec, check, save_draft, spec_of
from coding.codebooks.versions import create_codebook, draft_new_version
from coding.models import CodebookVersion, Coding, LanguagePreference
from tests import factories

ZH = {"questions": {
    "label": {"text": "主要贡献？", "definition": "选一个。",
              "options": {"rl_method": {"label": "强化学习方法"}, "analysis": {"label": "分析"}}},
    "size_b": {"text": "最大策略（十亿）", "unit": "十亿参数",
               "options": {"not_reported": {"label": "未报告"}}},
    "code_released": {"text": "是否公开代码？"},
}}
ANSWERS = {"q-label": "analysis", "q-size_b": "not_reported", "q-failures": ["none"],
           "q-code_released": "no"}


def translated_spec(**translations):
    spec = copy.deepcopy(factories.SMALL_PAPER_CODEBOOK)
    spec["name"] = "Translated codebook"
    spec["translations"] = translations or {"zh-hans": copy.deepcopy(ZH)}
    return spec


@pytest.fixture
def translated(people):
    """A study whose codebook has Chinese texts; cora reads Chinese, cyril English."""
    study = factories.study("Translated study", owner=people["olive"])
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    study.codebook = create_codebook(study, translated_spec())
    study.papers = [factories.paper_item(study, study.codebook, n) for n in range(100, 102)]
    LanguagePreference.objects.create(user=people["cora"], language="zh-hans")
    return study


def errors_of(spec):
    with pytest.raises(InvalidSpec) as refused:
        check(spec)
    return {str(e) for e in refused.value.errors}


@pytest.mark.parametrize("translations,error", [
    ({"fr": ZH}, "translations.fr: unknown language 'fr': one of en, zh-hans"),
    ({"zh-hans": {"questions": {"label": {"options": {"rl_methods": {"label": "x"}}}}}},
     "translations.zh-hans.questions.label.options.rl_methods: no option 'rl_methods' in "
     "question 'label'"),
    ({"zh-hans": {"questions": {"labels": {"text": "x"}}}},
     "translations.zh-hans.questions.labels: no question 'labels' in this codebook"),
    ({"zh-hans": {"questions": {"code_released": {"options": {"yes": {"label": "是"}}}}}},
     "translations.zh-hans.questions.code_released.options.yes: no option 'yes' in question "
     "'code_released'"),
    ({"zh-hans": {"questions": {"label": {"kind": "multiple"}}}},
     "translations.zh-hans.questions.label.kind: not a text of a question that can be translated"),
    ({"zh-hans": {"questions": {"label": {"options": {"analysis": {"value": "x"}}}}}},
     "translations.zh-hans.questions.label.options.analysis.value: not a text of an option "
     "that can be translated"),
    ({"zh-hans": {"questions": {"label": {"text": "x" * 5001}}}},
     "translations.zh-hans.questions.label.text: 5,001 characters; at most 5,000"),
])
def test_a_wrong_translation_is_refused_by_its_place(translations, error):
    assert error in errors_of(translated_spec(**translations))


def test_translations_of_a_malformed_codebook_are_refused_not_crashed_on():
    spec = {"name": "Broken", "applies_to": "paper",
            "questions": [{"key": ["label"], "text": "?", "kind": "single"},
                          {"key": "scope", "text": "?", "kind": "single",
                           "options": [{"value": ["x"]}, "y", 3]},
                          {"key": "size", "text": "?", "kind": "number", "options": 7}],
            "translations": {"zh-hans": {"questions": {
                "label": {"text": "x"}, "scope": {"options": {"x": {"label": "y"}}},
                "size": {"options": {"a": {"label": "b"}}}}}}}
    errors = errors_of(spec)
    assert "translations.zh-hans.questions.label: no question 'label' in this codebook" in errors
    assert ("translations.zh-hans.questions.scope.options.x: no option 'x' in question 'scope'"
            in errors)
    assert "translations.zh-hans.questions.size.options.a: no option 'a' in question 'size'" in errors


def test_a_file_with_a_wrong_translation_names_its_line_and_writes_nothing(alpha, people):
    doc = {"format": "workbench-codebook", "format_version": 1,
           **translated_spec(**{"zh-hans": {"questions": {"label": {"options": {
               "nope": {"label": "不"}}}}}})}
    text = json.dumps(doc, ensure_ascii=False, indent=2).encode()
    before = CodebookVersion.objects.count()
    with pytest.raises(codebook_files.BadFile) as refused:
        import_file(alpha, people["olive"], text, filename="t.json")
    assert "translations.zh-hans.questions.label.options.nope: no option 'nope'" in str(refused.value)
    assert CodebookVersion.objects.count() == before


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_translations_travel_in_json_and_yaml_and_come_back_the_same(fmt, translated, alpha, people):
    version = translated.codebook.versions.get()
    first = dump(version, fmt)
    assert "强化学习方法" in first.decode()
    result = import_file(alpha, people["olive"], first, filename=f"c.{fmt}")
    again = CodebookVersion.objects.get(codebook_id=result["codebook_id"])
    assert again.translations == {"zh-hans": ZH}
    assert dump(again, fmt) == first


def test_a_codebook_without_translations_writes_no_translations_field(alpha):
    version = alpha.paper_codebook.versions.get()
    assert "translations" not in json.loads(dump(version, "json"))


def test_translations_are_kept_with_each_version_and_copied_into_a_new_draft(translated, people):
    published = translated.codebook.versions.get()
    with pytest.raises(InvalidSpec, match="published and cannot change"):
        save_draft(published, translated_spec(**{"zh-hans": {"questions": {}}}))
    draft = draft_new_version(translated.codebook)
    assert draft.translations == published.translations
    changed = translated_spec(**{"zh-hans": {"questions": {"label": {"text": "新的"}}}})
    save_draft(draft, changed)
    published.refresh_from_db()
    assert published.translations == {"zh-hans": ZH}  # the published version never changes
    assert CodebookVersion.objects.get(pk=draft.pk).translations == {
        "zh-hans": {"questions": {"label": {"text": "新的"}}}}


def test_the_editor_keeps_translations_of_what_remains(translated, people):
    draft, _ = start_draft(translated.codebook, people["olive"])
    spec = spec_of(draft)
    del spec["translations"]  # the editor's form does not carry them
    spec["questions"] = [q for q in spec["questions"] if q["key"] != "code_released"]
    label = next(q for q in spec["questions"] if q["key"] == "label")
    label["options"] = [o for o in label["options"] if o["value"] != "analysis"]
    save_spec(draft, people["olive"], spec)
    kept = CodebookVersion.objects.get(pk=draft.pk).translations["zh-hans"]["questions"]
    assert set(kept) == {"label", "size_b"}
    assert kept["label"]["options"] == {"rl_method": {"label": "强化学习方法"}}


def test_the_api_codebook_carries_the_translations(translated, people):
    api = APIClient()
    api.force_authenticate(people["cyril"])
    found = api.get(f"/api/studies/{translated.slug}/codebooks/").json()
    rows = found["results"] if isinstance(found, dict) else found
    assert rows[0]["versions"][0]["translations"] == {"zh-hans": ZH}
    schema = api.get("/api/schema/?format=json").json()
    assert "translations" in schema["components"]["schemas"]["CodebookVersion"]["properties"]


def test_the_command_exports_the_translations(translated, tmp_path):
    out = tmp_path / "book.json"
    call_command("codebook_file", "export", translated.slug, str(translated.codebook.pk),
                 "--format", "json", "-o", str(out))
    assert json.loads(out.read_text())["translations"] == {"zh-hans": ZH}


def open_next(client, study):
    response = client.post(f"/studies/{study.slug}/code/")
    assert response.status_code == 302
    return response["Location"]


def test_a_chinese_reader_sees_the_translation_with_the_original_one_click_away(
        translated, people, client_for):
    page = client_for(people["cora"]).get(open_next(client_for(people["cora"]), translated))
    html = page.content.decode()
    assert '<span class="tr-text">主要贡献？</span><span class="tr-original">Main contribution?</span>' in html
    assert '<span class="tr-text">未报告</span><span class="tr-original">Not reported</span>' in html
    assert 'id="show-original"' in html
    assert 'aria-label="最大策略（十亿）"' in html
    # The form still sends the option values.
    assert 'value="rl_method"' in html and 'value="强化学习方法"' not in html
    # A question without a translation reads as written, with nothing hidden beside it.
    assert "Failures addressed" in html and "Entropy collapse" in html


def test_an_english_reader_sees_the_codebook_as_written_without_the_switch(
        translated, people, client_for):
    client = client_for(people["cyril"])
    html = client.get(open_next(client, translated)).content.decode()
    assert "主要贡献" not in html and 'id="show-original"' not in html
    assert "Main contribution?" in html


def test_a_coding_made_in_chinese_stores_the_same_keys_as_in_english(translated, people, client):
    stored = {}
    for name in ("cora", "cyril"):
        client.force_login(people[name])
        url = open_next(client, translated)
        assert client.post(url, ANSWERS).status_code == 302
        stored[name] = Coding.objects.get(assignment__coder=people[name]).values
    assert stored["cora"] == stored["cyril"] == {
        "label": "analysis", "size_b": "not_reported", "failures": ["none"],
        "code_released": "no"}


def test_the_demo_codebooks_read_in_chinese(db):
    from coding.studies import presets

    for spec in (presets.PAPER_CODEBOOK, presets.THREAD_CODEBOOK):
        check(spec)
        zh = spec["translations"]["zh-hans"]["questions"]
        assert set(zh) == {q["key"] for q in spec["questions"]}  # every question
        for q in spec["questions"]:
            assert {o["value"] for o in q.get("options", [])} == set(zh[q["key"]].get("options", {}))

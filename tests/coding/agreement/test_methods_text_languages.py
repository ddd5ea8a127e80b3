"""The block for a paper in English and in Chinese (issue 20): one generator run in each
language, the same figures in both, no English sentence left in the Chinese one, the
question texts by the codebook's translation, on the page, the API and the command."""

import copy
import html
import json
import re
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from coding.actions import sample
from coding.agreement import snapshots
from coding.agreement.report import current_document
from coding.codebooks.versions import create_codebook
from tests import factories

ZH = {"questions": {
    "label": {"text": "主要贡献？"},
    "scope": {"text": "适用范围？"},
    "size_b": {"text": "最大策略（十亿）"},
    "failures": {"text": "所解决的失效"},
    "code_released": {"text": "是否公开代码？"},
}}
# What may stay in Latin letters in the Chinese text: names of people and coefficients,
# and the abbreviations the English text uses for them.
NAMES = {"Krippendorff", "Cohen", "Fleiss", "Scott", "Gwet", "Conger", "Brennan", "Prediger",
         "Stuart", "Maxwell", "kappa", "Kappa", "PABAK", "MASI", "weighted"}
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10}


def spec(translated=True):
    spec = copy.deepcopy(factories.SMALL_PAPER_CODEBOOK)
    if translated:
        spec["translations"] = {"zh-hans": copy.deepcopy(ZH)}
    return spec


def build(people, translated=True, name="Methods study", first=0):
    """Six papers, a sample of four drawn before coding with its plan; both coders code
    it and differ on one paper's label and another's size; the discussion step is on."""
    study = factories.study(name, owner=people["olive"])
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    study.discussion_step = True
    study.save(update_fields=["discussion_step"])
    book = create_codebook(study, spec(translated))
    papers = [factories.paper_item(study, book, n) for n in range(first, first + 6)]
    sample.draw_reliability_sample(study, count=4, seed=5, user=people["olive"])
    from coding.models import Item

    sampled = Item.objects.filter(pk__in=[p.pk for p in papers], target__gt=1).order_by("pk")
    for n, paper in enumerate(sampled):
        for coder in ("cora", "cyril"):
            label = "rl_method" if (n, coder) in {(0, "cora"), (0, "cyril"), (1, "cyril")} \
                else "analysis"
            scope = {"scope": "general"} if label == "rl_method" else {}
            size = 12 if (n, coder) == (2, "cyril") else 7 + n
            factories.code(paper, people[coder], label=label, size_b=size, **scope)
    snapshots.take_snapshot(study)
    return study


@pytest.fixture
def methods(people):
    return build(people)


def texts(study):
    doc = current_document(study)
    return doc, current_document(study, language="zh-hans")["text"]


def numbers(text):
    """Every figure in the text, as numbers (".800" and "0.800" alike; "1,000" is 1000)."""
    found = re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+", text)
    return {float(n.replace(",", "")) for n in found}


def test_the_chinese_text_holds_every_figure_of_the_english_one(methods):
    doc, chinese = texts(methods)
    english = doc["text"]
    assert doc["language"] == "en" and english != chinese
    in_words = {NUMBER_WORDS[w.lower()] for w in re.findall(r"[A-Za-z]+", english)
                if w.lower() in NUMBER_WORDS}
    assert numbers(english) <= numbers(chinese), numbers(english) - numbers(chinese)
    assert numbers(chinese) <= numbers(english) | in_words, (
        numbers(chinese) - numbers(english) - in_words)
    # the figures a reader checks first, as the table writes them
    label = next(q for q in doc["rounds"]["main"]["codebooks"][0]["questions"]
                 if q["key"] == "label")
    alpha = label["alpha"]
    shown = f"{alpha['value']:.3f} [{alpha['low']:.3f}, {alpha['high']:.3f}]"
    assert shown in english and shown in chinese
    assert "α" in chinese and "Krippendorff 的 α" in chinese and "95% 自助置信区间" in chinese


def test_the_chinese_text_has_no_english_sentence_left(methods):
    doc, chinese = texts(methods)
    keys = {q["key"] for book in doc["rounds"]["main"]["codebooks"] for q in book["questions"]}
    words = {w.rstrip("'’").removesuffix("'s") for w in re.findall(r"[A-Za-z_][\w'’]*", chinese)}
    left = {w for w in words if len(w) >= 4 and w not in NAMES | keys}
    assert not left, left
    # Chinese punctuation in the sentences, the numbers as they are
    for mark in ("，", "。", "：", "；"):
        assert mark in chinese, mark
    assert ". " not in chinese.replace("Cohen's", "").split("\n\n")[0]


def test_question_texts_follow_the_codebooks_translation_else_as_written(methods, people):
    doc, chinese = texts(methods)
    assert "label（“主要贡献？”）" in chinese and "size_b（“最大策略（十亿）”）" in chinese
    assert 'label (“Main contribution?”)' in doc["text"]
    plain = build(people, translated=False, name="Plain study", first=10)
    untranslated = current_document(plain, language="zh-hans")["text"]
    assert "label（“Main contribution?”）" in untranslated


def test_the_api_gives_the_text_in_the_language_asked_and_refuses_any_other(methods, people,
                                                                           client_for):
    client = client_for(people["olive"])
    url = f"/api/studies/{methods.slug}/agreement/"
    english = client.get(url).json()
    chinese = client.get(url, {"language": "zh-hans"}).json()
    assert english["language"] == "en" and "Reliability. Two coders" in english["text"]
    assert chinese["language"] == "zh-hans" and chinese["text"].startswith("信度。2 名编码员")
    # everything but the text is the same report
    assert {k: v for k, v in chinese.items() if k not in ("text", "language")} == \
        {k: v for k, v in english.items() if k not in ("text", "language")}
    assert client.get(url, {"language": "zh_Hans", "alpha_min": "0.7"}).json()["language"] \
        == "zh-hans"
    refused = client.get(url, {"language": "fr"})
    assert refused.status_code == 400
    assert "language" in refused.json() and "zh-hans" in refused.json()["language"][0]
    both = client.get(url, {"language": "xx", "alpha_min": "7"})
    assert both.status_code == 400 and {"language", "alpha_min"} <= set(both.json())


def test_the_schema_documents_the_language_parameter(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    operation = next(path["get"] for name, path in schema["paths"].items()
                     if name.endswith("/agreement/"))
    parameter = next(p for p in operation["parameters"] if p["name"] == "language")
    assert parameter["schema"]["enum"] == ["en", "zh-hans"]
    assert parameter["schema"]["default"] == "en"


def test_the_command_prints_the_text_in_the_language_asked(methods):
    out = StringIO()
    call_command("agreement_report", methods.slug, "--language", "zh-hans", stdout=out)
    assert out.getvalue().startswith("信度。2 名编码员独立编码了信度样本")
    assert "\n样本量。要在 p = 0.05 水平下检验 α ≥ 0.800" in out.getvalue()
    out = StringIO()
    call_command("agreement_report", methods.slug, "--json", stdout=out)
    assert json.loads(out.getvalue())["text"].startswith("Reliability. Two coders")
    with pytest.raises(CommandError, match="unknown language 'fr'"):
        call_command("agreement_report", methods.slug, "--language", "fr")


@pytest.mark.parametrize("reader,first,second", [("en", "en", "zh-hans"),
                                                 ("zh-hans", "zh-hans", "en")])
def test_the_page_shows_both_texts_the_readers_first(methods, people, client_for, reader,
                                                     first, second):
    client = client_for(people["vera"])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = reader
    page = client.get(f"/studies/{methods.slug}/agreement/").content.decode()
    assert page.index(f'id="paper-{first}"') < page.index(f'id="paper-{second}"')
    shown = {code: html.unescape(re.search(
        rf'<textarea id="paper-{code}"[^>]*>(.*?)</textarea>', page, re.S).group(1))
        for code in ("en", "zh-hans")}
    assert shown["en"].startswith("Reliability. Two coders coded the reliability sample")
    assert shown["zh-hans"].startswith("信度。2 名编码员独立编码了信度样本")
    assert 'data-copies="paper-en"' in page and 'data-copies="paper-zh-hans"' in page
    # the sample line above is in the reader's language too
    sample = "当时尚无条目被编码" if reader == "zh-hans" else "before any item was coded"
    planning = page.split('id="paper"')[0]
    assert sample in planning
    if reader == "zh-hans":  # the planner's source of the share and the line's ending too
        assert "observed:" not in planning and "观测值：" in planning
        assert "未另行抽取样本." not in planning and "样本：" in planning

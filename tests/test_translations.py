"""Both languages stay complete (issue 20): every word a person reads in a template is
marked for translation, every marked string has its Simplified Chinese translation and the
committed .mo is compiled from the committed .po; the owner's pages and the invitation mail
read in Chinese."""

import copy
import re
import shutil
from contextlib import chdir
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
import yaml
from django.conf import settings
from django.core import mail
from django.core.management import call_command
from django.template.base import Lexer, TokenType
from django.test import override_settings

from coding.accounts.languages import forget_language, remember_language

ROOT = Path(settings.BASE_DIR)
CATALOG = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
TEMPLATE_DIRS = [ROOT / "workbench" / "templates", ROOT / "coding" / "templates"]

# Visible words that are the same in every language.
SAME_IN_EVERY_LANGUAGE = {
    "API",  # the menu's link to the API documentation: a name, as in the Chinese UI
    "JSON", "YAML", "REFI-QDA",  # file formats of a codebook's downloads
    "ORCID", "ORCID iD",  # an author's identifier, as ORCID names it in every language
    "Swagger",  # drf-spectacular's page title
    "v",  # a version's prefix, as in "v3"
}
# Templates other helpers are still marking this session (issue 20); each is checked as
# soon as it leaves this list, and the list may only shrink.
NOT_YET_MARKED = {f"coding/templates/coding/{name}.html" for name in [
]}

# Attributes whose value a person reads (or hears, from a screen reader).
READ_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt"}
# Elements whose text is not prose: identifiers, code, scripts.
NOT_PROSE = {"code", "kbd", "samp", "script", "style"}
HOLE = "\x00"  # where a template tag or variable stood
LETTER = re.compile(r"[^\W\d_]")
QUOTED_DEFAULT = re.compile(r"\|default(?:_if_none)?:\"([^\"]*)\"")


def templates():
    for folder in TEMPLATE_DIRS:
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".html", ".txt"):
                yield path


def html_without_translations(source):
    """The template's text with translate blocks, comments and every tag or variable taken
    out (a HOLE instead), so that only literal text is left; plus the literal words given
    to `default` filters, which are shown as they are."""
    parts, literals, skip_until = [], [], None
    for token in Lexer(source).tokenize():
        content = token.contents.split()[0] if token.token_type == TokenType.BLOCK else ""
        if skip_until:
            if content == skip_until:
                skip_until = None
            continue
        if token.token_type == TokenType.TEXT:
            parts.append(token.contents)
            continue
        if content in ("blocktranslate", "blocktrans", "comment"):
            skip_until = "end" + content
        if token.token_type == TokenType.VAR:
            literals += QUOTED_DEFAULT.findall(token.contents)
        parts.append(HOLE)
    return "".join(parts), literals


class VisibleText(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found, self.inside = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "hr", "img", "input", "link", "meta", "source", "wbr"):
            self.inside.append(tag)
        self.found += [value for name, value in attrs if name in READ_ATTRIBUTES and value]
        if tag == "input" and dict(attrs).get("type") in ("submit", "button"):
            self.found.append(dict(attrs).get("value") or "")

    def handle_endtag(self, tag):
        if tag in self.inside:
            while self.inside.pop() != tag:
                pass

    def handle_data(self, data):
        if not NOT_PROSE & set(self.inside):
            self.found.append(data)


def unmarked_words(source):
    html, literals = html_without_translations(source)
    parser = VisibleText()
    parser.feed(html)
    parser.close()
    texts = [" ".join(text.replace(HOLE, " ").split()) for text in parser.found + literals]
    return [text for text in texts
            if LETTER.search(text) and text.strip(" ().,:;·—–/#") not in SAME_IN_EVERY_LANGUAGE]


def test_the_scan_finds_unmarked_text_and_accepts_marked_text():
    assert unmarked_words('<p>Save <b>{{ n }}</b> items</p>') == ["Save", "items"]
    assert unmarked_words('<button aria-label="Remove {{ u }}">{% translate "x" %}</button>') \
        == ["Remove"]
    assert unmarked_words('{{ who|default:"a command" }}') == ["a command"]
    assert unmarked_words('{% load i18n %}<p>{% translate "Save" %} {{ n }} · 3</p>'
                          '{% blocktranslate %}Saved {{ n }}{% endblocktranslate %}'
                          '{% comment %}A note{% endcomment %}<code>wide</code>') == []


def name(path):
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", [p for p in templates() if name(p) not in NOT_YET_MARKED],
                         ids=name)
def test_every_visible_template_string_is_marked_for_translation(path):
    found = unmarked_words(path.read_text(encoding="utf-8"))
    assert found == [], f"{name(path)}: text outside {{% translate %}} / {{% blocktranslate %}}"


def test_the_list_of_templates_not_yet_marked_only_names_unmarked_ones():
    """A template leaves NOT_YET_MARKED once it is marked, so that it is checked."""
    marked = [n for n in NOT_YET_MARKED if not unmarked_words((ROOT / n).read_text())]
    assert marked == [], "marked now: take them off NOT_YET_MARKED"


def in_chinese(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    return client


@pytest.mark.parametrize("path, words", [
    ("/", "您的研究"), ("/studies/new/", "创建研究"), ("/studies/{slug}/", "管理成员和邀请"),
    ("/studies/{slug}/settings/", "保存设置"), ("/studies/{slug}/members/", "生成邀请链接"),
    ("/studies/{slug}/import/", "筛选流程"), ("/studies/{slug}/export/", "备份研究"),
    ("/jobs/", "您的任务"), ("/account/tokens/", "创建令牌"),
])
def test_the_owners_pages_read_in_chinese(alpha, people, client_for, path, words):
    people["olive"].is_staff = True  # may create studies
    people["olive"].save()
    page = in_chinese(client_for(people["olive"])).get(path.format(slug=alpha.slug))
    html = page.content.decode()
    assert page.status_code == 200 and words in html
    assert "Your studies" not in html and "Cancel" not in html


def test_a_page_in_chinese_names_roles_in_chinese(alpha, people, client_for):
    html = in_chinese(client_for(people["olive"])).get(f"/studies/{alpha.slug}/members/")
    html = html.content.decode()
    assert "裁定人" in html and "移除 cora 的编码员角色" in html
    assert ">Adjudicator<" not in html


@pytest.mark.parametrize("language, subject, words", [
    ("en", "Invitation to Alpha study", "as coder on the coding workbench"),
    ("zh-hans", "加入 Alpha study 的邀请", "您受邀以编码员身份参加"),
])
def test_an_invitation_is_mailed_in_the_language_of_whoever_makes_it(
        alpha, people, client_for, settings, language, subject, words):
    settings.EMAIL_HOST = "smtp.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    olive = client_for(people["olive"])
    olive.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    made = olive.post(f"/studies/{alpha.slug}/invites/",
                      {"role": "coder", "days": 3, "email": "nadia@example.org"})
    assert made.status_code == 201
    (sent,) = mail.outbox
    assert sent.subject == subject and words in sent.body
    assert "/invite/" in sent.body and "&quot;" not in sent.body  # plain text, not escaped


def test_an_invitation_to_an_account_is_mailed_in_the_language_it_chose(alpha, people,
                                                                       client_for, settings):
    settings.EMAIL_HOST = "smtp.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    otto = people["otto"]
    otto.email = "otto@example.org"
    otto.save()
    remember_language(otto, "zh-hans")
    olive = client_for(people["olive"])  # reading in English
    olive.post(f"/studies/{alpha.slug}/invites/",
               {"role": "viewer", "days": 3, "email": "Otto@example.org"})
    (sent,) = mail.outbox
    assert sent.subject == "加入 Alpha study 的邀请" and "查看者" in sent.body


# --- the catalog ---------------------------------------------------------------------

NOT_SCANNED = {"locale", ".venv", "var", "tests", "benchmarks", ".git"}


@pytest.fixture(scope="module")
def catalog_from_the_code(tmp_path_factory):
    """makemessages (as `make messages` runs it) over the project's sources, into a copy of
    the committed catalog in a temporary folder: every string the code marks today, with
    the committed translations merged in (a new or changed string comes out untranslated
    or fuzzy). The sources are linked into that folder so the committed catalog is never
    written."""
    folder = tmp_path_factory.mktemp("messages")
    shutil.copytree(ROOT / "locale", folder / "locale")
    for path in ROOT.iterdir():
        if path.name not in NOT_SCANNED:
            (folder / path.name).symlink_to(path)
    with override_settings(LOCALE_PATHS=[folder / "locale"]), chdir(folder):
        call_command("makemessages", locale=["zh_Hans"], no_location=True, symlinks=True,
                     verbosity=0, ignore_patterns=["node_modules"])
    return polib.pofile(str(folder / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"))


def test_every_marked_string_has_a_chinese_translation(catalog_from_the_code):
    missing = [entry.msgid for entry in catalog_from_the_code
               if not entry.obsolete and not entry.translated()]
    assert missing == [], "marked but not translated in locale/zh_Hans: run `make messages`"


def test_the_compiled_catalog_is_the_committed_one():
    """django.mo holds exactly the translations of django.po (compilemessages was run
    after the last change; a .mo older than its .po differs from it)."""
    def pairs(catalog):
        return {(entry.msgctxt, entry.msgid): entry.msgstr or entry.msgstr_plural.get(0)
                for entry in catalog if entry.msgid and not entry.obsolete
                and (entry.msgstr or any(entry.msgstr_plural.values()))
                and "fuzzy" not in entry.flags}

    assert pairs(polib.mofile(str(CATALOG / "django.mo"))) == \
        pairs(polib.pofile(str(CATALOG / "django.po")))


# --- messages written by the code (issue 20): in the reader's language, keys kept ------

def test_a_codebook_file_with_an_error_reads_in_chinese_and_still_names_the_question(
        alpha, people, client_for):
    """Uploaded with Chinese active: the sentence in Chinese, the path and line as they are;
    the API answers the same upload in English."""
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse
    from rest_framework.test import APIClient

    from coding.studies import presets

    doc = {"format": "workbench-codebook", "format_version": 1,
           **{k: v for k, v in presets.PAPER_CODEBOOK.items() if k != "translations"}}
    doc["questions"] = copy.deepcopy(doc["questions"])
    doc["questions"][2]["options"][0]["value"] = "not a value!"
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "not a value!" in row)

    def upload():
        return {"file": SimpleUploadedFile("bad.yaml", text.encode()), "target": "new",
                "applies_to": "paper"}

    url = reverse("codebook-import", args=[alpha.slug])
    page = in_chinese(client_for(people["olive"])).post(url, upload())
    (problem,) = page.context["problems"]
    assert problem.path == "questions[2].options[0].value"
    assert problem.message == ("取值由字母、数字和 _ . - 组成，以字母或数字开头（最多 100 个字符）"
                               f"（第 {line} 行）")
    html = page.content.decode()
    assert "questions[2].options[0].value" in html and "a value is letters" not in html

    english = client_for(people["olive"])
    english.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    (problem,) = english.post(url, upload()).context["problems"]
    assert problem.message == ("a value is letters, digits, _ . - (at most 100), starting with "
                               f"a letter or digit (line {line})")

    api = APIClient()
    api.force_authenticate(people["olive"])
    api.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    body = api.post(reverse("api-codebook-import", args=[alpha.slug]), upload(),
                    format="multipart").json()
    assert body["questions[2].options[0].value"][0].startswith("a value is letters")


def test_a_located_yaml_error_names_its_line_in_chinese():
    from django.utils import translation

    from coding.codebooks.files import BadFile, read

    with translation.override("zh-hans"), pytest.raises(BadFile) as refused:
        read(b"name: x\nname: y\n", filename="c.yaml")
    (error,) = refused.value.errors
    assert (error.path, error.message) == ("第 2 行", "键 'name' 重复（首次出现在第 1 行）：每个键只能出现一次")


def test_a_refused_reliability_sample_reads_in_chinese(alpha, people, client_for):
    page = in_chinese(client_for(people["olive"])).post(f"/studies/{alpha.slug}/queue/",
                                                         {"count": 999})
    html = page.content.decode()
    assert "样本应包含 0 到 3 个条目，而不是 999 个。" in html
    assert "The sample must hold" not in html


def test_the_audit_page_reads_in_chinese_from_the_stored_keys(alpha, people, client_for):
    from coding.access.audit import record
    from coding.models import AuditEntry
    from coding.studies.setup import ACTION_WORDS

    record(people["olive"], alpha, "study.settings", alpha.name,
           overlap={"from": 2, "to": 3}, blind_authors={"from": False, "to": True})
    record(people["olive"], alpha, "member.add", "coder cora", role="coder", user="cora")
    assert set(AuditEntry.objects.values_list("action", flat=True)) >= {"study.settings",
                                                                        "member.add"}
    url = f"/studies/{alpha.slug}/audit/"
    html = in_chinese(client_for(people["olive"])).get(url).content.decode()
    for words in ("修改了设置", "重叠数：2 → 3；隐藏作者：否 → 是", "添加了成员",
                  "角色：编码员；用户：“cora”"):
        assert words in html, words
    assert "changed settings" not in html and 'data-action="member.add"' in html
    recorded = {action for path in (ROOT / "coding").rglob("*.py")
                for action in re.findall(r'record\([^,]+, [^,]+, "([a-z_]+\.[a-z_]+)"',
                                         path.read_text(encoding="utf-8"))}
    assert recorded and recorded - set(ACTION_WORDS) == set(), "an action without words"

    client = client_for(people["olive"])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    html = client.get(url).content.decode()
    for words in ("changed settings", "overlap: 2 → 3", "blind authors: no → yes",
                  "added a member", "role: coder; user: “cora”"):
        assert words in html, words
    api = client.get(f"/api/studies/{alpha.slug}/audit/",
                     HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    rows = api["results"] if isinstance(api, dict) else api
    assert {row["action_words"] for row in rows} >= {"changed settings", "added a member"}


def test_a_rater_import_job_writes_its_errors_in_the_language_it_was_started_in(
        alpha, people, client_for, tmp_path, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.utils import translation

    from coding.raters.imports import start_import
    from coding.raters.setup import add_rater
    from workbench.models import Job

    olive = people["olive"]
    remember_language(olive, "zh-hans")
    add_rater(alpha, olive, kind="model", name="labeller", model_version="v1")
    key = alpha.papers[0].document.key
    rows = (f"item,rater,question,value\n{key},nobody,label,analysis\n"
            f"{key},labeller,colour,red\n")
    bad = tmp_path / "labels.csv"
    bad.write_text(rows)
    # Started on a page she reads in Chinese: the job writes Chinese.
    with translation.override("zh-hans"), django_capture_on_commit_callbacks(execute=True):
        job = start_import(alpha, olive, str(bad))
    job = Job.objects.get(pk=job.pk)
    assert job.status == "failed"
    assert "2 行有误，未导入任何内容：第 2 行，rater：本研究中没有评分者 'nobody'" in job.error
    assert "第 3 行，question：" in job.error and "中没有问题 'colour'" in job.error
    events = list(job.events.order_by("pk").values_list("location", "message"))
    assert ("labels.csv 第 2 行，rater", "本研究中没有评分者 'nobody'；请先在评分者页面添加") in events
    page = client_for(olive).get(f"/jobs/{job.pk}/").content.decode()
    assert "评分者编码导入" in page and "Import_rater_codings" not in page

    # The same file through the API, whose readers are scripts: English, whatever she reads.
    upload = SimpleUploadedFile("labels.csv", rows.encode(), content_type="text/csv")
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(olive).post(f"/api/studies/{alpha.slug}/rater-codings/",
                                          {"file": upload})
    assert response.status_code == 202, response.content
    job = client_for(olive).get(f"/api/jobs/{response.json()['id']}/").json()
    assert job["error"].startswith("2 bad rows, nothing imported"), job
    assert "第" not in job["error"]

    forget_language(olive)  # the English stays as it was
    with django_capture_on_commit_callbacks(execute=True):
        job = start_import(alpha, olive, str(bad))
    assert Job.objects.get(pk=job.pk).error.startswith(
        "2 bad rows, nothing imported: line 2, rater: no rater 'nobody' in "
        "this study; add it on the raters page first")


def test_a_weight_matrix_error_reads_in_chinese_and_names_the_cell(alpha):
    from django.core.exceptions import ValidationError
    from django.utils import translation

    from coding.models import Question
    from coding.raters.comparisons import checked_weights

    question = Question.objects.get(version__codebook=alpha.paper_codebook, key="code_released")
    weights = {"yes": {"yes": 1, "no": 0.5}, "no": {"yes": 0.5, "no": 0.9}}
    for language, words in (("zh-hans", "单元格 (no, no)：对角线必须为 1（完全一致），而不是 0.9"),
                            ("en", "cell (no, no): the diagonal must be 1 (full agreement), "
                                   "not 0.9")):
        with translation.override(language), pytest.raises(ValidationError) as refused:
            checked_weights(question, "custom", weights)
        assert refused.value.message_dict == {"weights": [words]}


def test_the_drift_rule_is_stored_in_english_and_shown_in_the_readers_language():
    from django.utils import translation

    from coding.agreement.metrics import DRIFT_RULE, drift_rule, rule_words

    with translation.override("zh-hans"):
        stored = drift_rule("week")  # what the report keeps, whatever language is active
        shown = rule_words({"unit": "week", "rule": stored})
        batches = rule_words({"rule": DRIFT_RULE})
    assert stored.startswith("Each coder against the others, week by week (calendar ISO weeks")
    assert shown.startswith("每位编码员对照其他人，按周计算（日历ISO 周，周一至周日，UTC")
    assert "95% 区间（对窗口内单元重抽样 200 次" in shown
    assert batches.startswith("每位编码员对照其他人，逐批计算") and "Each" not in batches
    with translation.override("en"):
        assert rule_words({"unit": "week"}) == stored and rule_words({}) == ""


def test_the_planners_warnings_read_in_chinese():
    from django.utils import translation

    from coding.agreement.sample_size import _question_warnings

    question = {"short": False, "rarest": "systems", "rarest_n": 2, "unused": ["a", "b"]}
    with translation.override("zh-hans"):
        assert _question_warnings(question, 0.8, 40) == [
            "“systems”目前的取值不足 5 个；它的一致性只基于寥寥几个案例。",
            "至今从未使用：a, b；尚不知道它们的编码可靠程度。"]


def test_screening_counters_and_the_rater_import_job_read_in_chinese():
    from django.utils import translation

    from coding.labeling.pool import flat_counts
    from workbench.templatetags.workbench_jobs import counter_label, job_label

    counts = flat_counts({"read": 9, "excluded": {"date_range": 2, "query": 1}})
    assert list(counts) == ["read", "excluded: outside the date range",
                            "excluded: does not match the query"]  # stored as they were
    with translation.override("zh-hans"):
        labels = [str(counter_label(name)) for name in [*counts, "new", "changed", "errors"]]
        assert job_label("import_rater_codings") == "评分者编码导入"
    assert labels[1].startswith("已排除：") and "outside" not in labels[1]
    assert labels[3:] == ["新增", "修改", "错误"]
    with translation.override("en"):
        assert counter_label("excluded: outside the date range") == \
            "Excluded: outside the date range"


def test_an_answer_that_does_not_fit_its_question_is_refused_in_chinese(alpha):
    """The rater import's (and the coding page's) value errors: the options by their labels
    and keys, the sentence in Chinese."""
    from django.utils import translation

    from coding.codebooks.versions import check_answer
    from coding.models import Question

    question = Question.objects.get(version__codebook=alpha.paper_codebook, key="code_released")
    with translation.override("zh-hans"), pytest.raises(ValueError) as refused:
        check_answer(question, "maybe")
    assert str(refused.value) == "请回答是或否。"
    with translation.override("en"), pytest.raises(ValueError) as refused:
        check_answer(question, "maybe")
    assert str(refused.value) == "Answer yes or no."


def test_the_agreement_page_says_the_stored_rules_in_chinese_and_the_api_in_english(
        alpha, people, client_for):
    from coding.agreement import snapshots
    from tests.coding.agreement.test_reliability import three_coders_over_five_weeks

    three_coders_over_five_weeks(alpha, people, drifting_from_week=3)
    snapshots.take_snapshot(alpha)
    html = in_chinese(client_for(people["olive"])).get(f"/studies/{alpha.slug}/agreement/")
    html = html.content.decode()
    assert "每位编码员对照其他人，按周计算（日历ISO 周，周一至周日，UTC" in html
    assert "只计入当前裁定由该编码员以外的裁定人作出的条目" in html
    assert "week by week (calendar" not in html and "Only items whose current" not in html
    doc = in_chinese(client_for(people["olive"])).get(
        f"/api/studies/{alpha.slug}/agreement/").json()
    drift = next(q for book in doc["rounds"]["main"]["codebooks"] for q in book["questions"]
                 if q["key"] == "code_released")["drift_calendar"]
    assert drift["rule"].startswith("Each coder against the others, week by week (calendar")
    assert doc["against_decisions_rule"].startswith("Only items whose current decision")


def test_a_codebook_translation_naming_no_question_is_refused_in_chinese_at_its_path():
    from django.utils import translation

    from coding.codebooks.spec import validate

    spec = {"name": "Tiny", "applies_to": "paper", "questions": [
        {"key": "done", "kind": "yes_no", "text": "Done?"}],
        "translations": {"zh-hans": {"questions": {"gone": {"text": "没了？"}}}}}
    with translation.override("zh-hans"):
        (error,) = validate(spec)
    assert (error.path, error.message) == ("translations.zh-hans.questions.gone",
                                           "本编码手册中没有问题 'gone'")


def test_an_import_job_reads_in_the_language_its_owner_chose(
        alpha, people, client_for, tmp_path, django_capture_on_commit_callbacks):
    """The job keeps its counters' keys; its page names them, a screening rule's exclusions
    too, in Chinese, and its progress line was written in Chinese."""
    from tests.coding.labeling.test_pool import PAPERS, snapshot_line
    from workbench.models import Job

    olive = people["olive"]
    remember_language(olive, "zh-hans")
    path = tmp_path / "arxiv.jsonl"
    path.write_text("\n".join(snapshot_line(*row) for row in PAPERS) + "\n")
    client = client_for(olive)
    with open(path, "rb") as upload, django_capture_on_commit_callbacks(execute=True):
        client.post(f"/studies/{alpha.slug}/import/", {
            "format": "arxiv_snapshot_file", "file": upload, "categories": "cs.LG"})
    job = Job.objects.get(kind="import_to_study")
    assert "excluded: not in the chosen categories" in job.result["counts"]  # the key kept
    assert "加入条目池" in job.message and "失败" in job.message
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "已排除：不属于所选类别" in html and "加入条目池" in html
    assert "excluded: not in the chosen categories</td>" not in html


def test_a_refi_qda_file_that_is_not_a_codebook_is_refused_in_chinese_at_its_line():
    from django.utils import translation

    from coding.codebooks.files import BadFile, read

    with translation.override("zh-hans"), pytest.raises(BadFile) as refused:
        read(b'<?xml version="1.0"?>\n<Project/>\n', filename="c.qdc")
    (error,) = refused.value.errors
    assert error.path == "第 2 行"
    assert error.message.startswith("根元素是 'Project'；REFI-QDA 编码手册的根元素应是")

"""The importers' messages in the reader's language (issue 20): a bad record's line names
its file and line (or item, entry, field) in Simplified Chinese for an owner who reads
Chinese, on the job page and in the job's log; the API and the management commands keep
English; and every message the importers make is marked for translation."""

import ast
import copy
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import translation
from rest_framework.test import APIClient

from coding.accounts.languages import remember_language
from ingest.imports import run_import
from workbench.models import Job

from .conftest import FIXTURES, fixture_json

SNAPSHOT_BAD = FIXTURES / "arxiv" / "snapshot_bad.jsonl"


def bad_threads(tmp_path):
    """What `gh api` saves: an array of thread bundles; the second one's title is a number."""
    good, bad = fixture_json("github/saved/thread_42.json"), fixture_json("github/saved/thread_41.json")
    bad = copy.deepcopy(bad)
    bad["issue"]["title"] = 41
    path = tmp_path / "threads.json"
    path.write_text(json.dumps([good, bad]))
    return path


def import_on_the_page(client, study, fmt, path, capture):
    with open(path, "rb") as upload, capture(execute=True):
        page = client.post(f"/studies/{study.slug}/import/", {"format": fmt, "file": upload})
    assert page.status_code == 302, page.content.decode()[:2000]
    return Job.objects.filter(kind="import_to_study").latest("pk")


def logged(job):
    return list(job.events.order_by("pk").values_list("location", "message"))


@pytest.fixture
def olive_reads_chinese(people, client_for):
    remember_language(people["olive"], "zh-hans")
    return client_for(people["olive"])


def test_a_bad_arxiv_record_reads_in_chinese_and_names_its_line_and_field(
        alpha, olive_reads_chinese, django_capture_on_commit_callbacks):
    job = import_on_the_page(olive_reads_chinese, alpha, "arxiv_snapshot_file", SNAPSHOT_BAD,
                             django_capture_on_commit_callbacks)
    events = logged(job)
    assert ("snapshot_bad.jsonl 第 2 行", "JSON 格式错误：此行在字符串中间结束（被截断，或记录延续到了"
            "下一行：JSON Lines 每行只能有一条完整的记录）") in events
    assert ("snapshot_bad.jsonl 第 4 行", "缺少字段 'id'") in events
    assert ("snapshot_bad.jsonl 第 5 行", "字段 'title' 应为字符串，实际为 int") in events
    assert ("snapshot_bad.jsonl 第 6 行",
            "versions[0].created 中的日期无效：'Blursday, 99 Foo 2025'") in events
    assert ("snapshot_bad.jsonl 第 7 行", "同一 JSON 对象中键 'id' 重复") in events
    html = olive_reads_chinese.get(f"/jobs/{job.pk}/").content.decode()
    assert "snapshot_bad.jsonl 第 5 行" in html and "字段 &#x27;title&#x27; 应为字符串" in html
    assert ">错误</td>" in html and ">已标记删除</td>" in html
    assert "should be a string" not in html and "missing field" not in html
    assert ">error</td>" not in html and ">deleted</td>" not in html


def test_a_bad_github_record_reads_in_chinese_and_names_its_item_and_field(
        alpha, olive_reads_chinese, tmp_path, django_capture_on_commit_callbacks):
    job = import_on_the_page(olive_reads_chinese, alpha, "github_file", bad_threads(tmp_path),
                             django_capture_on_commit_callbacks)
    # alpha has a paper codebook only: the good thread goes nowhere, and the log says so.
    assert logged(job) == [("threads.json 第 2 项", "字段 'title' 应为字符串，实际为 int"),
                           ("", "1 个文档未进入条目池：本研究没有适用于讨论串的编码手册。"
                                "请先添加，再重新导入。")]
    assert "已读取" in job.message or job.status == Job.Status.DONE
    html = olive_reads_chinese.get(f"/jobs/{job.pk}/").content.decode()
    assert "threads.json 第 2 项" in html and "should be a string" not in html


def test_the_same_bad_files_through_the_api_stay_english(
        alpha, people, olive_reads_chinese, tmp_path, django_capture_on_commit_callbacks):
    """The owner reads Chinese on pages; an import started from the API (scripts read it)
    writes its log in English, and the API shows it so."""
    api = APIClient()
    api.force_authenticate(people["olive"])
    api.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    for fmt, path, expected in [
            ("arxiv_snapshot_file", SNAPSHOT_BAD,
             ("snapshot_bad.jsonl line 5", "field 'title' should be a string, got int")),
            ("github_file", bad_threads(tmp_path),
             ("threads.json item 2", "field 'title' should be a string, got int"))]:
        with open(path, "rb") as upload, django_capture_on_commit_callbacks(execute=True):
            started = api.post(f"/api/studies/{alpha.slug}/imports/", {
                "source": json.dumps({"format": fmt}), "file": upload}, format="multipart")
        assert started.status_code == 202, started.content
        body = api.get(f"/api/jobs/{started.json()['id']}/").json()
        events = [(e["location"], e["message"]) for e in body["events"]]
        assert expected in events
        assert not any(re.search("[\u4e00-\u9fff]", location + message)
                       for location, message in events)
        assert re.search("[\u4e00-\u9fff]", body["message"] or "") is None


def test_a_refused_mapping_reads_in_chinese_on_the_page_and_in_english_from_the_api(
        alpha, people, olive_reads_chinese, tmp_path):
    path = tmp_path / "papers.csv"
    path.write_text("id,title\n1,An Invented Title\n")
    with open(path, "rb") as upload:
        page = olive_reads_chinese.post(f"/studies/{alpha.slug}/import/", {
            "format": "csv_file", "file": upload, "mapping": json.dumps({"key": "id"})})
    assert "映射至少需要 &#x27;key&#x27; 和 &#x27;title&#x27; 两列" in page.content.decode()
    api = APIClient()
    api.force_authenticate(people["olive"])
    with open(path, "rb") as upload:
        answer = api.post(f"/api/studies/{alpha.slug}/imports/", {
            "source": json.dumps({"format": "csv_file", "mapping": {"key": "id"}}),
            "file": upload}, format="multipart", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert answer.status_code == 400
    assert answer.json()["source"] == "a mapping needs at least the 'key' and 'title' columns"


def test_the_ingest_job_writes_in_the_language_its_params_name(people):
    from workbench import jobs

    job = Job.objects.create(kind="ingest", created_by=people["olive"], params={
        "format": "arxiv_snapshot_file", "path": str(SNAPSHOT_BAD), "language": "zh-hans"})
    jobs.run(job.pk)
    job.refresh_from_db()
    assert ("snapshot_bad.jsonl 第 5 行", "字段 'title' 应为字符串，实际为 int") in logged(job)
    assert job.message == "已读取 9 条：新增 2，更新 0，未变化 0，排除 0，错误 7"

    remember_language(people["olive"], "zh-hans")  # ingest knows nothing of people's choices
    job = Job.objects.create(kind="ingest", created_by=people["olive"], params={
        "format": "arxiv_snapshot_file", "path": str(SNAPSHOT_BAD), "strict": True})
    jobs.run(job.pk)
    job.refresh_from_db()
    assert job.error.startswith("Stopped at the first bad record: "
                                "snapshot_bad.jsonl line 2: malformed JSON")


def test_an_atom_entry_and_an_xml_error_name_their_place_in_chinese(db, tmp_path):
    errors = []
    with translation.override("zh-hans"):
        run_import({"format": "arxiv_atom_file",
                    "path": str(FIXTURES / "arxiv" / "atom_bad_entries.xml")},
                   log_error=errors.append)
        broken = tmp_path / "cut.xml"
        broken.write_text('<feed xmlns="http://www.w3.org/2005/Atom"><entry>')
        run_import({"format": "arxiv_atom_file", "path": str(broken)}, log_error=errors.append)
    said = [(e.location.rsplit("/", 1)[-1], e.reason) for e in errors]
    assert said[:3] == [
        ("atom_bad_entries.xml 第 2 个 entry", "published 中的日期无效：'Blursday'"),
        ("atom_bad_entries.xml 第 3 个 entry", "缺少字段 'title'"),
        ("atom_bad_entries.xml 第 4 个 entry",
         "entry id 'http://example.org/not-an-abstract' 不是 arXiv 摘要页 URL")]
    assert said[3][0] == "cut.xml 第 1 行第 49 列" and said[3][1].startswith("XML 格式错误：")


def test_the_commands_stay_english_whatever_language_is_active(db, capsys):
    with translation.override("zh-hans"):
        call_command("ingest_arxiv", "snapshot", str(SNAPSHOT_BAD))
    err = capsys.readouterr().err
    assert "snapshot_bad.jsonl line 5: field 'title' should be a string, got int" in err
    assert re.search("[\u4e00-\u9fff]", err) is None


# --- every message the importers make is marked --------------------------------------

INGEST = Path(settings.BASE_DIR) / "ingest"
# Exceptions and records whose text people read (a job's log and failure, a page's form
# error, the API's 400); the commands' own output is English and not scanned.
SAID_BY = re.compile(r"(Error|Exception|BadRecord|RecordWarning|MalformedXml|_TooLarge|"
                     r"UnknownEncoding|StrictModeError|SourceFailed)$")
NOT_SCANNED = {"migrations", "management"}
# Programmers' guards, never shown to a person.
FOR_PROGRAMMERS = {("models.py", "a snapshot is frozen; take a new one instead")}
WORD = re.compile(r"[A-Za-z]{2,}")
NOT_WORDS = {"HTTP"}  # a status line, as HTTP writes it in every language


def words(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parts = [node.value]
    elif isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
    else:
        return []
    return [w for part in parts for w in WORD.findall(part) if w not in NOT_WORDS]


def unmarked_messages(source, name="x.py"):
    """Literal text given to an exception or a record, or returned as a retry's reason,
    outside gettext: (line, text)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            callee = getattr(node.func, "id", getattr(node.func, "attr", ""))
            texts = (list(node.args) + [k.value for k in node.keywords]
                     if SAID_BY.search(callee) else [])
        elif isinstance(node, ast.Return) and node.value is not None:
            texts = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            texts = [t for t in texts if not (isinstance(t, ast.JoinedStr)
                                              and "INSERT INTO" in ast.unparse(t))]
        else:
            continue
        for text in texts:
            if words(text) and (isinstance(text, ast.JoinedStr) or " " in text.value):
                said = ast.unparse(text) if isinstance(text, ast.JoinedStr) else text.value
                if (name, said) not in FOR_PROGRAMMERS:
                    found.append((text.lineno, said))
    return found


def test_the_scan_finds_unmarked_messages_and_accepts_marked_ones():
    assert unmarked_messages('raise BadRecord(f"field {what!r} is empty")') == [
        (1, "f'field {what!r} is empty'")]
    assert unmarked_messages('yield RecordError(where, "the file is empty")') == [
        (1, "the file is empty")]
    assert unmarked_messages('def f():\n    return None, f"network error: {exc}", 3') == [
        (2, "f'network error: {exc}'")]
    assert unmarked_messages('raise BadRecord(_("field %(field)s is empty") % {"field": w})\n'
                             'yield RecordError(f"{name}: {n}", _("the file is empty"))\n'
                             'raise FetchError(f"{name}: HTTP {status}")') == []


def test_every_message_of_the_importers_is_marked_for_translation():
    found = [f"{path.relative_to(INGEST)}:{line}: {said}"
             for path in sorted(INGEST.rglob("*.py")) if not NOT_SCANNED & set(path.parts)
             for line, said in unmarked_messages(path.read_text(encoding="utf-8"), path.name)]
    assert found == [], "mark these with gettext, placeholders named (%(line)s)"

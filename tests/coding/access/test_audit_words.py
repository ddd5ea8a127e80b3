"""The audit trail reads in the reader's language: what was done, to what, and the details.

Entries keep keys (the action, the details' keys, the target's kind and names); the page
puts them in words when it shows them, in English or Chinese, and the API keeps English.
The study is built by the product's own functions, every audited action once, as the
pages, the API and the commands call them. The people are conftest's: olive owns alpha,
cora and cyril code it, ada adjudicates, vera views."""

import io
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation

from coding.access import audit
from coding.actions import publish, sample
from coding.catalog import edit as catalog_edit
from coding.codebooks import editing as codebook_editing
from coding.codebooks import files as codebook_files
from coding.inclusion import lists as inclusion_lists
from coding.items import curate
from coding.labeling import calibration, queue, suggestions
from coding.model_raters import config as model_config
from coding.model_raters import runs as model_runs
from coding.models import AuditEntry, Item, Membership, Rater, RaterCoding, Role
from coding.raters import setup as raters
from coding.raters.screening import screening_sample
from coding.screening import progress as screening_progress
from coding.screening import setup as screening_setup
from coding.studies import members
from coding.studies import setup as study_setup
from tests import factories

ROOT = Path(__file__).resolve().parents[3]

# Every action the product records (the guard in tests/test_translations.py finds them in
# the code); `every_action` below must make each one.
SPEC = {
    "name": "Trail codebook", "applies_to": "paper",
    "questions": [{"key": "label", "kind": "single", "text": "Main contribution?",
                   "options": [{"value": "rl_method"}, {"value": "analysis"}]}],
}


def every_action(study, people):
    """Make each audited change once, through the functions pages and the API call."""
    olive = people["olive"]
    call_command("grant_study_creation", "olive", stdout=io.StringIO())
    study_setup.create_study(olive, "Trail copy of alpha", copy_of=study)
    copy = study_setup.create_study(olive, "Trail copy study", preset="rl-inclusion")
    study_setup.update_study(copy, olive, {"name": "Trail copy, renamed",
                                           "description": "An invented description.",
                                           "overlap": 3, "blind_authors": True})
    study_setup.archive_study(copy, olive)
    study_setup.restore_study(copy, olive)

    codebook = codebook_editing.new_codebook(copy, olive, "Trail codebook", "paper")
    draft = codebook.versions.get()
    codebook_editing.save_spec(draft, olive, SPEC)
    publish.publish_draft(codebook, olive, "first", "switch")
    codebook_editing.start_draft(codebook, olive)
    codebook_files.import_file(copy, olive, json.dumps({"format": "workbench-codebook", "format_version": 1, **SPEC,
                                           "name": "Filed codebook"})
                               .encode(), filename="filed.json")

    cora = people["cora"]
    membership = members.add_member(copy, cora, Role.CODER, olive)
    membership = members.change_role(membership, Role.ADJUDICATOR, olive)
    members.remove_member(membership, olive)
    invite, _token = members.create_invite(copy, Role.VIEWER, olive)
    members.revoke_invite(invite, olive)
    _invite, token = members.create_invite(copy, Role.CODER, olive)
    members.accept_invite(token, user=people["cyril"])

    items = [factories.paper_item(copy, codebook, n) for n in range(70, 73)]
    calibration.add_items(copy, olive, ids=[i.pk for i in items[:2]])
    calibration.remove_item(copy, Item.objects.get(pk=items[1].pk), olive)
    calibration.set_reference(Item.objects.get(pk=items[0].pk), {"label": "analysis"}, olive)
    calibration.change(copy, olive, threshold=0.9, waived={"cyril": True})
    calibration.change(copy, olive, waived={"cyril": False})

    framework = catalog_edit.save_framework(copy, olive, {
        "name": "Trailframe", "repository": "https://github.com/example/trailframe",
        "main_branch": "main"})
    catalog_edit.save_framework(copy, olive, {"main_branch": "trunk"}, framework)
    method = catalog_edit.save_method(copy, olive, {"name": "Trailway", "first_public": "2025-03",
                                                    "failure_addressed": "drift"})
    catalog_edit.save_method(copy, olive, {"failure_addressed": "collapse", "position": 7},
                             method)
    option = catalog_edit.add_option_name(method, framework, "trail_loss", olive)
    catalog_edit.remove_option_name(option, olive, confirm=True)
    catalog_edit.remove_method(method, olive, confirm=True)
    catalog_edit.remove_framework(framework, olive, confirm=True)

    rater = raters.add_rater(copy, olive, kind=Rater.Kind.MODEL, name="trail-model",
                             model_version="v1", config_hash="abc123")
    model_config.configure(rater, olive, {"base_url": "http://127.0.0.1:9/v1", "model": "v1"},
                           api_key="sk-trail-not-a-key")
    run = model_runs.start_run(rater, olive, {"sample": "yes"})  # queued: no commit here
    model_runs.pause(run, olive)
    model_runs.resume(run, olive)
    model_runs.cancel(run, olive)
    raters.add_comparison(copy, olive, name="model vs decisions", first="trail-model",
                          second=None, question="label", codebook=codebook)
    sample.draw_reliability_sample(copy, count=1)
    suggestions.mark_assisted(copy, olive, Item.Round.MAIN, "trail-model")
    suggestions.mark_blind(copy, olive, Item.Round.MAIN)

    members.make_reset_link(copy.memberships.get(user=people["cyril"], role=Role.CODER), olive)
    inclusion_lists.import_list(copy, io.BytesIO(b"paper,framework\n2599.00070,verl\n"),
                                "known", olive, file_name="known.csv")

    more = [factories.paper_item(copy, codebook, n) for n in range(73, 75)]
    curate.apply(copy, olive, "exclude", [more[0].pk], "A duplicate")
    curate.apply(copy, olive, "restore", [more[0].pk])
    queue.skip(queue.assign(more[0], people["cyril"]), "Cannot read it")
    curate.apply(copy, olive, "return", [more[0].pk])
    queue.assign(more[1], people["cyril"])
    curate.apply(copy, olive, "release", [more[1].pk])
    Item.objects.filter(pk=more[1].pk).update(in_reliability_sample=False)
    curate.apply(copy, olive, "sample", [more[1].pk])

    screening_setup.configure(copy, question="label", include=["rl_method"], user=olive)
    screening_progress.stop(copy, olive)
    screening_progress.resume(copy, olive)

    call_command("grant_study_creation", "olive", "--revoke", stdout=io.StringIO())
    return copy


def recorded_actions():
    return {action for path in (ROOT / "coding").rglob("*.py")
            for action in re.findall(r'"([a-z_]+\.[a-z_]+)"', path.read_text(encoding="utf-8"))
            if action in study_setup.ACTION_WORDS}


@pytest.fixture
def trail(alpha, people):
    return every_action(alpha, people)


def test_every_audited_action_has_words_for_its_target_and_each_detail(trail, people):
    entries = list(AuditEntry.objects.all())
    assert {e.action for e in entries} >= set(study_setup.ACTION_WORDS), \
        "an action the test does not make"
    assert recorded_actions() <= {e.action for e in entries}
    for entry in entries:
        kind = (entry.target_parts or {}).get("kind")
        assert kind in audit.TARGET_WORDS, f"{entry.action}: a target without a kind with words"
        keys = set(entry.details) - {"from", "to"}
        for value in entry.details.values():
            if isinstance(value, dict) and value and all(
                    isinstance(v, dict) and set(v) == {"from", "to"} for v in value.values()):
                keys |= set(value)  # a field's change inside `changes`
        assert keys <= set(study_setup.DETAIL_WORDS), f"{entry.action}: {keys}"


def test_the_audit_page_reads_every_entry_in_chinese_and_in_english(trail, people, client_for):
    url = f"/studies/{trail.slug}/audit/"
    client = client_for(people["olive"])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    html = client.get(url).content.decode()
    cells = re.findall(r'<td class="target">(.*?)</td>', html, re.S)
    details = re.findall(r'<td class="details">(.*?)</td>', html, re.S)
    assert len(cells) == min(AuditEntry.objects.filter(study=trail).count(), 50)
    if older := re.search(r'<a href="(\?after=\d+)">', html):  # the trail is two pages
        html += client.get(url + older.group(1)).content.decode()
        cells = re.findall(r'<td class="target">(.*?)</td>', html, re.S)
        details = re.findall(r'<td class="details">(.*?)</td>', html, re.S)
    for words in ("编码员 cyril", "方法 Trailway", "框架 Trailframe", "模型评分者 trail-model",
                  "正式轮", "Trail codebook v1", "Trailframe 中的 Trailway"):
        assert words in cells, (words, cells)
    assert any(re.fullmatch(r"邀请 \d+（查看者）", c) for c in cells), cells
    assert not any(re.search(r"\b(coder|method|framework|rater|round|invite|as)\b", c)
                   for c in cells), cells
    # No detail key read raw: a key not in DETAIL_WORDS would show with its underscores
    # or in English.
    raw = [k.replace("_", " ") for k in study_setup.DETAIL_WORDS]
    for text in details:
        for word in raw:
            assert f"{word}：" not in text and f"{word}:" not in text, (word, text)
    assert "排序：" in html and "针对的失败：" in html and "主分支：" in html
    # Values that are keys read in words too: roles, a weighting, the final decisions.
    for words in ("从 编码员 改为 裁定人", "角色：查看者", "第二方：最终裁定", "加权方式：不加权",
                  "未完成的分配：切换到新版本", "适用于：论文"):
        assert words in html, words
    assert "“coder”" not in html and "“unweighted”" not in html
    # A codebook's edits and publications say what changed in the reader's language.
    assert re.search(r"改动：新增 \d+ 个问题", html) and "question" not in html
    assert "预设：RL 纳入研究" in html and "rl-inclusion" not in html  # the preset by its name

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    html = client.get(url).content.decode()
    cells = re.findall(r'<td class="target">(.*?)</td>', html, re.S)
    for words in ("coder cyril", "method Trailway", "framework Trailframe",
                  "model rater trail-model", "main round", "Trailway in Trailframe",
                  "Trail codebook v1"):
        assert words in cells, (words, cells)
    assert any(re.fullmatch(r"invite \d+ as viewer", c) for c in cells), cells
    assert re.search(r"order: \d+ → 7", html)
    assert re.search(r"changes: \d+ questions? added", html)
    assert "failure addressed: “drift” → “collapse”" in html
    for words in ("from coder to adjudicator", "role: viewer", "second: the final decisions",
                  "weighting: unweighted", "open assignments: switched to the new version",
                  "applies to: papers"):
        assert words in html, words


def test_the_api_keeps_the_target_in_english_with_its_parts(trail, people, client_for):
    client = client_for(people["olive"])
    rows = client.get(f"/api/studies/{trail.slug}/audit/",
                      HTTP_ACCEPT_LANGUAGE="zh-hans").json()["results"]
    waive = next(r for r in rows if r["action"] == "calibration.waive")
    assert waive["target"] == "coder cyril"
    assert waive["target_parts"] == {"kind": "member", "role": "coder", "name": "cyril"}
    invite = next(r for r in rows if r["action"] == "invite.revoke")
    assert re.fullmatch(r"invite \d+ as viewer", invite["target"])


def test_an_entry_written_before_targets_had_a_kind_shows_its_stored_text(
        alpha, people, client_for):
    AuditEntry.objects.create(study=alpha, actor=people["olive"], action="member.add",
                              target="coder c070 (old words)", details={"role": "coder"})
    client = client_for(people["olive"])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    html = client.get(f"/studies/{alpha.slug}/audit/").content.decode()
    assert '<td class="target">coder c070 (old words)</td>' in html
    api = client.get(f"/api/studies/{alpha.slug}/audit/").json()["results"]
    assert (api[0]["target"], api[0]["target_parts"]) == ("coder c070 (old words)", None)


def test_every_target_kind_the_code_records_has_words():
    """A call site with a kind of target that has no words fails here before any page
    shows the stored English instead."""
    kinds = set()
    for path in (ROOT / "coding").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        kinds |= set(re.findall(r'target_of\(\s*"([a-z_]+)"', text))
        for template in re.findall(r'target_of\(\s*f"\{[a-z_]+\}(_[a-z]+)"', text):
            if template == "_rater":
                kinds |= {f"{k}_rater" for k in Rater.Kind.values}
            elif template == "_round":
                kinds |= {f"{r}_round" for r in Item.Round.values}
            else:
                kinds.add(f"?{template}")
    assert kinds and kinds - set(audit.TARGET_WORDS) == set()
    for kind, words in audit.TARGET_WORDS.items():
        with translation.override("zh-hans"):
            assert "%" not in audit.target_in_words(
                {"kind": kind, "name": "n", "role": "coder", "id": 1, "codebook": "c",
                 "number": 2, "method": "m", "framework": "f", "keys": ["a", "b"]}), kind


def test_the_audit_page_takes_as_many_queries_whatever_the_entries(alpha, people, client_for):
    client = client_for(people["olive"])
    url = f"/studies/{alpha.slug}/audit/"

    def count():
        client.get(url)  # sessions and caches warmed alike
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        return len(queries)

    audit.record(people["olive"], alpha, "member.add",
                 audit.target_of("member", role="coder", name="cora"), role="coder")
    few = count()
    for n in range(30):
        audit.record(people["olive"], alpha, "method.edit",
                     audit.target_of("method", name=f"m{n}"),
                     changes={"position": {"from": n, "to": n + 1}})
        audit.record(people["olive"], alpha, "member.add", f"coder old{n}", role="coder")
    assert count() == few


def test_screening_refusals_read_in_the_readers_language_and_the_command_in_english(
        alpha, people):
    rater = raters.add_rater(alpha, people["olive"], kind=Rater.Kind.MODEL, name="screener",
                             model_version="v1")
    with translation.override("zh-hans"), pytest.raises(ValueError) as refused:
        screening_sample(rater, "label")
    assert str(refused.value) == "screener 没有对问题“label”导入的回答。"
    version = alpha.paper_codebook.current_version()
    for item in alpha.papers:
        RaterCoding.objects.create(rater=rater, item=item, question_key="label",
                                   codebook_version=version, value="analysis",
                                   imported_at=timezone.now())
    with translation.override("zh-hans"), pytest.raises(ValueError) as refused:
        screening_sample(rater, "label")
    assert str(refused.value) == "所有标签都相同，规划器无法确定样本量：请给出样本量。"

    with pytest.raises(CommandError) as refused:
        call_command("screening_sample", alpha.slug, "screener", "--question", "scope")
    assert str(refused.value) == "screener has no imported answers to the question “scope”."
    with pytest.raises(CommandError) as refused:
        call_command("screening_sample", alpha.slug, "screener", "--question", "label")
    assert str(refused.value).startswith("Every label is the same")
    out, err = io.StringIO(), io.StringIO()
    call_command("screening_sample", alpha.slug, "screener", "--question", "label",
                 "--size", "2", stdout=out, stderr=err)
    assert len(out.getvalue().split()) == 2
    assert "planner: none, one label" in err.getvalue()
    assert Membership.objects.filter(study=alpha).exists()

"""Every message the coding app's Python writes for a person is marked for translation
(issue 20): an exception or refusal whose text a page, a form, an API answer or a job
shows, a response's body, a flash message and a job's log line. A few of them read in
Chinese for a reader who chose Chinese (a refused job in the language it was started in);
the API keeps English. The importers' messages are scanned by
tests/ingest/test_ingest_messages_zh.py, the templates' words by tests/test_translations.py."""

import ast
import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.http import Http404
from django.urls import reverse
from django.utils import translation
from rest_framework.test import APIClient

from coding.access.roles import access_study
from coding.accounts.languages import remember_language
from coding.actions.submit import submit
from coding.labeling import queue
from coding.models import Membership, Role

CODING = Path(settings.BASE_DIR) / "coding"
NOT_SCANNED = {"migrations", "management"}  # the commands' own output is English
# Exceptions and refusals whose text people read (or whose text is built for them).
SAID_BY = re.compile(r"(Error|Exception|PermissionDenied|Http404|Refused|Conflict|"
                     r"NothingToPublish|StudyArchived|Gone|NotFound|NotHeld|NeedsConfirmation)$")
# Responses: their body (the first argument, or `data`/`content`) is what is read.
RESPONSES = re.compile(r"^(Response|JsonResponse|HttpResponse\w*)$")
LEVELS = {"debug", "info", "success", "warning", "error"}
MARKED_BY = {"_", "gettext", "gettext_lazy", "gettext_noop", "ngettext", "ngettext_lazy",
             "pgettext", "pgettext_lazy", "npgettext", "npgettext_lazy"}
# Programmers' guards and plumbing, never shown to a person: (file under coding/, text).
FOR_PROGRAMMERS = {
    # The numeric library's argument checks: reliability code hands it checked tables, and
    # only Python callers (a notebook, the tests) meet these.
    *(("agreement/alpha.py", said) for said in [
        "f'ratings must be 2-D (units, coders); got shape {table.shape}'",
        "f'ratings rows have different lengths: {sorted(widths)}'",
        "f'ratings must be 2-D (units, coders); got a row {row!r}'",
        "f'rating {values[~known][0]!r} is not one of the categories'",
        "ratings mix sets of labels with single labels",
        "f\"{what} takes single labels, not sets; use krippendorff_alpha with level='masi' "
        "or 'jaccard' for multiple-choice ratings\"",
        "f'{what} needs categories to give the order of text labels'",
        "f'{what} takes exactly two coders; got {codes.shape[1]}'",
        "f\"unknown weights {weights!r}; use None, 'linear', 'quadratic' or a square matrix "
        "of agreement weights\"",
        "f\"unknown level {level!r}; use one of {', '.join(LEVELS)}\"",
        "f\"level is the confidence level (e.g. 0.95), not {level!r}; for alpha's level of "
        "measurement pass functools.partial(krippendorff_alpha, level={level!r}) as the "
        "metric\"",
        "f'level must be between 0 and 1; got {level!r}'",
        "f'n_boot must be a positive whole number; got {n_boot!r}'",
        "ratings hold the text 'nan' (numpy's rendering of a missing value in a text "
        "array); pass a list or an object array with None",
        "f'rating {label!r} is not one of the categories'",
        "f'categories list {category!r} twice'",
        "f'level {level!r} takes set-valued ratings; got the single label "
        "{coded.labels[0]!r}'",
        "f'level {level!r} takes numbers; got {label!r}'",
        "f\"level 'ratio' takes non-negative numbers; got {label!r}\"",
        "f'rating {value!r} is neither a label nor a set of labels'",
        "f'rating {set(label)!r} has labels not in the categories: "
        "{sorted(map(repr, label - allowed))}'",
    ]),
    # The weight matrix's checks: a comparison's weights are checked, in the reader's
    # language, before they get here (coding.raters.comparisons.checked_weights).
    *(("agreement/coefficients.py", said) for said in [
        "f\"unknown weights {weights!r}; use None, 'linear', 'quadratic' or a square matrix "
        "of agreement weights\"",
        "f'the weight matrix must be {size} x {size} (one row and column per category); "
        "got {matrix.shape}'",
        "the weight matrix must have 1 on its diagonal (full agreement)",
        "agreement weights must lie between 0 and 1",
    ]),
    # The planner's arguments: the page, the API and the command bound them (PlanForm).
    *(("agreement/sample_size.py", said) for said in [
        "f'the smallest acceptable alpha must be in [0, 1); got {alpha_min}'",
        "f'the smallest category share must be above 0 and at most 0.5 (it is the least "
        "frequent of two or more); got {smallest_share}'",
        "f'the significance level must be in (0, 0.5); got {significance}'",
    ]),
    # git's plumbing: a scan that fails on it is logged, and its job says only where to look.
    *(("catalog/git.py", said) for said in [
        "git is not installed",
        "f\"git {' '.join(args[:2])} in {repo}: {error.stderr.strip()}\"",
        "f'git cat-file answered {parts[0].decode()} for {sha}'",
        "f\"git log in {repo}: {out.stderr.decode(errors='replace').strip()}\"",
    ]),
    # A submission's own guard: every caller runs it inside the submission's transaction.
    ("labeling/codings.py", "append_revision runs inside the submission's transaction"),
    # A hand assignment's guards: only the demo data and the tests assign by hand.
    ("labeling/queue.py", "f'{item} already has {item.taken} of {item.target} coders'"),
    ("labeling/queue.py", "f'{coder} already holds an item of this study or of {item}'"),
    # The models' own nets under the checks that people meet (codebooks.spec, submit).
    ("models/codebooks.py", "f'{self.codebook_version()} is published and cannot change; "
                            "draft a new version'"),
    ("models/codings.py", "a coding revision is never changed; submit a new revision"),
    ("models/decisions.py", "a decision revision is never changed; record a new revision"),
    # The audit trail's bad page token: the page and the API answer with their own words.
    ("studies/setup.py", "not a page token of this list"),
    # A server error (500) after every slug tried was taken: no page shows its text.
    ("studies/setup.py", "f'no free slug for {name!r} after {attempts} attempts'"),
}
WORD = re.compile(r"[A-Za-z]{2,}")
NOT_WORDS = {"HTTP"}  # a status line, as HTTP writes it in every language


def _name(func):
    return getattr(func, "id", getattr(func, "attr", ""))


def _owner(func):
    return getattr(getattr(func, "value", None), "id", "")


def _literals(node):
    """The literal texts in an expression, outside the gettext calls in it."""
    if isinstance(node, ast.Call) and _name(node.func) in MARKED_BY:
        return
    if isinstance(node, (ast.Constant, ast.JoinedStr)):
        yield node
        return
    for child in ast.iter_child_nodes(node):
        yield from _literals(child)


def _is_text(node):
    if isinstance(node, ast.Constant):
        if not isinstance(node.value, str) or " " not in node.value:
            return False
        parts = [node.value]
    else:
        parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
    return any(w not in NOT_WORDS for part in parts for w in WORD.findall(part))


def _said(call, raises_text):
    """The arguments of a call whose text a person reads, or []."""
    callee, keywords = _name(call.func), {k.arg: k.value for k in call.keywords}
    if SAID_BY.search(callee):
        return [*call.args, *keywords.values()]
    if RESPONSES.match(callee):
        return [*call.args[:1], *(keywords[k] for k in ("data", "content") if k in keywords)]
    if callee in LEVELS and _owner(call.func) == "messages":  # messages.error(request, …)
        return call.args[1:]
    if callee == "log" and _owner(call.func) == "jobs":  # jobs.log(job, message, …)
        return [*call.args[1:2], *(keywords[k] for k in ("message",) if k in keywords)]
    if raises_text and callee == "__init__" and isinstance(call.func.value, ast.Call) \
            and _name(call.func.value.func) == "super":  # an exception's own text
        return call.args
    return []


def unmarked_python_messages(source, name="x.py"):
    """Literal text a person reads that a call is given outside gettext: (line, text).
    `name` is the file's path under coding/, for the allow-list of programmers' guards."""
    tree = ast.parse(source)
    raisers = {id(call) for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)
               and (SAID_BY.search(cls.name) or any(SAID_BY.search(_name(b)) for b in cls.bases))
               for call in ast.walk(cls) if isinstance(call, ast.Call)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for argument in _said(node, id(node) in raisers):
            for text in _literals(argument):
                said = ast.unparse(text) if isinstance(text, ast.JoinedStr) else text.value
                if _is_text(text) and (name, said) not in FOR_PROGRAMMERS:
                    found.append((text.lineno, said))
    return found


def test_the_scan_finds_unmarked_messages_and_accepts_marked_ones():
    assert unmarked_python_messages('raise PermissionDenied("You may not")') == [
        (1, "You may not")]
    assert unmarked_python_messages('raise PermissionDenied(_("You may not"))') == []
    assert unmarked_python_messages(
        'raise ValidationError({"note": f"at most {n} characters"})\n'
        'messages.success(request, "It is saved.")\n'
        'jobs.log(job, "Nothing to import", location=where)\n'
        'return HttpResponseBadRequest("after: not a token", content_type="text/plain")\n'
        'class Gone(Exception):\n'
        '    def __init__(self):\n'
        '        super().__init__("It is gone now")\n') == [
        (1, "f'at most {n} characters'"), (2, "It is saved."), (3, "Nothing to import"),
        (4, "after: not a token"), (7, "It is gone now")]
    assert unmarked_python_messages(
        'raise ValidationError({"note": _("at most %(n)s characters") % {"n": f"{n:,}"}})\n'
        'messages.success(request, gettext("Saved."))\n'
        'return Response({"detail": _("No draft.")}, status=404)\n'
        'raise Http404(f"{name}: HTTP {status}")\n'
        'raise Conflict(", ".join(names))') == []


def test_every_message_of_the_coding_app_is_marked_for_translation():
    found = [f"{path.relative_to(CODING)}:{line}: {said}"
             for path in sorted(CODING.rglob("*.py")) if not NOT_SCANNED & set(path.parts)
             for line, said in unmarked_python_messages(path.read_text(encoding="utf-8"),
                                                        path.relative_to(CODING).as_posix())]
    assert found == [], "mark these with gettext, placeholders named (%(name)s)"


def _all_literals(source):
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            yield ast.unparse(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def test_the_allow_list_names_only_texts_still_in_the_code():
    """A guard that was marked, reworded or removed leaves the list too."""
    sources = {name: (CODING / name).read_text(encoding="utf-8")
               for name in {name for name, _said in FOR_PROGRAMMERS}}
    kept = {(name, said) for name, source in sources.items()
            for said in _all_literals(source)}
    assert FOR_PROGRAMMERS - kept == set()


# --- read in Chinese ---------------------------------------------------------------

ANSWERS = {"size_b": 7, "failures": ["none"], "code_released": "no"}


def test_a_coder_refused_their_own_item_reads_why_in_the_language_they_chose(
        alpha, people, client_for, django_capture_on_commit_callbacks):
    item = alpha.papers[0]
    for name, answers in (("cora", {"label": "analysis"}),
                          ("cyril", {"label": "rl_method", "scope": "general"})):
        with django_capture_on_commit_callbacks(execute=True):
            submit(queue.assign(item, people[name]), {**ANSWERS, **answers})
    Membership.objects.create(study=alpha, user=people["cora"], role=Role.ADJUDICATOR)
    url = reverse("review-item", args=[alpha.slug, item.pk])

    remember_language(people["cora"], "zh-hans")
    page = client_for(people["cora"]).post(url, {"d-label": json.dumps("analysis")})
    assert page.status_code == 400
    html = page.content.decode()
    assert "您编码过此条目；本研究不允许编码员裁定自己编码过的条目。" in html
    assert "You coded this item" not in html

    remember_language(people["cora"], "en")
    page = client_for(people["cora"]).post(url, {"d-label": json.dumps("analysis")})
    assert "You coded this item; this study does not let coders decide their own items." \
        in page.content.decode()


def test_a_refused_population_filter_reads_in_chinese_on_the_inclusion_page(
        alpha, people, client_for):
    remember_language(people["olive"], "zh-hans")
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/inclusion/",
                                           {"population": "label"})
    html = page.content.decode()
    assert "总体筛选条件 &#x27;label&#x27; 应写成 question=value 的形式" in html
    assert "must read question=value" not in html


def test_no_such_study_is_said_in_the_active_language_and_in_english_by_the_api(people):
    with translation.override("zh-hans"), pytest.raises(Http404) as refused:
        access_study(people["olive"], "no-such-study")
    assert str(refused.value) == "没有这个研究。"
    remember_language(people["olive"], "zh-hans")
    api = APIClient()
    api.force_authenticate(people["olive"])
    answer = api.get("/api/studies/no-such-study/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert answer.status_code == 404 and answer.json() == {"detail": "No such study."}


def test_a_refused_export_or_backup_reads_in_the_language_it_was_started_in(alpha, people):
    """A page started it in Chinese: its refusal is Chinese; the API (English) started the
    other: English, whatever its starter chose for their pages."""
    from coding.export.jobs import start_export
    from coding.studies.backup import start_backup
    from workbench import jobs
    from workbench.models import Job

    remember_language(people["ada"], "zh-hans")
    with translation.override("zh-hans"):
        export = start_export(alpha, people["ada"], shapes=["items"], fmt="csv")
        backup = start_backup(alpha, people["olive"])
    english = start_export(alpha, people["ada"], shapes=["items"], fmt="csv")
    alpha.memberships.filter(user__in=[people["ada"], people["olive"]]).delete()
    for job in (export, backup, english):
        jobs.run(job.pk)
    said = {job.pk: job.error for job in Job.objects.filter(pk__in=[export.pk, backup.pk,
                                                                     english.pk])}
    assert said[export.pk] == (f"导出被拒绝：发起任务 {export.pk} 的人在本研究中已不再拥有"
                               "可以导出的角色。")
    assert said[backup.pk] == f"备份被拒绝：发起任务 {backup.pk} 的人已不再是本研究的所有者。"
    assert said[english.pk] == (f"Export refused: whoever asked for job {english.pk} no "
                                "longer holds a role in this study that may export.")

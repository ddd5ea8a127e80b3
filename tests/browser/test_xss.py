"""Untrusted text stays text: XSS payloads in every field people or imports can fill are
rendered inert on every page that shows them, checked in the real browser.

Each payload, if it ever ran, would call `__xss(n)` (or `alert(n)`): `__xss` is a
Playwright binding, so a call is recorded in Python even from an iframe or a page that
navigates away at once. After each page the test also reads the DOM: no `on*` attribute
anywhere, no payload text in an attribute other than an inert one (value, title, …), no
script, frame, image or `javascript:` link that came from content. All text is invented.
"""

import json
import os
from datetime import UTC, datetime, timedelta
from itertools import count
from pathlib import Path

import pytest
from django.utils import timezone

from coding.actions.submit import record_coding
from coding.adjudication import decisions as adjudication
from coding.agreement import snapshots
from coding.codebooks.versions import create_codebook
from coding.labeling import queue
from coding.models import (
    Assignment, CodebookVersion, Framework, ImportRun, Landing, Method, MethodLink, OptionName,
    Role,
)
from ingest.models import Document, Post
from tests import factories
from workbench.models import Job, JobEvent

pytestmark = pytest.mark.browser
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "var" / "test-artifacts"))

# --- the corpus ------------------------------------------------------------------------
# Every vector names its marker {n}; a vector that executes calls __xss(n) (or alert(n)).
VECTORS = {
    "script": "<script>__xss({n})</script>",
    "img-onerror": "<img src=x onerror=__xss({n})>",
    "svg-onload": "<svg onload=__xss({n})>",
    "attr-double-quote": '"><img src=x onerror=__xss({n})>',
    "attr-single-quote": "'><svg onload=__xss({n})>",
    "unquoted-attr": "x onfocus=__xss({n}) autofocus x",
    "textarea-breakout": "</textarea><script>__xss({n})</script>",
    "title-breakout": "</title><script>__xss({n})</script>",
    "script-breakout": "</script><script>__xss({n})</script>",
    "template-literal": "{{ __xss({n}) }}${__xss({n})}`;__xss({n});`",
    "json-breakout": '"}]}\u2028\u2029;__xss({n});//',
    "iframe-srcdoc": '<iframe srcdoc="<script>__xss({n})</script>"></iframe>',
    "a-javascript": '<a href="javascript:__xss({n})">go</a>',
    "style-expression":
        '<div style="background:url(javascript:__xss({n}));x:expression(__xss({n}))">',
    "entities": "&lt;img src=x onerror=__xss({n})&gt;&#60;script&#62;__xss({n})&#60;/script&#62;",
    "mixed-case": "<ScRiPt>__xss({n})</sCrIpT><IMG SRC=x OnErRoR=__xss({n})>",
    "htmx-attrs": '<div hx-get="/" hx-trigger="load" hx-on::before-request="__xss({n})">',
    "details-ontoggle": "<details open ontoggle=__xss({n})>",
    "alert-dialog": "<img src=x onerror=alert({n})>",
}
# Markdown (thread posts): links and autolinks with script schemes, raw HTML, info strings.
MARKDOWN_VECTORS = {
    "md-link-javascript": "[click](javascript:__xss({n}))",
    "md-link-mixed-case": "[click](JaVaScRiPt:__xss({n}))",
    "md-link-entity": "[click](&#106;avascript&#58;__xss({n}))",
    "md-link-tab": "[click](java\tscript:__xss({n}))",
    "md-link-vbscript": "[click](vbscript:__xss({n}))",
    "md-link-data": "[click](data:text/html,<script>__xss({n})</script>)",
    "md-autolink": "<javascript:__xss({n})>",
    "md-reference": "[click][r{n}]\n\n[r{n}]: javascript:__xss({n})\n",
    "md-image": "![x](javascript:__xss({n}))",
    "md-link-title-quote": '[click](https://example.test/ "t\\" onmouseover=\\"__xss({n})")',
    "md-link-url-quote": '[click](https://example.test/"onmouseover="__xss({n}))',
    "md-fence-info": '```js" onmouseover="__xss({n})\ncode\n```\n',
    "md-raw-html": '<a href="javascript:__xss({n})">raw</a> <img src=x onerror=__xss({n})>',
    "md-table-cell":
        "| a | b |\n|---|---|\n| <svg onload=__xss({n})> | [x](javascript:__xss({n})) |\n",
    "md-html-block": "<div>\n<script>__xss({n})</script>\n</div>\n",
}

MARKERS = {}  # n -> "field: vector", to name what ran
_numbers = count(1)
FIELDS = {}  # field -> markers placed in it


def payload(field, limit=None, vectors=VECTORS, separator=" "):
    """Every vector (or as many as fit in `limit` characters), each with its own marker."""
    parts = []
    for name, template in vectors.items():
        n = next(_numbers)
        part = template.replace("{n}", str(n))
        if limit and len(separator.join([*parts, part])) > limit:
            continue
        MARKERS[n] = f"{field}: {name}"
        FIELDS.setdefault(field, []).append(n)
        parts.append(part)
    assert parts, f"no vector fits in {field} ({limit} characters)"
    return separator.join(parts)


def markdown_payload(field):
    return payload(field, vectors={**MARKDOWN_VECTORS, **VECTORS}, separator="\n\n")


# --- what the browser reports ------------------------------------------------------------

# Attributes whose value is only ever text to the browser (href: its scheme is checked apart).
# data-quote and data-who: the review page's quote buttons; quotes.js reads the quote as
# words of a regular expression it escapes, and review.js sets the coder's name as a title.
# data-text and data-original: a coding page question's texts, which code.js only sets as a
# quote mark's title.
INERT_ATTRIBUTES = {"value", "title", "aria-label", "placeholder", "data-show-if", "href",
                    "data-quote", "data-who", "data-text", "data-original"}

DOM_CHECK = r"""() => {
  const problems = [];
  const origin = location.origin;
  const inert = new Set(%s);
  for (const el of [document.documentElement, ...document.querySelectorAll("*")]) {
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on")) problems.push(`<${el.localName}> has ${name}="${attr.value}"`);
      if (name.includes("hx-on")) problems.push(`<${el.localName}> has ${name}`);
      if (name === "srcdoc") problems.push(`<${el.localName}> has srcdoc`);
      if (/__xss|alert\(/.test(attr.value) && !inert.has(name))
        problems.push(`payload in <${el.localName} ${name}="${attr.value.slice(0, 80)}">`);
      if (["href", "src", "action", "formaction", "xlink:href", "data", "poster"].includes(name)) {
        const bare = attr.value.replace(/[\u0000-\u0020\u007f]/g, "").toLowerCase();
        if (/^(javascript|vbscript|data):/.test(bare))
          problems.push(`<${el.localName} ${name}="${attr.value.slice(0, 80)}">`);
      }
    }
  }
  for (const a of document.querySelectorAll("a[href], area[href]")) {
    const protocol = new URL(a.href, location.href).protocol;
    if (!["http:", "https:", "mailto:"].includes(protocol))
      problems.push(`link to ${protocol} ${a.getAttribute("href").slice(0, 80)}`);
  }
  for (const s of document.querySelectorAll("script")) {
    if (/__xss|alert\(/.test(s.textContent)) problems.push("a <script> with a payload");
    if (s.src && new URL(s.src).origin !== origin) problems.push(`a <script src=${s.src}>`);
  }
  const injected = document.querySelectorAll(
    "body iframe, body frame, body object, body embed, body img, body base, body meta");
  for (const el of injected) problems.push(`an injected <${el.localName}>`);
  for (const link of document.querySelectorAll("link[href]")) {
    if (new URL(link.href).origin !== origin) problems.push(`a <link href=${link.href}>`);
  }
  return problems;
}""" % json.dumps(sorted(INERT_ATTRIBUTES))

SHOWN_TEXT = r"""() => {
  const parts = [document.title, document.documentElement.textContent];
  for (const el of document.querySelectorAll("*")) {
    for (const attr of Array.from(el.attributes)) parts.push(attr.value);
    if ("value" in el && typeof el.value === "string") parts.push(el.value);
  }
  return parts.join("\n");
}"""

# Every image has loaded or failed (an onerror payload waits on the server's 404, slow on a
# busy machine; at most 5 s), then a frame and a short pause for frames and htmx's triggers.
SETTLE = """async () => {
    const waiting = [...document.images].filter(image => !image.complete).map(image =>
        new Promise(done => ['load', 'error'].forEach(
            event => image.addEventListener(event, done, {once: true}))));
    await Promise.race([Promise.all(waiting), new Promise(done => setTimeout(done, 5000))]);
    await new Promise(done => requestAnimationFrame(() => setTimeout(done, 120)));
}"""


class Browser:
    """One logged-in person in their own browser context, recording anything that runs."""

    def __init__(self, browser, live_server, username):
        self.url = live_server.url
        self.username = username
        self.hits, self.dialogs, self.errors, self.failures = [], [], [], []
        # The Content-Security-Policy is bypassed: this sweep proves the escaping alone
        # keeps payloads inert; the policy is a second wall (tests/browser/test_csp.py).
        self.context = browser.new_context(viewport={"width": 1280, "height": 900},
                                           bypass_csp=True)
        self.context.expose_binding("__xss", lambda source, n=None: self.hits.append(n))
        self.page = self.context.new_page()
        self.page.set_default_timeout(15_000)
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("response", lambda r: r.status >= 500 and self.failures.append(
            f"{r.status} {r.url}"))
        self.page.goto(f"{self.url}/login/")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(factories.PASSWORD)
        self.page.get_by_role("button", name="Log in").click()
        self.page.wait_for_url(f"{self.url}/")

    def _dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def visit(self, path, shows=()):
        response = self.page.goto(self.url + path)
        assert response.status == 200, f"{self.username} {path}: {response.status}"
        return self.check(path, shows)

    def check(self, where, shows=()):
        """Nothing ran, nothing from content became markup, and the payloads did arrive."""
        page = self.page
        page.evaluate(SETTLE)  # image errors, frames and htmx's load triggers have had their turn
        problems = page.evaluate(DOM_CHECK)
        ran = [f"{n} ({MARKERS.get(n, '?')})" for n in self.hits]
        label = f"{self.username} on {where}"
        assert not ran, f"{label}: payloads ran: {ran}"
        assert not self.dialogs, f"{label}: dialogs opened: {self.dialogs}"
        assert not problems, f"{label}: " + "; ".join(problems[:20])
        assert not self.errors, f"{label}: script errors: {self.errors}"
        assert not self.failures, f"{label}: server errors: {self.failures}"
        if shows:
            text = page.evaluate(SHOWN_TEXT)
            missing = [field for field in shows
                       if not any(f"__xss({n})" in text for n in FIELDS[field])]
            assert not missing, f"{label}: payloads of {missing} are not on the page"
        return page

    def close(self):
        self.context.close()


# --- the data ----------------------------------------------------------------------------

def build_world():
    """A study whose every free-text field carries payloads, with codings, decisions, a
    discussion, a skip, drafts, an agreement snapshot, a catalog, an import and jobs."""
    MARKERS.clear()
    FIELDS.clear()
    MARKERS[0] = "document url / framework name"
    people = {name: factories.user(name) for name in ("olive", "cora", "cyril", "ada", "vera")}
    people["cyril"].first_name = payload("person name", limit=150)
    people["cyril"].save()
    study = factories.study(
        payload("study name", limit=200), owner=people["olive"], slug="xss-study",
        description=payload("study description"), discussion_step=True, show_feedback=True,
        # Names and reasons shown to coders too, so their payloads reach the coder pages.
        coders_see_names=True, feedback_shows_reasons=True,
        blinded_fields=["state"], adjudicators_see_blinded=True)
    roles = {"olive": Role.OWNER, "cora": Role.CODER, "cyril": Role.CODER,
             "ada": Role.ADJUDICATOR, "vera": Role.VIEWER}
    for name, role in roles.items():
        factories.member(study, people[name], role)

    odd_value = payload("option value", limit=100, vectors={
        k: VECTORS[k] for k in ("attr-double-quote", "script-breakout", "json-breakout")})

    def questions(kind):
        return [
            {"key": "label", "kind": "single", "text": payload(f"{kind} question text"),
             "definition": payload(f"{kind} question definition"),
             "options": [
                 {"value": "rl_method", "label": payload(f"{kind} option label", limit=200),
                  "definition": payload(f"{kind} option definition"),
                  "examples": payload(f"{kind} option examples")},
                 {"value": odd_value, "label": "Odd value"}]},
            {"key": "scope", "kind": "single", "required": False,
             "text": "Scope?", "show_if": {"question": "label", "in": [
                 "rl_method", payload(f"{kind} show_if value", vectors={
                     k: VECTORS[k] for k in ("script-breakout", "json-breakout",
                                             "template-literal", "attr-single-quote")})]},
             "options": [{"value": "general", "label": "General"}]},
            # Sent to the adjudicator, as free text is not by default: the coders' text
            # answers then reach the review pages too, which this test must see inert.
            {"key": "note", "kind": "text", "required": False, "adjudicated": True,
             "text": "Anything else?"},
        ]

    paper_book = create_codebook(study, {
        "name": payload("paper codebook name", limit=200), "applies_to": "paper",
        "description": payload("paper codebook description"), "questions": questions("paper")})
    thread_book = create_codebook(study, {
        "name": payload("thread codebook name", limit=200), "applies_to": "thread",
        "description": payload("thread codebook description"),
        "questions": questions("thread")})
    CodebookVersion.objects.filter(codebook=paper_book).update(
        note=payload("codebook version note"))

    def paper(n):
        return Document.objects.create(
            kind=Document.Kind.PAPER, source="test", key=f"2599.{n:05d}",
            title=payload(f"paper {n} title"), url="javascript:__xss(0)",
            published=datetime(2025, 5, 1, tzinfo=UTC),
            metadata={"abstract": payload(f"paper {n} abstract"),
                      "authors": [payload(f"paper {n} author", limit=200), "Ann Example"],
                      "affiliations": [payload(f"paper {n} affiliation", limit=200)],
                      "categories": [payload(f"paper {n} category", limit=60)],
                      "comments": payload(f"paper {n} comments")})

    def thread(n):
        document = Document.objects.create(
            kind=Document.Kind.THREAD, source="test", key=f"example/repo#{n}",
            title=payload(f"thread {n} title"), url=" JaVaScRiPt:__xss(0)",
            published=datetime(2025, 6, 1, tzinfo=UTC),
            metadata={"repository": payload(f"thread {n} repository", limit=200),
                      "number": n, "thread_type": payload(f"thread {n} type", limit=100),
                      "state": payload(f"thread {n} state (blinded)"),
                      "framework": FRAMEWORK_NAME})
        for i, kind in enumerate([Post.Kind.OPENING, Post.Kind.COMMENT]):
            Post.objects.create(
                document=document, position=i, external_id=str(i),
                author=payload(f"thread {n} post {i} author", limit=100),
                author_role=payload(f"thread {n} post {i} role", limit=32, vectors={
                    "svg-onload": VECTORS["svg-onload"]}),
                kind=kind, created=datetime(2025, 6, 1, i, tzinfo=UTC),
                body=markdown_payload(f"thread {n} post {i} body"))
        return document

    items = {
        "P1": queue.add_item(study, paper(1), paper_book),
        "P2": queue.add_item(study, paper(2), paper_book),
        "T1": queue.add_item(study, thread(1), thread_book),
        "T2": queue.add_item(study, thread(2), thread_book),
    }
    # Codings that differ, with notes and evidence quotes carrying payloads.
    cora, cyril = people["cora"], people["cyril"]
    for key in ("P1", "T1"):
        item = items[key]
        for coder, label in ((cora, odd_value), (cyril, "rl_method")):
            assignment = queue.assign(item, coder)
            record_coding(
                assignment, {"label": label, "note": payload(f"{key} {coder} text answer")},
                notes=payload(f"{key} {coder} notes"),
                evidence=[{"question": "label", "field": "title", "start": 0, "end": 5,
                           "quote": payload(f"{key} {coder} evidence quote")}],
                seconds_spent=30)
        adjudication.settle_item(item)  # opens the discussion (discussion_step)
    adjudication.decide(items["P1"], "label", "rl_method", people["ada"],
                        payload("decision rationale"))
    adjudication.decide(items["P1"], "label", "rl_method", people["ada"],
                        payload("decision rationale revised"))
    # One item skipped with a reason, then one open with a server draft (a coder holds
    # one active item at a time).
    skipped = queue.assign(items["T2"], cora)
    queue.skip(skipped, payload("skip reason"))
    draft = queue.assign(items["P2"], cora)
    Assignment.objects.filter(pk=draft.pk).update(
        draft={"values": {"label": "rl_method", "note": payload("draft text answer")},
               "notes": payload("draft notes"), "unsure": False,
               "evidence": [{"question": "label", "field": "abstract",
                             "quote": payload("draft evidence quote")}]},
        draft_saved_at=timezone.now())
    snapshots.take_snapshot(study, force=True)

    # The catalog: a framework, a method with an option name, a landing, a proposal.
    framework = Framework.objects.create(
        study=study, name=FRAMEWORK_NAME, repository=payload("framework repository", limit=200))
    method = Method.objects.create(
        study=study, name=payload("method name", limit=200), first_public="2025-03-18",
        source_arxiv_id=payload("method arXiv id", limit=32, vectors={
            "svg-onload": VECTORS["svg-onload"]}),
        failure_addressed=payload("method failure", limit=200))
    OptionName.objects.create(method=method, framework=framework,
                              name=payload("option name", limit=200))
    Landing.objects.create(
        method=method, framework=framework, option_name=payload("landing option", limit=200),
        commit=payload("landing commit", limit=64, vectors={"script": VECTORS["script"]}),
        committed_at=timezone.now() - timedelta(days=3),
        author=payload("landing author", limit=200), pull_request=7)
    MethodLink.objects.create(method=method, document=items["T1"].document,
                              kind=MethodLink.Kind.PROPOSES)

    # An import run and jobs with messages, errors and a log.
    olive = people["olive"]
    import_job = Job.objects.create(
        kind="import_to_study", created_by=olive, status=Job.Status.FAILED,
        params={"study_slug": study.slug, "study": study.pk},
        message=payload("job message", limit=500), error=payload("job error"),
        result={"counts": {payload("job count name", limit=120): 3}},
        started_at=timezone.now(), finished_at=timezone.now())
    JobEvent.objects.create(job=import_job, level="error",
                            location=payload("import error location", limit=300),
                            message=payload("import error message"))
    running = Job.objects.create(
        kind=payload("job kind", limit=64, vectors={"title-breakout": VECTORS["title-breakout"]}),
        created_by=olive, status=Job.Status.RUNNING, params={}, done=1, total=3,
        message=payload("running job message", limit=500), started_at=timezone.now(),
        heartbeat_at=timezone.now())
    ImportRun.objects.create(
        study=study, job=import_job, params={"format": payload("import format", limit=200)},
        screening={"keywords": payload("screening keywords"),
                   "regex": payload("screening regex")},
        counts={"read": 3, "failed": 1, "excluded": {payload("excluded rule", limit=200): 1}},
        finished_at=timezone.now())
    export = Job.objects.create(
        kind="export", created_by=olive, status=Job.Status.DONE,
        params={"study": study.pk, "study_slug": study.slug,
                "shapes": [payload("export shape", limit=200)],
                "format": payload("export format", limit=200)},
        started_at=timezone.now(), finished_at=timezone.now())
    return {"study": study, "items": items, "people": people, "framework": framework,
            "jobs": {"import": import_job, "running": running, "export": export},
            "assignments": {
                "P1": Assignment.objects.get(item=items["P1"], coder=cora),
                "T1": Assignment.objects.get(item=items["T1"], coder=cora),
                "P2": draft, "T2": skipped},
            "books": {"paper": paper_book, "thread": thread_book}}


FRAMEWORK_NAME = "<svg onload=__xss(0)>fw"  # marker 0: never expected to run anywhere


# --- the test ----------------------------------------------------------------------------

@pytest.fixture
def world(transactional_db):
    return build_world()


def test_the_harness_notices_a_payload_that_runs(browser, live_server, transactional_db):
    """Guard against a blind checker: markup injected the way a hole would inject it is caught."""
    factories.user("olive")
    olive = Browser(browser, live_server, "olive")
    try:
        olive.page.evaluate("document.body.insertAdjacentHTML('beforeend', "
                            "'<img src=x onerror=__xss(-1)>')")
        with pytest.raises(AssertionError, match=r"payloads ran: \['-1"):
            olive.check("home")
        olive.hits.clear()
        with pytest.raises(AssertionError, match="onerror"):
            olive.check("home")
    finally:
        olive.close()


def test_payloads_render_as_text_on_every_page_for_every_role(browser, live_server, world):
    study, items, assignments = world["study"], world["items"], world["assignments"]
    books, jobs = world["books"], world["jobs"]
    base = f"/studies/{study.slug}"
    study_fields = ("study name",)
    paper_book_fields = ("paper question text", "paper question definition",
                         "paper option label", "paper option definition",
                         "paper option examples")
    thread_book_fields = ("thread question text", "thread question definition",
                          "thread option label", "thread option definition",
                          "thread option examples")
    paper_fields = ("paper 1 title", "paper 1 abstract", "paper 1 author",
                    "paper 1 affiliation", "paper 1 category", "paper 1 comments")
    # (The thread type is shown too, but with "_" as spaces, so its markers read "  xss(n)".)
    thread_fields = ("thread 1 title", "thread 1 repository", "thread 1 post 0 author",
                     "thread 1 post 0 body", "thread 1 post 1 body")

    # --- a coder -------------------------------------------------------------------------
    cora = Browser(browser, live_server, "cora")
    try:
        cora.visit("/", study_fields)
        cora.visit(f"{base}/", (*study_fields, "study description", "paper codebook name",
                                "paper codebook description", "person name"))
        cora.visit(f"{base}/codebooks/{books['paper'].pk}/",
                   ("paper codebook name", "codebook version note", *paper_book_fields,
                    "paper show_if value", "option value"))
        cora.visit(f"{base}/codebooks/{books['thread'].pk}/v1/", thread_book_fields)
        # The coding page: the open item (server draft), then the draft kept in the browser.
        page = cora.visit(f"{base}/code/", (
            *study_fields, "paper 2 title", "paper 2 abstract", "paper 2 author",
            *paper_book_fields, "option value", "paper show_if value",
            "draft notes", "draft text answer", "draft evidence quote"))
        assert page.url.endswith(f"/code/{assignments['P2'].pk}/")
        interact_on_the_coding_page(cora, assignments["P2"])
        # Submitted items: the coder's own notes, quotes and the discussion of differences.
        cora.visit(f"{base}/code/{assignments['P1'].pk}/", (
            *paper_fields, "P1 cora notes", "P1 cora text answer", "P1 cora evidence quote",
            "P1 cyril text answer", "paper question text"))
        cora.visit(f"{base}/code/{assignments['T1'].pk}/", (
            *thread_fields, *thread_book_fields, "T1 cora notes", "T1 cora evidence quote"))
        cora.visit(f"{base}/code/{assignments['T2'].pk}/", ("skip reason", "thread 2 title",
                                                             "thread 2 post 1 body"))
        cora.visit(f"{base}/code/previous/")
        cora.visit(f"{base}/codings/", ("paper 1 title", "thread 1 title"))
        cora.visit(f"{base}/feedback/", ("paper 1 title", "paper question text",
                                         "decision rationale revised", "option value"))
    finally:
        cora.close()

    # --- an adjudicator --------------------------------------------------------------------
    ada = Browser(browser, live_server, "ada")
    try:
        ada.visit(f"{base}/review/?status=all", ("paper 1 title", "thread 1 title",
                                                 "P1 cora text answer", "option value"))
        ada.visit(f"{base}/review/?status=all&category=%3Cscript%3E&coders=%22%3E%3Csvg")
        ada.visit(f"{base}/review/{items['P1'].pk}/?status=all", (
            "paper 1 title", "paper 1 abstract", "paper 1 author", "paper question text",
            "paper question definition",
            "P1 cora notes", "P1 cyril notes", "P1 cora evidence quote", "P1 cora text answer",
            "P1 cyril text answer", "decision rationale", "decision rationale revised",
            "option value"))
        decide_in_the_browser(ada, f"{base}/review/{items['T1'].pk}/")
        ada.visit(f"{base}/review/{items['T1'].pk}/", (
            "thread 1 title", "thread 1 post 0 author", "thread 1 post 0 body",
            "thread 1 post 1 body", "thread 1 state (blinded)", "T1 cyril notes",
            "T1 cyril evidence quote", "adjudicator rationale typed"))
        ada.visit(f"{base}/codings/", ("paper 1 title", "thread 1 title"))
        ada.visit(f"{base}/agreement/", ("paper question text", "paper codebook name"))
        ada.visit(f"{base}/export/", study_fields)
        ada.visit(f"{base}/catalog/", ("method name", "landing option", "framework repository"))
        ada.visit(f"{base}/frameworks/{world['framework'].pk}/", (
            "method name", "landing option", "landing author", "framework repository",
            "thread 1 title"))  # the commit is shown cut to 10 characters: no whole marker
    finally:
        ada.close()

    # --- the owner -------------------------------------------------------------------------
    olive = Browser(browser, live_server, "olive")
    try:
        olive.visit(f"{base}/", (*study_fields, "study description", "person name"))
        olive.visit(f"{base}/settings/", (*study_fields, "study description"))
        olive.visit(f"{base}/queue/", ("person name",))
        olive.visit(f"{base}/import/", ("import format", "screening keywords",
                                        "screening regex", "excluded rule"))
        olive.visit(f"{base}/export/", ("export shape", "export format"))
        olive.visit(f"{base}/agreement/", ("paper question text",))
        olive.visit(f"/jobs/{jobs['import'].pk}/", ("job message", "job error", "job count name",
                                                     "import error location",
                                                     "import error message"))
        page = olive.visit(f"/jobs/{jobs['running'].pk}/", ("job kind", "running job message"))
        # htmx swaps the progress in every second: the swapped-in markup is checked too.
        with page.expect_response(lambda r: f"/jobs/{jobs['running'].pk}/" in r.url):
            pass
        olive.check("the running job after an htmx swap", ("running job message",))
    finally:
        olive.close()

    # --- a viewer --------------------------------------------------------------------------
    vera = Browser(browser, live_server, "vera")
    try:
        vera.visit(f"{base}/", (*study_fields, "study description"))
        vera.visit(f"{base}/codebooks/{books['thread'].pk}/", thread_book_fields)
        vera.visit(f"{base}/agreement/", ("paper question text",))
        vera.visit(f"{base}/catalog/", ("method name",))
        vera.visit(f"{base}/export/", study_fields)
    finally:
        vera.close()


def interact_on_the_coding_page(cora, assignment):
    """What code.js renders in the browser: quotes, and drafts restored from localStorage."""
    page = cora.page
    store_key = f"workbench-draft:{assignment.pk}"
    restored = {
        "notes": [payload("localStorage notes")],
        "q-note": [payload("localStorage text answer")],
        "q-label": ["rl_method"],
        "evidence": [json.dumps([{"question": "label", "field": "title",
                                  "quote": payload("localStorage evidence quote")}])],
    }
    page.evaluate("([key, data]) => localStorage.setItem(key, JSON.stringify("
                  "{savedAt: Date.now() + 3600e3, data}))", [store_key, restored])
    page.reload()  # code.js restores the draft into the form and the quote lists
    cora.check("the coding page with a draft from localStorage", (
        "localStorage notes", "localStorage text answer", "localStorage evidence quote"))

    # Typed notes, and a quote taken from the (payload) title with E.
    notes = page.locator("textarea[name=notes]")
    notes.fill(payload("typed notes", vectors={k: VECTORS[k] for k in (
        "textarea-breakout", "script", "img-onerror", "json-breakout")}))
    page.keyboard.press("Escape")  # leave the text field, as a coder would before a key
    page.evaluate("""() => {
        const title = document.querySelector('#item [data-field="title"]');
        const range = document.createRange();
        range.selectNodeContents(title);
        window.getSelection().removeAllRanges();
        window.getSelection().addRange(range);
    }""")
    page.keyboard.press("e")  # quotes into the first question; the draft is sent again
    page.wait_for_selector("#draft-status:has-text('Draft saved')")
    assert page.locator("ul.quotes li").count() >= 2
    cora.check("the coding page after typing and quoting", ("typed notes", "paper 2 title"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "xss-coding-page.png"), full_page=True)

    # The server's copy of that draft, rendered by the server (the browser's copy removed).
    page.evaluate("key => localStorage.removeItem(key)", store_key)
    page.reload()
    cora.check("the coding page with the server's draft", (
        "typed notes", "localStorage text answer", "localStorage evidence quote"))
    saved = Assignment.objects.get(pk=assignment.pk).draft
    assert "__xss(" in saved["notes"] and len(saved["evidence"]) >= 2


def decide_in_the_browser(ada, path):
    """Record a decision with a typed rationale carrying payloads, through the review form."""
    page = ada.visit(path)
    question = page.locator("#review-form .q", has=page.locator("input[value='\"rl_method\"']"))
    question.locator("input[value='\"rl_method\"']").check()
    question.locator("textarea[name^='why-']").fill(payload("adjudicator rationale typed"))
    with page.expect_navigation():
        page.locator("#review-form button[type=submit]").click()
    if page.locator("#partial-confirm").count():  # other questions stay open: confirm
        ada.check("asked before a partial decision")
        with page.expect_navigation():
            page.locator("#partial-confirm button[name=partial]").click()
    ada.check("after recording a decision")


@pytest.mark.parametrize("url, shown", [
    ("https://arxiv.org/abs/2599.00001", "https://arxiv.org/abs/2599.00001"),
    ("http://example.test/a?b=1", "http://example.test/a?b=1"),
    ("mailto:someone@example.test", "mailto:someone@example.test"),
    ("/studies/x/exports/1/download/", "/studies/x/exports/1/download/"),
    ("javascript:__xss(0)", ""),
    (" JaVaScRiPt:__xss(0)", ""),
    ("java\tscript:__xss(0)", ""),
    ("\x01javascript:__xss(0)", ""),
    ("vbscript:__xss(0)", ""),
    ("data:text/html,<script>__xss(0)</script>", ""),
    ("", ""),
])
def test_only_links_that_cannot_run_script_are_kept(url, shown):
    from coding.templatetags.untrusted import safe_url

    assert safe_url(url) == shown

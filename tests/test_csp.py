"""The Content-Security-Policy: scripts only from files, and pages that need nothing more.

Every response carries a policy whose script-src allows neither inline code nor eval,
and the pages people use hold no code the policy would refuse: no inline <script> (only
`src=` scripts and `type="application/json"` data blocks, which are never executed), no
`on…=` handler attributes, no `javascript:` URLs, no hx-on, and no style attributes
(style-src is 'self' too). tests/browser/test_csp.py checks the same in Chromium.
"""

from html.parser import HTMLParser

import pytest
from django.test import Client

from coding.export.jobs import start_export
from coding.labeling import queue
from tests import factories

URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "xlink:href"}


def policy_of(response):
    header = response.get("Content-Security-Policy")
    assert header, f"no Content-Security-Policy on {response.request['PATH_INFO']}"
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


class InlineCode(HTMLParser):
    """Collects what a strict CSP would refuse to run or apply in a page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found = []
        self.in_script = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name, value in attrs.items():
            if name.startswith("on") or name.startswith("hx-on"):
                self.found.append(f"<{tag} {name}=…> handler attribute")
            if name == "style":
                self.found.append(f"<{tag} style=…> inline style")
            if name in URL_ATTRIBUTES and (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value!r}> javascript: URL")
        if tag == "script":
            data_block = (attrs.get("type") or "").lower() == "application/json"
            self.in_script = None if ("src" in attrs or data_block) else tag
        if tag == "style":
            self.found.append("<style> block")

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_script = None

    def handle_data(self, data):
        if self.in_script and data.strip():
            self.found.append(f"inline <script>: {data.strip()[:60]!r}")


def inline_code(html):
    parser = InlineCode()
    parser.feed(html)
    parser.close()
    return parser.found


@pytest.fixture
def world(alpha, people, django_capture_on_commit_callbacks):
    """A disagreement for the adjudicator, an open assignment for a coder, a finished job."""
    disputed = alpha.papers[0]
    factories.code(disputed, people["cora"], label="analysis")
    factories.code(disputed, people["cyril"], label="rl_method", scope="general")
    open_assignment = queue.assign(alpha.papers[1], people["cora"])
    with django_capture_on_commit_callbacks(execute=True):
        job = start_export(alpha, people["olive"], shapes=["wide"], fmt="csv")
    admin = factories.user("root")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    people["root"] = admin
    slug = alpha.slug
    return {
        "login": (None, "/login/"),
        "API docs": ("olive", "/api/docs/"),
        "home (owner)": ("olive", "/"),
        "home (coder)": ("cora", "/"),
        "study (viewer)": ("vera", f"/studies/{slug}/"),
        "study (owner)": ("olive", f"/studies/{slug}/"),
        "coding page": ("cora", f"/studies/{slug}/code/{open_assignment.pk}/"),
        "codebook": ("cora", f"/studies/{slug}/codebooks/{alpha.paper_codebook.pk}/"),
        "my codings": ("cora", f"/studies/{slug}/codings/"),
        "feedback": ("cora", f"/studies/{slug}/feedback/"),
        "review queue": ("ada", f"/studies/{slug}/review/"),
        "review page": ("ada", f"/studies/{slug}/review/{disputed.pk}/"),
        "settings": ("olive", f"/studies/{slug}/settings/"),
        "import": ("olive", f"/studies/{slug}/import/"),
        "export": ("olive", f"/studies/{slug}/export/"),
        "agreement": ("olive", f"/studies/{slug}/agreement/"),
        "queue": ("olive", f"/studies/{slug}/queue/"),
        "catalog": ("olive", f"/studies/{slug}/catalog/"),
        "job": ("olive", f"/jobs/{job.pk}/"),
        "jobs": ("olive", "/jobs/"),
        "tokens": ("olive", "/account/tokens/"),
        "admin index": ("root", "/admin/"),
        "admin list": ("root", "/admin/coding/study/"),
        "admin form": ("root", f"/admin/coding/study/{alpha.pk}/change/"),
    }


def get(world, people, name):
    who, url = world[name]
    client = Client()
    if who:
        client.force_login(people[who])
    response = client.get(url)
    assert response.status_code == 200, f"{name}: {who} GET {url}: {response.status_code}"
    return response


def visit(world, people):
    for name in world:
        yield name, get(world, people, name)


def test_every_page_forbids_inline_script_and_eval(world, people):
    for name, response in visit(world, people):
        policy = policy_of(response)
        script_src = policy.get("script-src", policy.get("default-src"))
        assert "'self'" in script_src, name
        assert "'unsafe-inline'" not in script_src and "'unsafe-eval'" not in script_src, name
        assert "'unsafe-inline'" not in policy.get("style-src", []), name


def test_the_policy_closes_what_a_strict_policy_closes(client):
    policy = policy_of(client.get("/login/"))
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["base-uri"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["form-action"] == ["'self'"]
    assert set(policy["img-src"]) == {"'self'", "data:"}


def test_no_page_holds_code_the_policy_would_refuse(world, people):
    offending = {}
    for name, response in visit(world, people):
        if name.startswith("admin"):
            continue  # Django's own templates: tests/browser/test_csp.py loads them in Chromium
        found = inline_code(response.content.decode())
        if found:
            offending[name] = found
    assert offending == {}


def test_pages_load_their_scripts_from_files(world, people):
    """The keyboard scripts of the coding and review pages are files, as is Swagger UI's."""
    coding = get(world, people, "coding page").content.decode()
    assert 'src="/static/coding/code.js"' in coding
    assert 'src="/static/coding/review.js"' in get(world, people, "review page").content.decode()
    assert 'src="/static/workbench/swagger.js"' in get(world, people, "API docs").content.decode()
    # htmx is told not to inject its indicator <style> nor to evaluate attribute code.
    assert '"includeIndicatorStyles": false' in coding and '"allowEval": false' in coding


def test_htmx_fragments_and_api_responses_carry_the_policy_too(world, people):
    job_url = world["job"][1]
    client = Client()
    client.force_login(people["olive"])
    fragment = client.get(job_url, headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert inline_code(fragment.content.decode()) == []
    assert "'unsafe-inline'" not in policy_of(fragment)["script-src"]
    api = client.get("/api/studies/")
    assert policy_of(api)["script-src"] == ["'self'"]


def test_the_checker_finds_what_it_looks_for():
    assert inline_code('<script src="/static/a.js"></script>') == []
    assert inline_code('<script type="application/json" id="d">{"a": 1}</script>') == []
    assert len(inline_code("<script>alert(1)</script>")) == 1
    assert len(inline_code('<button onclick="go()">x</button>')) == 1
    assert len(inline_code('<a href=" JavaScript:go()">x</a>')) == 1
    assert len(inline_code('<div hx-on:click="go()"></div>')) == 1
    assert len(inline_code('<div style="width: 3%"></div>')) == 1

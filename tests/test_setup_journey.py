"""Issue 14's "done when", through the API: from an empty database with one person who may
create studies, a study is set up and coded without the admin, the shell or a command.

The owner signs in, makes an API token and from then on uses only the token: creates a
study, writes a two-question codebook (the second shown only for one answer of the first),
publishes it, invites a coder, imports three papers from an arXiv snapshot file; the coder
joins through the invite, signs in and codes one item. The owner then reads every step in
the audit trail. The browser version is tests/browser/test_setup_journey.py.
"""

import json

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from coding.models import Coding, Item, Membership, Study

PASSWORD = "a long passphrase nobody guesses"

PAPERS = [
    ("2599.30001", "Clipped Surrogates for Tiny Policies", "A policy optimisation method."),
    ("2599.30002", "Reward Models That Read Slowly", "An analysis of reward models."),
    ("2599.30003", "Group Baselines at Small Scale", "A critic-free baseline."),
]

CODEBOOK = {
    "name": "Screening", "applies_to": "paper", "description": "Is it an RL method paper?",
    "questions": [
        {"key": "kind", "kind": "single", "text": "What does the paper contribute?",
         "options": [{"value": "method", "label": "A training method"},
                     {"value": "other", "label": "Something else"}]},
        {"key": "component", "kind": "text", "text": "Which component does it change?",
         "show_if": {"question": "kind", "in": ["method"]}},
    ],
}


def snapshot_lines():
    for arxiv_id, title, abstract in PAPERS:
        yield json.dumps({
            "id": arxiv_id, "submitter": "Ann Example", "authors": "Ann Example",
            "title": title, "comments": None, "journal-ref": None, "doi": None,
            "report-no": None, "categories": "cs.LG", "license": None, "abstract": abstract,
            "versions": [{"version": "v1", "created": "Mon, 03 Feb 2025 10:00:00 GMT"}],
            "update_date": "2025-02-03", "authors_parsed": [["Example", "Ann", ""]]})


def signed_in(username):
    """A session made by the login page, as a person makes one; then an API token."""
    session = Client()
    response = session.post("/login/", {"username": username, "password": PASSWORD})
    assert response.status_code == 302 and not response["Location"].startswith("/login/")
    made = session.post("/api/tokens/", {"name": "setup script", "lifetime": "never"},
                        content_type="application/json")
    assert made.status_code == 201, made.content
    return Client(HTTP_AUTHORIZATION=f"Token {made.json()['key']}")


def call(client, method, url, body=None, expect=200):
    response = client.generic(method, url, json.dumps(body) if body is not None else "",
                              content_type="application/json")
    assert response.status_code == expect, (method, url, response.status_code, response.content)
    return response.json() if response.content else None


@pytest.fixture
def founder(db):
    """The only account: not staff, granted the permission to create studies."""
    person = User.objects.create_user("rita", password=PASSWORD)
    person.user_permissions.add(Permission.objects.get(codename="create_study"))
    return person


def test_a_study_is_set_up_and_coded_through_the_api_alone(founder, tmp_path,
                                                           django_capture_on_commit_callbacks):
    assert Study.objects.count() == 0 and User.objects.count() == 1
    owner = signed_in("rita")

    study = call(owner, "POST", "/api/studies/", {"name": "Small RL screen"}, expect=201)
    api = f"/api/studies/{study['slug']}"

    codebook = call(owner, "POST", f"{api}/codebooks/",
                    {"name": "Screening", "applies_to": "paper"}, expect=201)
    draft = f"{api}/codebooks/{codebook['id']}"
    # A condition on a question that is not above it is refused, located, and nothing saved.
    backwards = json.loads(json.dumps(CODEBOOK))
    backwards["questions"][1]["show_if"] = {"question": "later", "in": ["x"]}
    refused = call(owner, "PUT", f"{draft}/draft/", backwards, expect=400)
    assert "questions[1].show_if.question" in json.dumps(refused)
    call(owner, "PUT", f"{draft}/draft/", CODEBOOK)
    published = call(owner, "POST", f"{draft}/publish/",
                     {"note": "First version.", "open_assignments": "switch"}, expect=201)
    assert published["version"] == 1

    invite = call(owner, "POST", f"{api}/invites/", {"role": "coder", "note": "Cleo"},
                  expect=201)
    token = invite["token"]
    joined = call(Client(), "POST", "/api/invites/accept/",
                  {"token": token, "username": "cleo", "password": PASSWORD}, expect=201)
    assert joined["study"] == study["slug"] and joined["role"] == "coder"
    # The link works once.
    call(Client(), "POST", "/api/invites/accept/",
         {"token": token, "username": "cleo2", "password": PASSWORD}, expect=410)

    upload = tmp_path / "three-papers.jsonl"
    upload.write_text("\n".join(snapshot_lines()) + "\n")
    with django_capture_on_commit_callbacks(execute=True), upload.open("rb") as file:
        started = owner.post(f"{api}/imports/", {
            "source": json.dumps({"format": "arxiv_snapshot_file"}), "file": file})
    assert started.status_code == 202, started.content
    job = call(owner, "GET", f"/api/jobs/{started.json()['id']}/")
    assert job["status"] == "done", job
    assert Item.objects.filter(study__slug=study["slug"]).count() == 3

    coder = signed_in("cleo")
    held = call(coder, "POST", f"{api}/next/")
    assert held["item"]["content"]["title"] in {title for _, title, _ in PAPERS}
    call(coder, "POST", f"{api}/assignments/{held['id']}/submit/",
         {"values": {"kind": "method", "component": "the clipping of the ratio"}}, expect=201)
    coding = Coding.objects.get()
    assert coding.assignment.coder.username == "cleo" and coding.values["kind"] == "method"
    assert coding.codebook_version.codebook.name == "Screening"
    assert Membership.objects.filter(user__username="cleo", role="coder",
                                     deleted_at__isnull=True).count() == 1

    # Every setup step is in the owner's audit trail, with who did it.
    trail = call(owner, "GET", f"{api}/audit/")
    rows = trail.get("results", trail)
    actions = {row["action"] for row in rows}
    assert {"study.create", "codebook.create", "codebook.publish", "invite.create",
            "invite.use"} <= actions, actions
    assert all(row.get("actor") for row in rows if row["action"] != "invite.use")

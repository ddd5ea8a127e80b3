"""Independence and blinding: coder A requests every page and endpoint a coder can reach,
and nothing of coder B's work, and no blinded field, is in any response body."""

import json

import pytest

from coding.labeling import queue
from tests import factories

# The quoted words are in the abstract everyone reads; cyril's choice of them as
# evidence is what must not show, in any of the forms a page or API writes it.
QUOTE_FORMS = ["\u201ccyril-secret-quote\u201d", '"quote": "cyril-secret-quote"',
               "&quot;quote&quot;: &quot;cyril-secret-quote", '"quote":"cyril-secret-quote"']
SECRETS = ["cyril-secret-answer", "cyril-secret-note", *QUOTE_FORMS,
           "SECRET-FRAMEWORK", "SECRET-STATE", "SECRET-LABEL", "SECRET-CLOSER",
           "2031-01-01"]


@pytest.fixture
def blind(alpha, people):
    """Cyril coded both items (with a note, free text and a quote); cora holds one and coded one."""
    alpha.blinded_fields = ["included_in", "state", "merged", "labels", "closed_at", "events"]
    alpha.save()
    paper = factories.paper(90, included_in=["SECRET-FRAMEWORK"])
    paper.metadata["abstract"] = "Shared abstract text with cyril-secret-quote inside."
    paper.save()
    thread = factories.thread(91, state="SECRET-STATE", labels=["SECRET-LABEL"],
                              closed_at="2031-01-01T00:00:00+00:00",
                              events=[{"event": "closed", "actor": "SECRET-CLOSER"}])
    for item in alpha.papers:
        item.delete()
    items = [queue.add_item(alpha, paper, alpha.paper_codebook),
             queue.add_item(alpha, thread, alpha.paper_codebook)]
    for item in items:
        assignment = queue.assign(item, people["cyril"])
        from coding.actions.submit import submit

        submit(assignment, {"label": "rl_method", "scope": "general", "size_b": 70,
                            "failures": ["entropy_collapse"], "code_released": "yes",
                            "note": "cyril-secret-answer"},
               notes="cyril-secret-note",
               evidence=[{"question": "label", "field": "abstract", "quote": "cyril-secret-quote"}]
               if item.document.kind == "paper" else [])
    factories.code(items[0], people["cora"])
    queue.assign(items[1], people["cora"])
    return alpha


def coder_urls(study, client):
    from coding.models import Assignment

    mine = Assignment.objects.filter(item__study=study, coder__username="cora")
    base = f"/studies/{study.slug}"
    api = f"/api/studies/{study.slug}"
    codebook = study.paper_codebook.pk
    urls = ["/", f"{base}/", f"{base}/codings/", f"{base}/codebooks/{codebook}/",
            f"{base}/code/", f"{base}/code/previous/", "/api/studies/", f"{api}/",
            f"{api}/codebooks/", f"{api}/assignments/", f"{api}/codings/"]
    for assignment in mine:
        urls += [f"{base}/code/{assignment.pk}/", f"{api}/assignments/{assignment.pk}/"]
    return urls


def test_coder_a_never_receives_coder_b_values_or_blinded_fields(blind, people, client_for):
    client = client_for(people["cora"])
    bodies = {}
    for url in coder_urls(blind, client):
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        bodies[url] = response.content.decode()
    response = client.post(f"/api/studies/{blind.slug}/next/")
    bodies["POST next"] = response.content.decode()
    assert len(bodies) >= 15
    for url, body in bodies.items():
        leaked = [secret for secret in SECRETS if secret in body]
        assert not leaked, f"{url} leaks {leaked}"


def test_coder_a_item_page_holds_the_text_but_not_the_blinded_fields(blind, people, client_for):
    from coding.models import Assignment

    held = Assignment.objects.get(coder__username="cora", status="active")
    html = client_for(people["cora"]).get(f"/studies/{blind.slug}/code/{held.pk}/").content.decode()
    assert held.item.document.title in html
    assert "SECRET-STATE" not in html and "SECRET-LABEL" not in html


def test_api_item_content_has_the_blinded_keys_removed(blind, people, client_for):
    client = client_for(people["cora"])
    data = client.post(f"/api/studies/{blind.slug}/next/").json()
    content = data["item"]["content"]
    assert content["kind"] == "thread"
    assert not {"state", "merged", "labels", "closed_at", "events"} & set(content)
    assert "taken" not in json.dumps(data) and "target" not in json.dumps(data)


def test_blind_authors_removes_authors_and_affiliations(blind, people, client_for):
    blind.blind_authors = True
    blind.save()
    from coding.models import Assignment

    coded = Assignment.objects.get(coder__username="cora", status="submitted")
    html = client_for(people["cora"]).get(f"/studies/{blind.slug}/code/{coded.pk}/").content.decode()
    assert "Ann Example" not in html


def test_kind_scoped_blinding_hides_a_field_from_threads_only(blind, people):
    from coding.access.blinding import coder_view

    blind.blinded_fields = ["thread.url"]
    paper = {"kind": "paper", "url": "https://example.org/p"}
    thread = {"kind": "thread", "url": "https://example.org/t"}
    assert "url" in coder_view(blind, paper) and "url" not in coder_view(blind, thread)


def test_owner_and_adjudicator_still_see_the_codings(blind, people, client_for):
    for name in ("olive", "ada"):
        body = client_for(people[name]).get(f"/api/studies/{blind.slug}/codings/").content.decode()
        assert "cyril-secret-note" in body
        assert any(form in body for form in QUOTE_FORMS)  # the leak check would see it


def test_no_page_or_endpoint_anywhere_leaks_to_coder_a(blind, people, client_for,
                                                        django_capture_on_commit_callbacks):
    """The whole surface, not a chosen list: every URL of the permission table, as coder A,
    with GET and (where a coder may post) an empty POST; refusals included."""
    from coding.export.jobs import start_export
    from coding.models import Assignment, Framework
    from tests import permission_rows
    from tests.test_permission_matrix import TABLE, fill
    from workbench.models import ApiToken

    framework = Framework.objects.create(study=blind, name="Blind RL", repository="lab/blind-rl")
    with django_capture_on_commit_callbacks(execute=True):
        export = start_export(blind, people["olive"], shapes=["wide", "long"], fmt="csv")
    token, _ = ApiToken.objects.create(people["cora"], name="cora script")
    items = list(blind.items.order_by("pk"))
    client = client_for(people["cora"])
    checked = 0
    base = {"slug": blind.slug, "codebook_id": blind.paper_codebook.pk, "number": 1,
            "framework_id": framework.pk, "job_id": export.pk, "token_pk": token.pk}
    base.update(permission_rows.values(base, blind, people))  # the setup areas' parameters
    for assignment in Assignment.objects.filter(item__study=blind, coder__username="cora"):
        for item in items:
            world = {**base, "pk": assignment.pk, "item_id": item.pk}
            for route, methods in TABLE.items():
                url = fill(route, world)
                sent = [("GET", client.get(url, follow=True))]
                if "POST" in methods and methods["POST"][4] == "Y" and not route.endswith(
                        ("skip/", "logout/", "next/", "revoke/")):
                    sent.append(("POST", client.post(url, {}, follow=True)))
                for method, response in sent:
                    assert response.status_code < 500, f"{method} {url}"
                    body = b"".join(response) if response.streaming else response.content
                    leaked = [s for s in SECRETS if s in body.decode(errors="replace")]
                    assert not leaked, f"{method} {url} leaks {leaked}"
                    checked += 1
    assert checked > 2 * 2 * len(TABLE)


# --- what issue 19 added to a snapshot must not tell a blinded outcome ----------------------

TELLING_SECRETS = ["2031-02-03T04:05:06Z", "SECRET-REASON", "SECRET-MERGE-SHA", "2031-04-05"]


@pytest.fixture
def outcome_blind(alpha, people):
    """Alpha blinds only `merged` and `state`; the thread says both other ways too: merged_at,
    state_reason, closed_at, and merged / closed events in its timeline."""
    from ingest.models import Post

    alpha.blinded_fields = ["merged", "state"]
    alpha.save()
    thread = factories.thread(
        95, state="closed", merged=True, merged_at="2031-02-03T04:05:06Z",
        state_reason="SECRET-REASON", closed_at="2031-04-05T00:00:00Z",
        head={"label": "fork:fix", "ref": "fix", "sha": "abc123", "repo": None, "repo_deleted": True},
        events=[{"event": "labeled", "actor": "user0", "created_at": "2025-06-01T00:00:00Z",
                 "label": "bug"},
                {"event": "merged", "actor": "user0", "created_at": "2031-02-03T04:05:06Z",
                 "commit_id": "SECRET-MERGE-SHA"},
                {"event": "closed", "actor": "user0", "created_at": "2031-02-03T04:05:06Z",
                 "state_reason": "SECRET-REASON"}])
    Post.objects.create(document=thread, position=2, external_id="r1", kind=Post.Kind.REVIEW,
                        author="user1", created=thread.published, body="",
                        details={"state": "APPROVED"})
    for item in alpha.papers:
        item.delete()
    item = queue.add_item(alpha, thread, alpha.paper_codebook)
    return queue.assign(item, people["cora"])


def test_hiding_an_outcome_hides_every_field_and_event_that_tells_it(outcome_blind, alpha, people,
                                                                     client_for):
    client = client_for(people["cora"])
    page = client.get(f"/studies/{alpha.slug}/code/{outcome_blind.pk}/").content.decode()
    api = client.get(f"/api/studies/{alpha.slug}/assignments/{outcome_blind.pk}/").content.decode()
    for body in (page, api):
        assert not [s for s in TELLING_SECRETS if s in body]
    content = client.get(f"/api/studies/{alpha.slug}/assignments/{outcome_blind.pk}/").json()
    content = content["item"]["content"]
    assert not {"merged", "merged_at", "state", "state_reason", "closed_at"} & set(content)
    assert [e["event"] for e in content["events"]] == ["labeled"]  # the rest of the timeline stays
    assert content["head"]["label"] == "fork:fix"  # what tells no outcome stays
    assert content["posts"][2]["state"] == "APPROVED"  # a review's verdict is not the outcome


def test_the_owner_still_receives_what_the_outcome_blinding_hides(outcome_blind, alpha):
    from coding.access.blinding import OWNER_LEVEL, view_for

    content = view_for(alpha, OWNER_LEVEL, outcome_blind.item.snapshot.content)
    assert content["merged_at"] == "2031-02-03T04:05:06Z"
    assert [e["event"] for e in content["events"]] == ["labeled", "merged", "closed"]


def test_blind_authors_hides_the_per_author_records_too(alpha, people, client_for):
    alpha.blind_authors = True
    alpha.save()
    paper = factories.paper(96, author_records=[
        {"name": "Ann Example", "keyname": "Example", "forenames": "Ann", "suffix": None,
         "affiliations": ["SECRET-INSTITUTE"], "orcid": "0000-0002-5555-0096"}])
    for item in alpha.papers:
        item.delete()
    assignment = queue.assign(queue.add_item(alpha, paper, alpha.paper_codebook), people["cora"])
    client = client_for(people["cora"])
    for url in (f"/studies/{alpha.slug}/code/{assignment.pk}/",
                f"/api/studies/{alpha.slug}/assignments/{assignment.pk}/"):
        body = client.get(url).content.decode()
        assert "SECRET-INSTITUTE" not in body and "0000-0002-5555-0096" not in body


def test_hiding_whether_a_discussion_was_answered_hides_which_comment_is_the_answer(alpha):
    from coding.access.blinding import coder_view

    alpha.blinded_fields = ["thread.answered"]
    content = {"kind": "thread", "answered": True, "answer_chosen_at": "2031-01-01T00:00:00Z",
               "posts": [{"kind": "opening", "body": "Q"},
                         {"kind": "comment", "body": "A", "is_answer": True}]}
    seen = coder_view(alpha, content)
    assert "answered" not in seen and "answer_chosen_at" not in seen
    assert seen["posts"] == [{"kind": "opening", "body": "Q"}, {"kind": "comment", "body": "A"}]
    assert content["posts"][1]["is_answer"] is True  # the snapshot itself is untouched

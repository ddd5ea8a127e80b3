"""The codebook editor: who may edit, what a bad spec does, publishing, diffs.

Olive owns alpha; cora and cyril code it, ada adjudicates, vera views, otto is outside.
"""

import copy
import html as html_lib
import json
import re
import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from rest_framework.test import APIClient

from coding.actions.publish import publish_draft
from coding.codebooks.diff import diff
from coding.codebooks.editing import NothingToPublish, new_codebook, save_spec, start_draft
from coding.codebooks.spec import InvalidSpec, save_draft, spec_of, validate
from coding.labeling import queue
from coding.labeling.open_work import prune_draft
from coding.models import Assignment, AuditEntry, Item
from tests import factories
from tests.conftest import page_queries as queries


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def url(study, codebook, rest=""):
    return f"/studies/{study.slug}/codebooks/{codebook.pk}/{rest}"


def api_url(study, codebook, rest=""):
    return f"/api/studies/{study.slug}/codebooks/{codebook.pk}/{rest}"


@pytest.fixture
def codebook(alpha):
    return alpha.paper_codebook


@pytest.fixture
def draft(codebook, people):
    return start_draft(codebook, people["olive"])[0]


def two_questions(name="Small paper codebook"):
    return {"name": name, "applies_to": "paper", "questions": [
        {"key": "label", "kind": "single", "text": "Main contribution?",
         "options": [{"value": "rl_method", "label": "RL method"},
                     {"value": "analysis", "label": "Analysis"}]},
        {"key": "scope", "kind": "single", "text": "Scope?",
         "show_if": {"question": "label", "in": ["rl_method"]},
         "options": [{"value": "general", "label": "General"}]},
    ]}


# --- who may edit ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cora", "ada", "vera"])
def test_members_who_are_not_owners_cannot_edit_or_publish(alpha, codebook, draft, people,
                                                           client_for, name):
    client = client_for(people[name])
    assert client.get(url(alpha, codebook, "edit/")).status_code == 403
    assert client.post(url(alpha, codebook, "edit/"), {"op": "save", "name": "Taken"}).status_code == 403
    assert client.post(url(alpha, codebook, "publish/"),
                       {"note": "mine", "open_assignments": "switch"}).status_code == 403
    assert client.post(f"/studies/{alpha.slug}/codebooks/", {"name": "X", "applies_to": "paper"}).status_code == 403
    they = api(people[name])
    assert they.put(api_url(alpha, codebook, "draft/"), two_questions(), format="json").status_code == 403
    assert they.post(api_url(alpha, codebook, "publish/"),
                     {"note": "mine", "open_assignments": "switch"}, format="json").status_code == 403
    assert they.post(f"/api/studies/{alpha.slug}/codebooks/",
                     {"name": "X", "applies_to": "paper"}, format="json").status_code == 403
    codebook.refresh_from_db()
    assert codebook.name == "Small paper codebook"
    assert codebook.versions.count() == 2 and codebook.current_version().number == 1
    assert alpha.codebooks.count() == 1


def test_outsiders_meet_not_found(alpha, codebook, draft, people, client_for):
    client = client_for(people["otto"])
    assert client.get(url(alpha, codebook, "edit/")).status_code == 404
    assert client.get(f"/studies/{alpha.slug}/codebooks/").status_code == 404
    otto = api(people["otto"])
    assert otto.get(api_url(alpha, codebook, "draft/")).status_code == 404
    assert otto.post(api_url(alpha, codebook, "publish/"),
                     {"note": "x", "open_assignments": "switch"}, format="json").status_code == 404
    assert otto.get(api_url(alpha, codebook, "versions/1/")).status_code == 404


def test_another_studys_codebook_is_not_found_through_this_study(alpha, beta, people):
    theirs = factories.codebook(beta)
    olive = api(people["olive"])
    assert olive.get(f"/api/studies/{alpha.slug}/codebooks/{theirs.pk}/versions/1/").status_code == 404
    assert olive.post(f"/api/studies/{alpha.slug}/codebooks/{theirs.pk}/draft/").status_code == 404


# --- a published version never changes ------------------------------------------------------

def test_a_published_version_is_refused_by_every_way_of_editing(alpha, codebook, people, client_for):
    published = codebook.current_version()
    with pytest.raises(InvalidSpec, match="published"):
        save_draft(published, two_questions())
    olive = api(people["olive"])
    response = olive.put(api_url(alpha, codebook, "draft/"), two_questions(), format="json")
    assert response.status_code == 404  # no draft to replace: POST …/draft/ starts one
    page = client_for(people["olive"]).post(url(alpha, codebook, "edit/"),
                                            {"op": "save", "name": "Renamed", "question": []})
    assert page.status_code == 409
    assert spec_of(published)["questions"] == spec_of(codebook.current_version())["questions"]
    assert published.questions.count() == 6 and codebook.versions.count() == 1


def test_edit_on_a_published_codebook_starts_one_draft(alpha, codebook, people, client_for):
    client = client_for(people["olive"])
    page = client.get(url(alpha, codebook, "edit/"))
    assert b"Start draft v2" in page.content
    for _ in range(2):  # a double click starts one draft
        assert client.post(url(alpha, codebook, "draft/")).status_code == 302
    assert list(codebook.versions.values_list("number", "status")) == [(1, "published"), (2, "draft")]
    assert spec_of(codebook.versions.get(number=2))["questions"] == spec_of(codebook.versions.get(number=1))["questions"]
    assert AuditEntry.objects.filter(study=alpha, action="codebook.draft").count() == 1


# --- located errors, nothing saved half-way ------------------------------------------------------

BAD = [
    ("duplicate key", lambda s: s["questions"][1].update(key="label"), "questions[1].key"),
    ("condition on a later question",
     lambda s: s["questions"][0].update(show_if={"question": "scope", "in": ["general"]}),
     "questions[0].show_if.question"),
    ("condition on a missing question",
     lambda s: s["questions"][1].update(show_if={"question": "colour", "in": ["red"]}),
     "questions[1].show_if.question"),
    ("condition on an answer that does not exist",
     lambda s: s["questions"][1].update(show_if={"question": "label", "in": ["poetry"]}),
     "questions[1].show_if.in"),
    ("single choice without options", lambda s: s["questions"][0].update(options=[]),
     "questions[0].options"),
    ("bounds the wrong way round",
     lambda s: s["questions"].append({"key": "size_b", "kind": "number", "text": "Size?",
                                      "min_value": 10, "max_value": 1}),
     "questions[2].max_value"),
    ("a bound too large for any number",
     lambda s: s["questions"].append({"key": "size_b", "kind": "number", "text": "Size?",
                                      "min_value": 10 ** 400}),
     "questions[2].min_value"),
    ("two options on one key",
     lambda s: s["questions"][0]["options"][1].update(shortcut="1"),
     "questions[0].options[1].shortcut"),
    ("a key the coding page uses",
     lambda s: s["questions"][0]["options"][0].update(shortcut="s"),
     "questions[0].options[0].shortcut"),
]


@pytest.mark.parametrize("what,spoil,path", BAD, ids=[b[0] for b in BAD])
def test_a_bad_spec_gets_a_located_error_and_saves_nothing(alpha, codebook, draft, people,
                                                           what, spoil, path):
    before = spec_of(draft)
    spec = two_questions(name="A new name")
    spoil(spec)
    response = api(people["olive"]).put(api_url(alpha, codebook, "draft/"), spec, format="json")
    assert response.status_code == 400, response.content
    assert path in response.json(), response.json()
    codebook.refresh_from_db()
    assert codebook.name == "Small paper codebook"  # not even the name changed
    assert spec_of(draft) == before
    assert not AuditEntry.objects.filter(action="codebook.edit").exists()


@pytest.mark.parametrize("body", [[], "text", {"questions": "no"}, {"name": "\x00"},
                                  {"name": "X", "applies_to": "paper", "questions": [
                                      {"key": ["a"], "kind": {"k": 1}, "level": [],
                                       "options": 5, "show_if": {"question": [], "in": 1}}]},
                                  {"name": "X", "applies_to": "paper", "questions": [
                                      {"key": "a", "kind": "single", "text": "A",
                                       "options": [{"value": ["x"]}]},
                                      {"key": "b", "kind": "single", "text": "B",
                                       "show_if": {"question": "a", "in": ["x"]},
                                       "options": [{"value": "y"}]}]}])
def test_malformed_specs_are_refused_not_crashed_on(alpha, codebook, draft, people, body):
    response = api(people["olive"]).put(api_url(alpha, codebook, "draft/"), body, format="json")
    assert response.status_code == 400


def test_the_editor_page_shows_errors_beside_their_fields_and_saves_nothing(
        alpha, codebook, draft, people, client_for):
    client = client_for(people["olive"])
    form = editor_form(spec_of(draft))
    form["q-q1-key"] = "label"  # the second question takes the first one's key
    form["q-q2-min_value"], form["q-q2-max_value"] = "10", "1"
    form["op"] = "save"
    response = client.post(url(alpha, codebook, "edit/"), form)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was written" in html
    key_field = html.index('id="q-q1-key"')
    assert "duplicate key" in html[key_field:key_field + 600]
    bound = html.index('id="q-q2-max_value"')
    assert "below the lower bound" in html[bound:bound + 600]
    assert spec_of(draft)["questions"][1]["key"] == "scope"


def test_a_new_number_question_saves_with_its_empty_row_and_errors_name_their_question(
        alpha, codebook, draft, people, client_for):
    """Issue 39, finding 4: a new question's empty option row, kept through a change of kind
    to Number, is no special answer; a problem is listed at the top by question and row."""
    client = client_for(people["olive"])
    form = editor_form(spec_of(draft))
    form["question"].append("q9")
    form.update({"q-q9-key": "seeds", "q-q9-text": "How many seeds?", "q-q9-kind": "number",
                 "q-q9-level": "ratio", "q-q9-required": "on", "q-q9-option": ["o0"],
                 "q-q9-o-o0-value": "", "q-q9-o-o0-label": "", "op": "save"})
    assert client.post(url(alpha, codebook, "edit/"), form).status_code == 302
    seeds = spec_of(draft)["questions"][-1]
    assert (seeds["key"], seeds.get("options") or []) == ("seeds", [])
    form = editor_form(spec_of(draft))
    form["q-q0-o-o1-value"] = "Not a value!"
    form["op"] = "save"
    refused = client.post(url(alpha, codebook, "edit/"), form)
    assert refused.status_code == 400
    top = refused.content.decode().split('id="save-errors"')[1].split("</div>")[0]
    assert 'href="#card-q0-o1"' in top and "Question 1 (label), option 2" in top
    assert "Value:" in top


def test_the_first_version_needs_no_note(alpha, people):
    codebook = new_codebook(alpha, people["olive"], "Threads", "thread")
    save_spec(codebook.versions.get(), people["olive"], {**two_questions("Threads"),
                                                         "applies_to": "thread"})
    version, _counts = publish_draft(codebook, people["olive"], "", "switch")
    assert version.number == 1 and version.note == ""


def editor_form(spec):
    """The editor's fields for a spec, as the page draws them (tokens q0…, o0…)."""
    form = {"name": spec["name"], "description": spec.get("description", ""),
            "applies_to": spec["applies_to"], "question": []}
    for i, q in enumerate(spec["questions"]):
        t = f"q{i}"
        form["question"].append(t)
        for field in ("key", "text", "kind", "definition", "unit"):
            form[f"q-{t}-{field}"] = q.get(field) or ""
        form[f"q-{t}-level"] = q.get("level") or "nominal"
        for field in ("min_value", "max_value"):
            form[f"q-{t}-{field}"] = "" if q.get(field) is None else str(q[field])
        if q.get("required", True):
            form[f"q-{t}-required"] = "on"
        adjudicated = q.get("adjudicated")
        if adjudicated or adjudicated is None and q.get("kind") != "text":
            form[f"q-{t}-adjudicated"] = "on"  # the box is ticked as the kind has it
        if q.get("show_if"):
            form[f"q-{t}-show_if_question"] = q["show_if"]["question"]
            form[f"q-{t}-show_if_in"] = q["show_if"]["in"]
        form[f"q-{t}-option"] = []
        for j, o in enumerate(q.get("options") or []):
            u = f"o{j}"
            form[f"q-{t}-option"].append(u)
            for field in ("value", "label", "definition", "examples", "counter_examples",
                          "shortcut"):
                form[f"q-{t}-o-{u}-{field}"] = o.get(field) or ""
            if o.get("exclusive"):
                form[f"q-{t}-o-{u}-exclusive"] = "on"
    return form


def test_the_form_round_trips_a_spec_unchanged(alpha, codebook, draft, people, client_for):
    before = spec_of(draft)
    form = editor_form(before)
    form["op"] = "save"
    response = client_for(people["olive"]).post(url(alpha, codebook, "edit/"), form)
    assert response.status_code == 302
    assert spec_of(draft) == before


def test_structural_actions_change_the_form_and_save_nothing(alpha, codebook, draft, people,
                                                             client_for):
    client = client_for(people["olive"])
    before = spec_of(draft)
    form = editor_form(before)
    html = client.post(url(alpha, codebook, "edit/"), {**form, "op": "down:q0"}).content.decode()
    assert html.index('value="q1"') < html.index('value="q0"')  # scope now comes first
    # …and its condition names a question below it: the editor says so.
    assert "not above this question" in html
    html = client.post(url(alpha, codebook, "edit/"), {**form, "op": "add_question"}).content.decode()
    assert 'data-token="n6"' in html and 'data-target="q-n6-key"' in html  # the cursor goes there
    html = client.post(url(alpha, codebook, "edit/"),
                       {**form, "op": "remove_option:q0:o0"}).content.decode()
    assert 'name="q-q0-o-o0-value"' not in html
    # Choosing a condition's question offers that question's answers to tick.
    html = client.post(url(alpha, codebook, "edit/"),
                       {**form, "q-q4-show_if_question": "label", "op": "refresh"}).content.decode()
    assert 'name="q-q4-show_if_in" value="rl_method"' in html
    assert spec_of(draft) == before


def test_a_drag_reorders_what_is_posted(alpha, codebook, draft, people, client_for):
    form = editor_form(spec_of(draft))
    form["question"] = ["q0", "q2", "q1", "q3", "q4", "q5"]  # size_b dragged above scope
    form["op"] = "save"
    assert client_for(people["olive"]).post(url(alpha, codebook, "edit/"), form).status_code == 302
    assert [q["key"] for q in spec_of(draft)["questions"]][:3] == ["label", "size_b", "scope"]


# --- the preview is the coding page -----------------------------------------------------------------

def fieldsets(html):
    """Each question's fieldset up to its answer widget, whitespace folded."""
    found = re.findall(r'<fieldset class="q[^"]*".*?(?=\{\{|<p class="error"|<ul class="quotes"|</fieldset>)',
                       html, flags=re.S)
    return [" ".join(SHOW_IF.sub(canonical, part.replace(' class="q"', "")).split()) for part in found]


# A condition's JSON keys come in the database's order (PostgreSQL's jsonb sorts them).
SHOW_IF = re.compile(r'data-show-if="([^"]*)"')


def canonical(match):
    condition = json.loads(html_lib.unescape(match[1]))
    return f'data-show-if="{json.dumps(condition, sort_keys=True)}"'


def test_the_preview_draws_what_the_coding_page_draws(alpha, codebook, draft, people, client_for):
    queue.assign(alpha.papers[0], people["cora"])
    assignment = Assignment.objects.get(coder=people["cora"])
    coding_page = client_for(people["cora"]).get(f"/studies/{alpha.slug}/code/{assignment.pk}/")
    preview = client_for(people["olive"]).post(url(alpha, codebook, "edit/preview/"),
                                              editor_form(spec_of(draft)))
    coder_sees, owner_sees = fieldsets(coding_page.content.decode()), fieldsets(preview.content.decode())
    assert len(coder_sees) == 6
    assert owner_sees == coder_sees


def test_the_preview_follows_unsaved_edits(alpha, codebook, draft, people, client_for):
    form = editor_form(spec_of(draft))
    form["q-q0-text"] = "What does the paper mainly do?"
    form["q-q0-o-o1-label"] = "Empirical analysis"
    html = client_for(people["olive"]).post(url(alpha, codebook, "edit/preview/"), form).content.decode()
    assert "What does the paper mainly do?" in html and "Empirical analysis" in html
    assert spec_of(draft)["questions"][0]["text"] == "Main contribution?"


# --- publishing -----------------------------------------------------------------------------------

def test_publish_needs_a_note_and_a_choice(alpha, codebook, draft, people):
    olive = api(people["olive"])
    response = olive.post(api_url(alpha, codebook, "publish/"), {"note": " ", "open_assignments": "keep"},
                          format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"note", "open_assignments"}
    with pytest.raises(InvalidSpec) as refused:
        publish_draft(codebook, people["olive"], "  ", "switch")
    assert [e.path for e in refused.value.errors] == ["note"]
    assert codebook.current_version().number == 1


def test_publishing_an_empty_codebook_is_refused(alpha, people):
    codebook = new_codebook(alpha, people["olive"], "Threads", "thread")
    with pytest.raises(InvalidSpec) as refused:
        publish_draft(codebook, people["olive"], "First version.", "switch")
    assert [e.path for e in refused.value.errors] == ["questions"]
    assert codebook.current_version() is None


def test_a_replayed_publish_makes_one_version(alpha, codebook, draft, people):
    olive = api(people["olive"])
    body = {"note": "Tighter scope.", "open_assignments": "switch", "version": 2}
    first = olive.post(api_url(alpha, codebook, "publish/"), body, format="json")
    second = olive.post(api_url(alpha, codebook, "publish/"), body, format="json")
    assert first.status_code == 201 and first.json()["version"] == 2
    assert second.status_code == 409
    # Even after the next draft was started, the replay names v2 and publishes nothing.
    start_draft(codebook, people["olive"])
    third = olive.post(api_url(alpha, codebook, "publish/"), body, format="json")
    assert third.status_code == 409
    assert list(codebook.versions.values_list("number", "status")) == [
        (1, "published"), (2, "published"), (3, "draft")]
    assert AuditEntry.objects.filter(action="codebook.publish").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_publishes_make_one_version(people):
    alpha = factories.study("Race study", owner=people["olive"])
    codebook = factories.codebook(alpha)
    start_draft(codebook, people["olive"])
    outcomes, barrier = [], threading.Barrier(2)

    def publish(note):
        try:
            barrier.wait(timeout=10)
            publish_draft(codebook, people["olive"], note, "switch")
            outcomes.append("published")
        except NothingToPublish:
            outcomes.append("nothing")
        except Exception as error:  # SQLite: the second writer may find the database locked
            outcomes.append(f"refused: {type(error).__name__}")
        finally:
            connection.close()

    threads = [threading.Thread(target=publish, args=(f"note {n}",)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("published") == 1, outcomes
    assert list(codebook.versions.values_list("number", "status")) == [(1, "published"), (2, "published")]
    assert AuditEntry.objects.filter(action="codebook.publish").count() == 1


@pytest.fixture
def open_work(alpha, codebook, people):
    """cora holds paper 0 with a draft; cyril submitted paper 1; the draft v2 drops
    `scope`, renames option analysis → empirical and adds `venue`."""
    held = queue.assign(alpha.papers[0], people["cora"])
    Assignment.objects.filter(pk=held.pk).update(draft={
        "values": {"label": "analysis", "scope": "general", "size_b": 7, "code_released": "yes"},
        "notes": "halfway", "unsure": False,
        "evidence": [{"question": "scope", "field": "title", "quote": "Invented"},
                     {"question": "label", "field": "title", "quote": "paper"}]})
    coded = factories.code(alpha.papers[1], people["cyril"])
    draft = start_draft(codebook, people["olive"])[0]
    spec = spec_of(draft)
    spec["questions"] = [q for q in spec["questions"] if q["key"] != "scope"]
    spec["questions"][0]["options"][1]["value"] = "empirical"
    spec["questions"].append({"key": "venue", "kind": "text", "text": "Venue?", "required": False})
    save_spec(draft, people["olive"], spec)
    return held, coded


def test_switch_keeps_coders_on_their_items_and_prunes_their_drafts(alpha, codebook, people,
                                                                   open_work, client_for):
    held, coded = open_work
    response = client_for(people["olive"]).post(url(alpha, codebook, "publish/"), {
        "note": "Drop scope; analysis is now empirical.", "open_assignments": "switch",
        "number": "2"})
    assert response.status_code == 302
    assert response["Location"] == url(alpha, codebook, "v2/")
    held.refresh_from_db()
    assert held.status == "active"
    assert held.draft["values"] == {"size_b": 7, "code_released": "yes"}  # label's answer is gone too
    assert [q["question"] for q in held.draft["evidence"]] == ["label"]
    assert held.draft["notes"] == "halfway"
    coded.refresh_from_db()
    assert coded.codebook_version.number == 1  # earlier codings keep their version
    page = client_for(people["cora"]).get(f"/studies/{alpha.slug}/code/{held.pk}/")
    assert b'name="q-venue"' in page.content and b'name="q-scope"' not in page.content
    entry = AuditEntry.objects.get(action="codebook.publish")
    assert entry.details["drafts_pruned"] == 1 and entry.details["open_assignments"] == "switch"


def test_release_sends_open_items_back_to_the_pool(alpha, codebook, people, open_work):
    held, _ = open_work
    taken = Item.objects.get(pk=held.item_id).taken
    response = api(people["olive"]).post(api_url(alpha, codebook, "publish/"), {
        "note": "Drop scope.", "open_assignments": "release"}, format="json")
    assert response.status_code == 201
    assert response.json()["released"] == 1
    held.refresh_from_db()
    assert held.status == Assignment.Status.RELEASED and held.leased_until is None
    assert Item.objects.get(pk=held.item_id).taken == taken - 1
    assert queue.current_assignment(alpha, people["cora"]) is None


def test_prune_draft_keeps_only_answers_the_version_accepts(alpha, codebook):
    version = codebook.current_version()
    kept = prune_draft(version, {"values": {"label": "poetry", "size_b": "not_reported",
                                            "failures": ["none"], "gone": 1}, "evidence": []})
    assert kept["values"] == {"size_b": "not_reported", "failures": ["none"]}
    assert prune_draft(version, "nonsense") is None


# --- diffs -----------------------------------------------------------------------------------

def test_diff_names_added_removed_and_changed_questions_and_options():
    old = two_questions()
    new = copy.deepcopy(old)
    new["name"] = "Paper codebook"
    new["questions"][0]["text"] = "Main contribution of the paper?"
    new["questions"][0]["options"][1]["label"] = "Empirical analysis"
    new["questions"][0]["options"].append({"value": "systems", "label": "Systems"})
    del new["questions"][0]["options"][0]
    new["questions"][1]["required"] = False
    new["questions"].append({"key": "venue", "kind": "text", "text": "Venue?"})
    del new["questions"][1]
    new["questions"].insert(0, {"key": "size_b", "kind": "number", "text": "Size", "min_value": 0})
    found = diff(old, new)
    assert found["codebook"] == [{"field": "name", "old": "Small paper codebook", "new": "Paper codebook"}]
    assert [q["key"] for q in found["added"]] == ["size_b", "venue"]
    assert [q["key"] for q in found["removed"]] == ["scope"]
    (label,) = found["changed"]
    assert label["fields"] == [{"field": "text", "old": "Main contribution?",
                                "new": "Main contribution of the paper?"}]
    assert label["options"]["added"] == [{"value": "systems", "label": "Systems"}]
    assert label["options"]["removed"] == [{"value": "rl_method", "label": "RL method"}]
    assert label["options"]["changed"] == [{"value": "analysis", "label": "Empirical analysis",
                                            "fields": [{"field": "label", "old": "Analysis",
                                                        "new": "Empirical analysis"}]}]
    assert found["order"] is None


def test_diff_sees_reordering_and_ignores_spelled_out_defaults():
    old = two_questions()
    new = copy.deepcopy(old)
    new["questions"].reverse()
    new["questions"][1]["options"].reverse()
    new["questions"][0].update(required=True, level="nominal", unit="", definition="",
                               min_value=None, show_if={"question": "label", "in": ["rl_method"]})
    found = diff(old, new)
    assert found["order"] == {"old": ["label", "scope"], "new": ["scope", "label"]}
    assert found["changed"][0]["options"]["order"] == {"old": ["rl_method", "analysis"],
                                                       "new": ["analysis", "rl_method"]}
    assert found["changed"][0]["fields"] == [] and not found["added"] and not found["removed"]
    assert diff(old, copy.deepcopy(old)) == {"codebook": [], "added": [], "removed": [],
                                             "changed": [], "order": None, "translations": []}


def test_version_page_api_and_command_show_the_same_diff(alpha, codebook, people, client_for,
                                                         open_work, capsys):
    publish_draft(codebook, people["olive"], "Drop scope; venue added.", "switch")
    page = client_for(people["vera"]).get(url(alpha, codebook, "v2/")).content.decode()
    assert "Changes from v1" in page and "Drop scope; venue added." in page
    assert "venue" in page[page.index("Added"):] and "scope" in page[page.index("Removed"):]
    body = api(people["cora"]).get(api_url(alpha, codebook, "versions/2/")).json()
    assert body["previous"] == 1 and body["note"] == "Drop scope; venue added."
    assert [q["key"] for q in body["diff"]["added"]] == ["venue"]
    assert [q["key"] for q in body["diff"]["removed"]] == ["scope"]
    assert body["diff"]["changed"][0]["options"]["added"] == [{"value": "empirical", "label": "Analysis"}]
    call_command("codebook_diff", alpha.slug, str(codebook.pk), "1", "2")
    out = capsys.readouterr().out
    assert "+ venue: Venue? (text)" in out and "- scope: Scope?" in out
    assert "+ option empirical (Analysis)" in out


# --- the whole round through the API and the pages ---------------------------------------------

def test_a_new_codebook_through_the_api(alpha, people):
    olive = api(people["olive"])
    made = olive.post(f"/api/studies/{alpha.slug}/codebooks/",
                      {"name": "Thread codebook", "applies_to": "thread"}, format="json")
    assert made.status_code == 201
    codebook_id = made.json()["id"]
    assert made.json()["versions"][0]["status"] == "draft"
    again = olive.post(f"/api/studies/{alpha.slug}/codebooks/",
                       {"name": "Thread codebook", "applies_to": "thread"}, format="json")
    assert again.status_code == 400 and "name" in again.json()
    base = f"/api/studies/{alpha.slug}/codebooks/{codebook_id}/"
    spec = two_questions("Thread codebook")
    spec["applies_to"] = "thread"
    saved = olive.put(base + "draft/", spec, format="json")
    assert saved.status_code == 200 and saved.json()["version"] == 1
    assert olive.get(base + "draft/").json()["spec"]["questions"][1]["show_if"] == {
        "question": "label", "in": ["rl_method"]}
    published = olive.post(base + "publish/", {"note": "First version.", "open_assignments": "switch"},
                           format="json")
    assert published.status_code == 201
    assert olive.get(base + "draft/").status_code == 404
    started = olive.post(base + "draft/")
    assert started.status_code == 201 and started.json()["version"] == 2
    assert olive.post(base + "draft/").status_code == 200
    actions = list(AuditEntry.objects.filter(study=alpha).order_by("id").values_list("action", flat=True))
    assert actions == ["codebook.create", "codebook.edit", "codebook.publish", "codebook.draft"]


def test_a_new_codebook_through_the_pages(alpha, people, client_for):
    client = client_for(people["olive"])
    response = client.post(f"/studies/{alpha.slug}/codebooks/", {"name": "", "applies_to": "paper"})
    assert response.status_code == 400 and b"required" in response.content
    response = client.post(f"/studies/{alpha.slug}/codebooks/",
                           {"name": "Second paper codebook", "applies_to": "paper"})
    codebook = alpha.codebooks.get(name="Second paper codebook")
    assert response["Location"] == url(alpha, codebook, "edit/")
    form = editor_form(two_questions("Second paper codebook"))
    assert client.post(url(alpha, codebook, "edit/"), {**form, "op": "save"}).status_code == 302
    publish_page = client.get(url(alpha, codebook, "publish/")).content.decode()
    assert "Questions of the first version" in publish_page
    response = client.post(url(alpha, codebook, "publish/"),
                           {"note": "First version.", "open_assignments": "switch", "number": "1"})
    assert response.status_code == 302
    listing = client.get(f"/studies/{alpha.slug}/codebooks/").content.decode()
    assert "Second paper codebook" in listing and "Edit (draft v2)" in listing


def test_publish_codebook_command(alpha, codebook, draft, people):
    with pytest.raises(CommandError, match="note"):
        call_command("publish_codebook", alpha.slug, codebook.name, "--note", " ",
                     "--open-assignments", "switch")
    call_command("publish_codebook", alpha.slug, str(codebook.pk), "--note", "By command.",
                 "--open-assignments", "release", "--by", "olive")
    assert codebook.current_version().note == "By command."
    with pytest.raises(CommandError, match="no draft"):
        call_command("publish_codebook", alpha.slug, str(codebook.pk), "--note", "Again.",
                     "--open-assignments", "switch")


def test_validate_accepts_every_preset():
    from coding.studies import presets

    for spec in (presets.PAPER_CODEBOOK, presets.THREAD_CODEBOOK):
        assert validate(spec, publishing=True) == []


# --- pages stay cheap as the study grows -------------------------------------------------------

def test_editor_pages_do_not_query_more_with_more_items(alpha, codebook, draft, people, client_for):
    client = client_for(people["olive"])
    pages = [url(alpha, codebook, "edit/"), f"/studies/{alpha.slug}/codebooks/",
             url(alpha, codebook, "publish/"), url(alpha, codebook, "v2/")]
    small = [queries(client, page) for page in pages]
    for n in range(3, 40):
        factories.paper_item(alpha, codebook, n)
    assert [queries(client, page) for page in pages] == small


def test_a_spec_without_questions_empties_the_draft_and_a_form_body_is_read_too(
        alpha, codebook, draft, people):
    olive = api(people["olive"])
    response = olive.put(api_url(alpha, codebook, "draft/"),
                         {"name": "Small paper codebook", "applies_to": "paper"})  # multipart
    assert response.status_code == 200
    assert spec_of(draft)["questions"] == []
    response = olive.post(api_url(alpha, codebook, "publish/"),
                          {"note": "Empty.", "open_assignments": "switch"}, format="json")
    assert response.status_code == 400 and "questions" in response.json()


def test_editor_pages_carry_no_inline_code(alpha, codebook, draft, people, client_for):
    from tests.test_csp import inline_code

    client = client_for(people["olive"])
    for page in (f"/studies/{alpha.slug}/codebooks/", url(alpha, codebook, "edit/"),
                 url(alpha, codebook, "publish/"), url(alpha, codebook, "v1/")):
        response = client.get(page)
        assert response.status_code == 200
        assert inline_code(response.content.decode()) == [], page


def test_a_draft_saved_meanwhile_is_not_overwritten(alpha, codebook, draft, people, client_for):
    client = client_for(people["olive"])
    page = client.get(url(alpha, codebook, "edit/")).content.decode()
    base = re.search(r'name="base" value="([0-9a-f]+)"', page)[1]
    # Another tab (or another owner) saves first.
    olive = api(people["olive"])
    theirs = olive.get(api_url(alpha, codebook, "draft/")).json()
    theirs["spec"]["questions"][0]["text"] = "Their wording"
    assert olive.put(api_url(alpha, codebook, "draft/"), theirs["spec"], format="json",
                     HTTP_IF_MATCH=theirs["revision"]).status_code == 200
    # A PUT from the revision read before that one is refused.
    stale = olive.put(api_url(alpha, codebook, "draft/"), theirs["spec"], format="json",
                      HTTP_IF_MATCH=theirs["revision"])
    assert stale.status_code == 412
    form = editor_form(spec_of(codebook.versions.get(number=1)))
    form["q-q0-text"], form["base"], form["op"] = "My wording", base, "save"
    response = client.post(url(alpha, codebook, "edit/"), form)
    assert response.status_code == 409 and b"Save mine over theirs" in response.content
    assert spec_of(draft)["questions"][0]["text"] == "Their wording"
    form["op"] = "overwrite"
    assert client.post(url(alpha, codebook, "edit/"), form).status_code == 302
    assert spec_of(draft)["questions"][0]["text"] == "My wording"


def test_a_long_codebook_saves_through_the_form(alpha, codebook, draft, people, client_for):
    """The form sends ~8 fields an option: 30 questions of 10 options are ~2,800 fields,
    more than Django's default limit of 1,000."""
    spec = {"name": "Small paper codebook", "applies_to": "paper", "questions": [
        {"key": f"q{i}", "kind": "single", "text": f"Question {i}?",
         "options": [{"value": f"v{j}", "label": f"Answer {j}"} for j in range(10)]}
        for i in range(30)]}
    form = editor_form(spec)
    form["op"] = "save"
    response = client_for(people["olive"]).post(url(alpha, codebook, "edit/"), form)
    assert response.status_code == 302
    assert len(spec_of(draft)["questions"]) == 30


def test_an_options_error_is_named_in_its_row(alpha, codebook, draft, people, client_for):
    form = editor_form(spec_of(draft))
    form["q-q0-o-o1-shortcut"], form["q-q0-o-o1-value"], form["op"] = "1", "bad value!", "save"
    html = client_for(people["olive"]).post(url(alpha, codebook, "edit/"), form).content.decode()
    row = html[html.index('id="card-q0-o1"'):html.index('id="card-q0-o2"') if 'id="card-q0-o2"' in html else None]
    assert "Value: a value is letters" in row and "Key: key &#x27;1&#x27; already chooses option 1" in row


def test_the_editor_saves_whether_a_question_is_adjudicated_only_where_it_departs(
        alpha, codebook, draft, people, client_for):
    """Issue 35, 4: free text is off by default, choices on; the owner switches either."""
    form = editor_form(spec_of(draft))
    form["op"] = "save"
    assert "q-q5-adjudicated" not in form  # 'note', free text: not ticked
    del form["q-q0-adjudicated"]  # the owner leaves 'label' to the coders
    form["q-q5-adjudicated"] = "on"  # and sends 'note' to the adjudicator
    assert client_for(people["olive"]).post(url(alpha, codebook, "edit/"), form).status_code == 302
    saved = {q["key"]: q.get("adjudicated") for q in spec_of(draft)["questions"]}
    assert saved == {"label": False, "scope": None, "size_b": None, "failures": None,
                     "code_released": None, "note": True}

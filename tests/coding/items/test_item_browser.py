"""The item browser (issue 39, finding 2): every item with its state, filters, keyset
paging, the owners' bulk actions (each audited, all or none) and an item's history."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from coding.items import browse, curate
from coding.labeling import queue
from coding.models import (
    AuditEntry, Coding, Item, ItemChange, OthersWorkRead, Role, StoredDisagreement,
)
from tests import factories
from tests.conftest import page_queries

pytestmark = pytest.mark.django_db


@pytest.fixture
def states(alpha, people):
    """Five items, one in each state a team meets first: in the pool, held, coded 1 of 2,
    in disagreement (both coded, differently), skipped."""
    book = alpha.paper_codebook
    alpha.papers += [factories.paper_item(alpha, book, n) for n in (3, 4)]
    pool, held, coded, split, skipped = alpha.papers
    factories.code(coded, people["cora"])
    factories.code(split, people["cora"], label="analysis")
    factories.code(split, people["cyril"], label="rl_method", scope="general")
    queue.skip(queue.assign(skipped, people["cyril"]), "Not in English")
    queue.assign(held, people["cora"])  # a coder holds one item at a time: the last
    return dict(zip(("pool", "held", "coded", "split", "skipped"), alpha.papers))


def shown_states(client, alpha, **params):
    response = client.get(f"/studies/{alpha.slug}/items/", params)
    assert response.status_code == 200
    return {item.document.key: item.state_words for item in response.context["rows"]}


def test_the_owner_sees_every_item_with_its_state_in_words(client_for, alpha, people, states):
    shown = shown_states(client_for(people["olive"]), alpha)
    assert shown == {
        states["pool"].document.key: "in the pool",
        states["held"].document.key: "held now, coded 0 of 2",
        states["coded"].document.key: "coded 1 of 2",
        states["split"].document.key: "in disagreement on 2 questions, coded 2 of 2",
        states["skipped"].document.key: "skipped, coded 0 of 2",
    }


@pytest.mark.parametrize("state, expected", [
    ("pool", {"pool"}), ("held", {"held"}), ("coded", {"coded", "split"}),
    ("disagreement", {"split"}), ("decided", set()), ("skipped", {"skipped"}),
    ("excluded", set())])
def test_each_state_filter_lists_the_items_that_have_it(client_for, alpha, people, states,
                                                          state, expected):
    shown = shown_states(client_for(people["olive"]), alpha, state=state)
    assert set(shown) == {states[name].document.key for name in expected}


def test_search_coder_and_import_filters(client_for, alpha, people, states):
    client = client_for(people["ada"])
    key = states["coded"].document.key
    assert set(shown_states(client, alpha, q=key)) == {key}
    assert set(shown_states(client, alpha, q="number 4")) == {states["skipped"].document.key}
    assert set(shown_states(client, alpha, coder=people["cyril"].pk)) == {
        states["split"].document.key, states["skipped"].document.key}
    assert shown_states(client, alpha, run=999999) == {}


def test_a_filter_that_is_not_one_is_named_and_the_list_still_shows(client_for, alpha, people,
                                                                      states):
    response = client_for(people["olive"]).get(f"/studies/{alpha.slug}/items/?state=frozen")
    assert response.status_code == 200
    assert "state: frozen is not one of: pool, held" in response.context["filter_error"]
    api = client_for(people["olive"]).get(f"/api/studies/{alpha.slug}/items/?coder=ana")
    assert api.status_code == 400
    assert "ana is not an id" in api.json()["coder"][0]


def test_pages_are_keyset_and_cost_the_same_at_any_depth(client_for, alpha, people):
    for n in range(10, 130):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    client = client_for(people["olive"])
    first = client.get(f"/studies/{alpha.slug}/items/")
    assert len(first.context["rows"]) == browse.PAGE
    after = first.context["next_after"]
    assert after == first.context["rows"][-1].pk
    with CaptureQueriesContext(connection) as shallow:
        client.get(f"/studies/{alpha.slug}/items/", {"after": after})
    second_last = Item.objects.filter(study=alpha).order_by("-pk").values_list("pk", flat=True)[5]
    with CaptureQueriesContext(connection) as deep:
        last = client.get(f"/studies/{alpha.slug}/items/", {"after": second_last})
    assert len(last.context["rows"]) == 5 and last.context["next_after"] is None
    assert len(deep) == len(shown := shallow.captured_queries) and not any(
        "OFFSET" in q["sql"] for q in shown)


def test_excluding_needs_a_reason_and_takes_the_item_out_of_the_coders_hands(
        client_for, alpha, people, states):
    client = client_for(people["olive"])
    held = states["held"]
    refused = client.post(f"/studies/{alpha.slug}/items/",
                          {"action": "exclude", "items": [held.pk], "reason": ""})
    assert refused.status_code == 400
    assert "Say why" in refused.context["action_errors"]["reason"][0]
    assert Item.objects.get(pk=held.pk).deleted_at is None
    done = client.post(f"/studies/{alpha.slug}/items/",
                       {"action": "exclude", "items": [held.pk], "reason": "A duplicate of 3"})
    assert done.status_code == 302
    held.refresh_from_db()
    assert held.deleted_at is not None and held.excluded_reason == "A duplicate of 3"
    assert queue.current_assignment(alpha, people["cora"]) is None
    assert held.taken == 0
    # It is out of the queue: the coder's next item is another one.
    given = queue.next_item(alpha, people["cora"])
    assert given is None or given.item_id != held.pk
    entry = AuditEntry.objects.get(study=alpha, action="items.exclude")
    assert entry.details == {"items": 1, "reason": "A duplicate of 3"}
    assert entry.actor == people["olive"]
    assert shown_states(client, alpha, state="excluded") == {held.document.key: "excluded"}
    assert held.document.key not in shown_states(client, alpha)


def test_restore_brings_an_excluded_item_back_with_its_codings(alpha, people, states):
    coded = states["coded"]
    curate.apply(alpha, people["olive"], "exclude", [coded.pk], "Wrong language")
    assert not Item.objects.alive().filter(pk=coded.pk).exists()
    curate.apply(alpha, people["olive"], "restore", [coded.pk])
    coded.refresh_from_db()
    assert coded.deleted_at is None and coded.excluded_reason == ""
    assert Coding.objects.filter(assignment__item=coded).count() == 1
    assert list(ItemChange.objects.filter(item=coded).values_list("action", "reason")) == [
        ("items.exclude", "Wrong language"), ("items.restore", "")]


def test_a_batch_with_one_item_it_cannot_apply_to_changes_nothing(alpha, people, states):
    with pytest.raises(curate.ValidationError) as refused:
        curate.apply(alpha, people["olive"], "release", [states["held"].pk, states["pool"].pk])
    assert refused.value.message_dict == {states["pool"].document.key: ["nobody holds it"]}
    assert queue.current_assignment(alpha, people["cora"]).item_id == states["held"].pk
    assert not AuditEntry.objects.filter(action="items.release").exists()
    with pytest.raises(curate.ValidationError) as refused:
        curate.apply(alpha, people["olive"], "exclude", [states["pool"].pk, 10**9], "x")
    assert refused.value.message_dict == {str(10**9): ["no such item in this study"]}


def test_release_ends_a_hold_and_keeps_the_draft(alpha, people, states):
    held = states["held"]
    assignment = queue.current_assignment(alpha, people["cora"])
    assignment.draft = {"values": {"label": "analysis"}}
    assignment.save(update_fields=["draft"])
    curate.apply(alpha, people["olive"], "release", [held.pk])
    assignment.refresh_from_db()
    assert assignment.status == "released" and assignment.draft == {"values": {"label": "analysis"}}
    assert Item.objects.get(pk=held.pk).taken == 0


def test_return_to_the_pool_lets_a_coder_who_skipped_be_given_the_item_again(
        alpha, people, states):
    skipped = states["skipped"]
    left_before = queue.left_for(alpha, people["cyril"], "main")
    curate.apply(alpha, people["olive"], "return", [skipped.pk])
    assert queue.left_for(alpha, people["cyril"], "main") == left_before + 1
    with pytest.raises(curate.ValidationError) as refused:
        curate.apply(alpha, people["olive"], "return", [states["pool"].pk])
    assert "nobody skipped it" in refused.value.message_dict[states["pool"].document.key][0]


def test_calibration_and_sample_actions(alpha, people, states):
    alpha.overlap = 3
    alpha.save(update_fields=["overlap"])
    pool = states["pool"]
    Item.objects.filter(pk=pool.pk).update(in_reliability_sample=False, target=1)
    curate.apply(alpha, people["olive"], "sample", [pool.pk])
    pool.refresh_from_db()
    alpha.refresh_from_db()
    assert pool.in_reliability_sample and pool.target == 3
    assert curate.added_to_sample_by_hand(alpha) == 1
    with pytest.raises(curate.ValidationError):
        curate.apply(alpha, people["olive"], "calibration", [states["coded"].pk])
    curate.apply(alpha, people["olive"], "calibration", [pool.pk])
    assert Item.objects.get(pk=pool.pk).round == "calibration"
    assert ItemChange.objects.filter(item=pool, action="items.calibration").exists()


def test_adjudicators_read_but_only_owners_act(client_for, alpha, people, states):
    client = client_for(people["ada"])
    assert client.get(f"/studies/{alpha.slug}/items/{states['split'].pk}/").status_code == 200
    assert client.post(f"/studies/{alpha.slug}/items/", {
        "action": "exclude", "items": [states["pool"].pk], "reason": "x"}).status_code == 403
    assert client.post(f"/api/studies/{alpha.slug}/items/actions/", {
        "action": "exclude", "items": [states["pool"].pk], "reason": "x"},
        content_type="application/json").status_code == 403
    assert Item.objects.get(pk=states["pool"].pk).deleted_at is None


def test_the_item_page_shows_its_whole_history(client_for, alpha, people, states):
    split = states["split"]
    curate.apply(alpha, people["olive"], "exclude", [split.pk], "Retracted")
    page = client_for(people["olive"]).get(f"/studies/{alpha.slug}/items/{split.pk}/")
    text = page.content.decode()
    assert "Retracted" in text and "cora" in text and "cyril" in text
    assert "RL method" in text and "Analysis" in text  # each coder's answer, by its label
    api = client_for(people["olive"]).get(f"/api/studies/{alpha.slug}/items/{split.pk}/").json()
    assert [c["coder"] for c in api["codings"]] == ["cora", "cyril"]
    assert api["codings"][1]["values"]["label"] == "rl_method"
    assert api["changes"][0]["action"] == "items.exclude"
    assert api["item"]["state"] == "excluded"


def test_a_coder_who_adjudicates_has_read_the_items_the_list_showed(client_for, alpha, people,
                                                                     states):
    """The list tells who coded what; a person who codes here and reads it through another
    role has read others' work on those items, and a later revision of theirs is informed."""
    factories.member(alpha, people["ada"], Role.CODER)
    client_for(people["ada"]).get(f"/studies/{alpha.slug}/items/", {"state": "coded"})
    read = set(OthersWorkRead.objects.filter(coder=people["ada"], kind="items")
               .values_list("item_id", flat=True))
    assert read == {states["coded"].pk, states["split"].pk}
    coding = factories.code(states["coded"], people["ada"])
    assert coding.phase == Coding.Phase.INFORMED


def test_the_api_lists_states_and_acts(client_for, alpha, people, states):
    client = client_for(people["olive"])
    listed = client.get(f"/api/studies/{alpha.slug}/items/", {"state": "disagreement"}).json()
    assert [(r["document_key"], r["state"], r["submitted"]) for r in listed["results"]] == [
        (states["split"].document.key, "disagreement", 2)]
    done = client.post(f"/api/studies/{alpha.slug}/items/actions/", {
        "action": "exclude", "items": [states["pool"].pk], "reason": "Off topic"},
        content_type="application/json")
    assert done.status_code == 200
    assert done.json() == {"action": "exclude", "changed": [states["pool"].document.key]}
    refused = client.post(f"/api/studies/{alpha.slug}/items/actions/", {
        "action": "exclude", "items": [states["coded"].pk]}, content_type="application/json")
    assert refused.status_code == 400 and "reason" in refused.json()


def test_the_command_lists_and_acts(alpha, people, states, capsys):
    call_command("items", alpha.slug, "--state", "held")
    out = capsys.readouterr().out
    assert states["held"].document.key in out and "held now" in out
    call_command("items", alpha.slug, "--do", "exclude", "--keys", states["pool"].document.key,
                 "--reason", "Duplicate", "--user", "olive")
    assert Item.objects.get(pk=states["pool"].pk).excluded_reason == "Duplicate"
    with pytest.raises(CommandError, match="nobody holds it"):
        call_command("items", alpha.slug, "--do", "release", "--ids", str(states["coded"].pk))
    with pytest.raises(CommandError, match="--state"):
        call_command("items", alpha.slug, "--state", "nope")


def test_decided_items_read_as_decided(client_for, alpha, people, states):
    StoredDisagreement.objects.filter(item=states["split"]).update(decided=True)
    assert shown_states(client_for(people["olive"]), alpha, state="decided") == {
        states["split"].document.key: "decided, coded 2 of 2"}


def test_the_item_pages_cost_the_same_queries_at_any_size(client_for, alpha, people, states):
    client = client_for(people["olive"])
    urls = [f"/studies/{alpha.slug}/items/", f"/studies/{alpha.slug}/items/?state=coded",
            f"/studies/{alpha.slug}/items/{states['split'].pk}/",
            f"/api/studies/{alpha.slug}/items/", f"/api/studies/{alpha.slug}/items/?state=held",
            f"/api/studies/{alpha.slug}/items/{states['split'].pk}/"]

    small = [page_queries(client, url) for url in urls]
    for n in range(10, 70):
        item = factories.paper_item(alpha, alpha.paper_codebook, n)
        factories.code(item, people["cyril"], label="analysis", code_released="yes" if n % 2 else "no")
    assert [page_queries(client, url) for url in urls] == small


def test_a_coder_who_still_has_an_excluded_item_open_cannot_record_a_coding_on_it(
        alpha, people, states):
    """An old tab: the owner excludes the item cora holds; her submission is refused, her
    answers kept as the item's draft, and nothing is recorded."""
    from coding.actions.submit import submit
    from coding.labeling.codings import NotHeld

    held = states["held"]
    assignment = queue.current_assignment(alpha, people["cora"])
    curate.apply(alpha, people["olive"], "exclude", [held.pk], "Out of scope")
    values = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
    with pytest.raises(NotHeld, match="excluded this item"):
        submit(assignment, values)
    assignment.refresh_from_db()
    assert assignment.draft["values"] == values
    assert not Coding.objects.filter(assignment=assignment).exists()

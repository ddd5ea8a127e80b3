"""The assignment queue: who gets which item, how many coders per item, leases, rounds."""

from datetime import timedelta

import pytest
from django.utils import timezone

from coding.actions import sample
from coding.labeling import queue
from coding.models import Assignment, Item, Membership, Role
from tests import factories


@pytest.fixture
def trio(alpha, people):
    """A third coder, so an item with overlap 2 can turn one away."""
    factories.member(alpha, people["otto"], Role.CODER)
    return [people["cora"], people["cyril"], people["otto"]]


def code_next(study, coder, **values):
    assignment = queue.next_item(study, coder)
    return assignment and factories.code(assignment.item, coder, **values)


def test_next_item_is_held_until_submitted(alpha, people):
    first = queue.next_item(alpha, people["cora"])
    assert queue.next_item(alpha, people["cora"]).pk == first.pk
    factories.code(first.item, people["cora"])
    assert queue.next_item(alpha, people["cora"]).item_id != first.item_id


def test_coder_never_gets_an_item_they_coded_or_skipped(alpha, people):
    seen = set()
    skipped = queue.next_item(alpha, people["cora"])
    queue.skip(skipped, "Not in English")
    seen.add(skipped.item_id)
    while (assignment := queue.next_item(alpha, people["cora"])) is not None:
        assert assignment.item_id not in seen
        seen.add(assignment.item_id)
        factories.code(assignment.item, people["cora"])
    assert seen == {item.pk for item in alpha.papers}


def test_an_item_never_gets_more_coders_than_the_overlap(alpha, trio):
    alpha.papers[1].delete()
    alpha.papers[2].delete()
    only = alpha.papers[0]
    assert queue.next_item(alpha, trio[0]).item_id == only.pk
    assert queue.next_item(alpha, trio[1]).item_id == only.pk
    assert queue.next_item(alpha, trio[2]) is None
    only.refresh_from_db()
    assert only.taken == 2


def test_a_lapsed_lease_returns_the_item_to_the_pool(alpha, trio):
    for item in alpha.papers[1:]:
        item.delete()
    held = queue.next_item(alpha, trio[0])
    queue.next_item(alpha, trio[1])
    Assignment.objects.filter(pk=held.pk).update(leased_until=timezone.now() - timedelta(minutes=1))
    given = queue.next_item(alpha, trio[2])
    assert given is not None and given.item_id == held.item_id
    held.refresh_from_db()
    assert held.status == Assignment.Status.RELEASED


def test_a_coder_whose_lease_lapsed_cannot_overfill_the_item(alpha, trio):
    from coding.actions.submit import submit
    from coding.labeling.codings import NotHeld

    for item in alpha.papers[1:]:
        item.delete()
    held = queue.next_item(alpha, trio[0])
    queue.next_item(alpha, trio[1])
    Assignment.objects.filter(pk=held.pk).update(leased_until=timezone.now() - timedelta(minutes=1))
    queue.next_item(alpha, trio[2])
    held.refresh_from_db()
    with pytest.raises(NotHeld, match="went back to the pool"):
        submit(held, {"label": "analysis", "size_b": 1, "failures": ["none"], "code_released": "no"})
    assert not held.codings.exists()


def test_working_on_an_item_extends_its_lease(alpha, people):
    assignment = queue.next_item(alpha, people["cora"])
    Assignment.objects.filter(pk=assignment.pk).update(leased_until=timezone.now() + timedelta(seconds=5))
    queue.next_item(alpha, people["cora"])
    assignment.refresh_from_db()
    assert assignment.leased_until > timezone.now() + timedelta(minutes=alpha.lease_minutes - 1)


def test_skipping_needs_a_reason_and_frees_the_slot(alpha, people):
    assignment = queue.next_item(alpha, people["cora"])
    with pytest.raises(ValueError, match="why"):
        queue.skip(assignment, "  ")
    assert queue.skip(assignment, "Duplicate of another paper")
    assignment.item.refresh_from_db()
    assert assignment.item.taken == 0


def test_each_coder_has_their_own_reproducible_order(alpha, people):
    def order_of(coder):
        return [queue.unit_hash(alpha.queue_seed, i.document_id) for i in alpha.papers], \
            queue.coder_offset(alpha, coder)

    assert order_of(people["cora"]) == order_of(people["cora"])
    first = {name: queue.next_item(alpha, people[name]).item_id for name in ("cora", "cyril")}
    keys = {i.pk: i.random_key for i in Item.objects.filter(study=alpha)}
    for name, item_id in first.items():
        offset = queue.coder_offset(alpha, people[name])
        above = [k for k in keys.values() if k >= offset]
        expected = min(above) if above else min(keys.values())
        assert keys[item_id] == expected


def test_higher_priority_items_come_first(alpha, people):
    Item.objects.filter(pk=alpha.papers[2].pk).update(priority=5)
    assert queue.next_item(alpha, people["cora"]).item_id == alpha.papers[2].pk


def test_reliability_sample_gives_overlap_coders_to_sampled_items_only(alpha):
    for n in range(3, 10):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    chosen = sample.draw_reliability_sample(alpha, share=0.5, seed=7)
    items = Item.objects.filter(study=alpha)
    assert len(chosen) == 5
    assert sorted(items.values_list("target", flat=True)) == [1] * 5 + [2] * 5
    assert set(items.filter(target=2).values_list("pk", flat=True)) == chosen
    assert alpha.reliability_sample["seed"] == 7
    assert sample.draw_reliability_sample(alpha, share=0.5, seed=7) == chosen


def test_stratified_sample_keeps_each_stratum_share(alpha):
    from ingest.models import Document

    for n in range(3, 12):
        factories.paper_item(alpha, alpha.paper_codebook, n)
    for n in range(20, 24):
        document = factories.thread(n)
        queue.add_item(alpha, document, alpha.paper_codebook)
    chosen = sample.draw_reliability_sample(alpha, count=8, stratify_by="kind", seed=1)
    kinds = list(Item.objects.filter(pk__in=chosen).values_list("document__kind", flat=True))
    assert (kinds.count(Document.Kind.PAPER), kinds.count(Document.Kind.THREAD)) == (6, 2)


def test_a_sample_larger_than_the_pool_is_refused(alpha):
    with pytest.raises(ValueError, match="between 0 and 3"):
        sample.draw_reliability_sample(alpha, count=4)


def test_changing_the_overlap_changes_what_items_need(alpha, people, client_for):
    client_for(people["olive"]).patch(f"/api/studies/{alpha.slug}/", {"overlap": 3},
                                      content_type="application/json")
    assert set(Item.objects.filter(study=alpha).values_list("target", flat=True)) == {3}


@pytest.fixture
def calibrated(alpha, people):
    """One calibration item with reference answers, before alpha's main round."""
    item = factories.paper_item(alpha, alpha.paper_codebook, 50, round=Item.Round.CALIBRATION,
                                reference_values={"label": "rl_method", "code_released": "yes"})
    alpha.calibration_item = item
    return alpha


def test_calibration_comes_before_main_coding(calibrated, people):
    assert queue.next_item(calibrated, people["cora"]).item_id == calibrated.calibration_item.pk


def test_every_coder_codes_the_calibration_items(calibrated, trio):
    for coder in trio:
        assert queue.next_item(calibrated, coder).item_id == calibrated.calibration_item.pk


def test_a_coder_below_the_calibration_threshold_waits_for_the_owner(calibrated, people):
    cora = people["cora"]
    factories.code(queue.next_item(calibrated, cora).item, cora, label="rl_method", scope="general")
    assert queue.calibration_score(calibrated, cora) == 0.5
    assert queue.next_item(calibrated, cora) is None
    Membership.objects.filter(study=calibrated, user=cora).update(calibration_waived=True)
    assert queue.next_item(calibrated, cora).item.round == Item.Round.MAIN


def test_a_coder_who_passes_calibration_goes_on_to_main_coding(calibrated, people):
    cyril = people["cyril"]
    factories.code(queue.next_item(calibrated, cyril).item, cyril, label="rl_method",
                   scope="general", code_released="yes")
    assert queue.calibration_score(calibrated, cyril) == 1.0
    assert queue.next_item(calibrated, cyril).item.round == Item.Round.MAIN


def test_queue_summary_counts_each_coders_work(alpha, people):
    code_next(alpha, people["cora"])
    queue.skip(queue.next_item(alpha, people["cora"]), "Off topic")
    queue.next_item(alpha, people["cyril"])
    summary = queue.queue_summary(alpha)
    rows = {row["coder"].username: row for row in summary["coders"]}
    assert (rows["cora"]["done"], rows["cora"]["skipped"], rows["cora"]["active"]) == (1, 1, 0)
    assert rows["cyril"]["active"] == 1
    main = next(r for r in summary["rounds"] if r["round"] == "main")
    assert (main["items"], main["complete"], main["left"]) == (3, 0, 3)


@pytest.mark.parametrize("command", ["queue_status", "draw_sample", "settle_decisions",
                                     "export_dataset", "agreement_report"])
def test_a_command_given_an_unknown_study_names_it(db, command):
    from django.core.management import CommandError, call_command

    extra = ["--count", "1"] if command == "draw_sample" else []
    with pytest.raises(CommandError, match="No study 'no-such-study'"):
        call_command(command, "no-such-study", *extra)

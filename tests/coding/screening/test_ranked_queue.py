"""The queue of a screening study serves each screener by a model of their own labels
(issue 37): random order until they have an include and an exclude, then the highest-ranked
record they have not screened, marked so; a screener's order never moves with another
screener's labels."""

import numpy as np

from coding.actions.submit import record_coding
from coding.labeling import queue
from coding.models import Assignment, ScreeningRanking
from coding.screening import rankings
from coding.screening.setup import configure
from tests.coding.screening.conftest import answer
from workbench.models import Job


def screen(study, coder, relevant, *, label=None, retrain=True):
    """The screener takes their next record and labels it (as it is, or `label(item)`)."""
    assignment = queue.next_item(study, coder)
    is_relevant = assignment.item.pk in relevant if label is None else label(assignment.item)
    record_coding(assignment, answer(is_relevant))
    if retrain:
        rankings.retrain(study, coder)
    return assignment


def test_records_come_in_random_order_until_a_screener_has_an_include_and_an_exclude(
        screening, people):
    study, relevant = screening
    cora = people["cora"]
    first = screen(study, cora, relevant, label=lambda item: False)
    assert first.served == "unranked" and first.served_rank is None
    assert not ScreeningRanking.objects.filter(study=study, coder=cora).exists()
    # Only excludes so far: still no model.
    second = screen(study, cora, relevant, label=lambda item: False)
    assert second.served == "unranked"
    assert not ScreeningRanking.objects.filter(study=study, coder=cora).exists()


def test_once_ranked_the_screener_gets_the_relevant_records_first(screening, people):
    study, relevant = screening
    cora = people["cora"]
    # One include and one exclude, taken by hand, are enough to rank.
    include = next(pk for pk in sorted(relevant))
    exclude = next(pk for pk in range(min(relevant) - 5, max(relevant) + 5)
                   if pk not in relevant and study.items.filter(pk=pk).exists())
    for pk, value in ((include, True), (exclude, False)):
        record_coding(queue.assign(study.items.get(pk=pk), cora), answer(value))
    rankings.retrain(study, cora)
    served = [screen(study, cora, relevant) for _ in range(len(relevant) - 1)]
    assert {a.served for a in served} == {"ranked"}
    assert [a.served_rank for a in served] == [1] * len(served)  # retrained after each
    # Every relevant record came before any other: the order is the model's, not random.
    assert all(a.item.pk in relevant for a in served)
    assert Assignment.objects.filter(coder=cora, served="ranked").count() == len(served)


def test_a_screeners_order_never_moves_with_another_screeners_labels(screening, people):
    study, relevant = screening
    cora, cyril = people["cora"], people["cyril"]
    include = min(relevant)
    exclude = min(pk for pk in study.items.values_list("pk", flat=True) if pk not in relevant)
    for pk, value in ((include, True), (exclude, False)):
        record_coding(queue.assign(study.items.get(pk=pk), cora), answer(value))
    for _ in range(5):
        screen(study, cora, relevant)
    before = ScreeningRanking.objects.get(study=study, coder=cora)
    order_before = np.frombuffer(bytes(before.head), dtype="<i8").tolist()

    # Cyril screens a dozen records with labels that contradict Cora's (every relevant
    # one excluded, the rest included), then with the opposite labels: Cora's ranking,
    # retrained after each, and the record she is served next stay the same.
    nexts = []
    for flip in (True, False):
        for _ in range(6):
            screen(study, cyril, relevant, label=lambda item: (item.pk in relevant) != flip)
        rankings.retrain(study, cora)
        after = ScreeningRanking.objects.get(study=study, coder=cora)
        assert np.frombuffer(bytes(after.head), dtype="<i8").tolist() == order_before
        held = queue.next_item(study, cora)
        nexts.append(held.item.pk)
        queue.release([(held.pk, held.item_id)])
    assert nexts[0] == nexts[1] == order_before[0]


def test_a_submission_schedules_the_screeners_retrain_and_one_job_absorbs_many(
        screening, people, django_capture_on_commit_callbacks, settings):
    study, relevant = screening
    cora = people["cora"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assignment = queue.next_item(study, cora)
        record_coding(assignment, answer(True))
        from coding.actions.submit import submit
        other = queue.next_item(study, people["cyril"])
        submit(other, answer(False))
    for callback in callbacks:
        callback()
    jobs = Job.objects.filter(kind="screening_rank")
    assert [j.params["coder"] for j in jobs] == [people["cyril"].pk]
    # A second label while that job waits adds no job.
    assert rankings.schedule(study, people["cyril"]) is None
    assert rankings.schedule(study, cora).params == {"study": study.pk, "coder": cora.pk}


def test_a_stopped_screening_serves_nothing_more(screening, people):
    study, relevant = screening
    study.screening = {**study.screening, "stopped": {"at": "2026-12-06T00:00:00+00:00"}}
    study.save()
    assert queue.next_item(study, people["cora"]) is None


def test_the_random_share_is_served_from_the_random_walk_and_marked(people):
    from tests.coding.screening.conftest import make_screening

    study, relevant = make_screening(people, size=40)
    configure(study, question="decision", include=["include"], random_share=0.5)
    cora = people["cora"]
    include = min(relevant)
    exclude = min(pk for pk in study.items.values_list("pk", flat=True) if pk not in relevant)
    for pk, value in ((include, True), (exclude, False)):
        record_coding(queue.assign(study.items.get(pk=pk), cora), answer(value))
    rankings.retrain(study, cora)
    served = [screen(study, cora, relevant, retrain=False).served for _ in range(30)]
    assert set(served) == {"ranked", "random"}
    assert 5 <= served.count("random") <= 25


def test_the_feature_cache_keeps_a_row_per_content_whatever_the_ids(screening, people):
    """Features are cached by each snapshot's content hash: a database rebuilt with the same
    ids but other text (a test's rolled-back rows, a restore) never reads another's row."""
    study, _ = screening
    first, second = [item.snapshot for item in study.items.order_by("pk")[:2]]
    both = rankings.features(study, [(first.pk, first.sha256), (second.pk, second.sha256)])
    assert both.shape[0] == 2 and (both[0] != both[1]).nnz
    # The same content under another id reads the same row; the order asked is kept.
    again = rankings.features(study, [(second.pk, second.sha256), (999_999, first.sha256)])
    assert (again[0] != both[1]).nnz == 0 and (again[1] != both[0]).nnz == 0


def test_with_one_screener_per_record_a_ranking_leaves_out_what_others_took(people):
    """Overlap 1: records another screener took are out of a screener's next ranking (their
    assignments, not their labels), so the queue does not walk past them."""
    from tests.coding.screening.conftest import make_screening

    study, relevant = make_screening(people, size=40, overlap=1)
    cora, cyril = people["cora"], people["cyril"]
    include = min(relevant)
    exclude = min(pk for pk in study.items.values_list("pk", flat=True) if pk not in relevant)
    for pk, value in ((include, True), (exclude, False)):
        record_coding(queue.assign(study.items.get(pk=pk), cora), answer(value))
    taken = [screen(study, cyril, relevant, retrain=False).item_id for _ in range(6)]
    ranking = rankings.retrain(study, cora)
    order = np.frombuffer(bytes(ranking.head), dtype="<i8").tolist()
    assert not set(order) & set(taken) and not set(order) & {include, exclude}
    assert ranking.ranked == 40 - 6 - 2

"""How far screening has come: per screener and for the study, what was screened and found,
the recall curve, the excludes since the last include, the stopping rule and the recall
estimated from the records served at random; and the owner's stop.

Read from the screeners' codings of the screening question in one pass (the first
submission of a record places it in the screener's order; its latest revision is the
label), so the figures are those of the labels as they stand. The study's order is the
order records were first screened by anyone; a record counts as included for the study when
its decision says include, or, undecided, when any screener included it: a conflict counts
as found, which keeps the stopping rule on the safe side.
"""

from django.utils import timezone
from django.utils.translation import gettext

from coding.access.archive import check_open
from coding.access.audit import record, target_of
from coding.models import Coding, Decision, Item, Membership, Role
from coding.screening import stopping
from coding.screening.setup import is_include, settings_of
from workbench import jobs

CURVE_POINTS = 200  # points of a recall curve sent to a page


def _sequences(study, setup):
    """{coder id: [(item, label, served)]} in each screener's order, and the study's order."""
    per_coder, first_seen, study_label = {}, {}, {}
    latest = {}
    rows = (Coding.objects.filter(study=study, assignment__item__deleted_at__isnull=True,
                                  assignment__item__round=Item.Round.MAIN)
            .order_by("pk").values_list("assignment_id", "assignment__coder_id",
                                        "assignment__item_id", "values", "assignment__served"))
    order = {}
    for assignment, coder, item, values, served in rows.iterator(chunk_size=5000):
        value = (values or {}).get(setup["question"])
        if value is None:
            continue
        if assignment not in order:
            order[assignment] = (coder, item, served)
            first_seen.setdefault(item, len(first_seen))
        latest[assignment] = int(is_include(value, setup["include"]))
    for assignment, (coder, item, served) in order.items():
        per_coder.setdefault(coder, []).append((item, latest[assignment], served))
        study_label[item] = max(study_label.get(item, 0), latest[assignment])
    decided = (Decision.objects.current().filter(item__study=study,
                                                 question_key=setup["question"])
               .values_list("item_id", "value"))
    for item, value in decided:
        if item in study_label and value is not None:
            study_label[item] = int(is_include(value, setup["include"]))
    served_at_random = {}
    for rows_of in per_coder.values():
        for item, _, served in rows_of:
            if served == "random":
                served_at_random[item] = True
    study_order = [(item, study_label[item], "random" if served_at_random.get(item) else "")
                   for item in sorted(first_seen, key=first_seen.get)]
    return per_coder, study_order


def _figures(sequence, total, setup):
    labels = [label for _, label, _ in sequence]
    found = sum(labels)
    random_labels = [label for _, label, served in sequence if served == "random"]
    test = stopping.stop_test(labels, total, setup["target_recall"], setup["confidence"])
    curve = stopping.curve(labels)
    step = max(1, len(curve) // CURVE_POINTS)
    return {
        "screened": len(labels), "includes": found, "excludes": len(labels) - found,
        "not_screened": max(total - len(labels), 0),
        "since_last_include": stopping.since_last_include(labels),
        "curve": [[i + 1, int(curve[i])] for i in range(0, len(curve), step)]
        + ([[len(curve), int(curve[-1])]] if len(curve) and (len(curve) - 1) % step else []),
        "test": test,
        "random": stopping.random_estimate(found, max(total - len(labels), 0),
                                           len(random_labels), sum(random_labels),
                                           setup["confidence"]),
    }


def progress(study):
    """{"settings", "total", "study": figures, "screeners": [{"coder", **figures}]}."""
    setup = settings_of(study)
    total = Item.objects.alive().filter(study=study, round=Item.Round.MAIN).count()
    if not setup["question"]:
        return {"settings": setup, "total": total, "study": None, "screeners": []}
    per_coder, study_order = _sequences(study, setup)
    coders = (Membership.objects.filter(study=study, role=Role.CODER)
              .select_related("user").order_by("user__username"))
    return {
        "settings": setup, "total": total, "study": _figures(study_order, total, setup),
        "screeners": [{"coder": m.user, **_figures(per_coder.get(m.user_id, []), total, setup)}
                      for m in coders],
    }


def stop(study, user):
    """The owner stops screening: recorded with the study's estimate at that moment; the
    queue serves no more records of the main round."""
    check_open(study)
    figures = progress(study)["study"]
    if figures is None:
        raise ValueError(gettext("The study does not screen: choose its screening question "
                                 "first."))
    estimate = {key: figures[key] for key in ("screened", "includes", "not_screened",
                                              "since_last_include", "test", "random")}
    study.screening = {**study.screening, "stopped": {
        "at": timezone.now().isoformat(), "by": getattr(user, "username", None),
        "estimate": estimate}}
    study.save(update_fields=["screening"])
    record(user, study, "screening.stop", target_of("study", name=study.name),
           screened=figures["screened"], includes=figures["includes"],
           p=round(figures["test"]["p"], 4))
    return study.screening["stopped"]


def resume(study, user):
    """Undo a stop: the queue serves the records left again."""
    check_open(study)
    stopped = (study.screening or {}).pop("stopped", None)
    study.save(update_fields=["screening"])
    record(user, study, "screening.resume", target_of("study", name=study.name),
           stopped_at=(stopped or {}).get("at"))
    return stopped


MAX_SEEDS = 20


def replay_study(study, user, *, seeds=5, model=None):
    """Start a replay of the study's decided records as a job (screening_simulate): what
    the ranking would have saved on this study; ValueError when it cannot run."""
    from coding.screening.model import MODELS

    setup = settings_of(study)
    if not setup["question"]:
        raise ValueError(gettext("The study does not screen: choose its screening question "
                                 "first."))
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= MAX_SEEDS:
        raise ValueError(gettext("seeds: a whole number from 1 to %(most)s.")
                         % {"most": MAX_SEEDS})
    if model is not None and model not in MODELS:
        raise ValueError(gettext("model: one of %(models)s.") % {"models": ", ".join(MODELS)})
    return jobs.enqueue("screening_simulate", {"study": study.pk, "seeds": seeds,
                                               "model": model or setup["model"]}, user=user)

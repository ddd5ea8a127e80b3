"""Job handlers of the coding app (see workbench.jobs)."""

from coding.demo.study import load_demo
from coding.model_raters import runs as model_runs  # noqa: F401  registers model_run
from coding.raters import imports as raters_import  # noqa: F401  registers import_rater_codings
from coding.raters import qdpx as raters_qdpx  # noqa: F401  registers import_qdpx
from workbench.jobs import job_handler


@job_handler("load_demo")
def run_load_demo(job, report):
    return load_demo(report=report, seed=job.params.get("seed", 0))


@job_handler("agreement")
def run_agreement(job, report):
    from coding.agreement.snapshots import take_snapshot
    from coding.models import Study

    study = Study.objects.get(pk=job.params["study"])
    return take_snapshot(study, force=job.params.get("force", False), progress=report)


@job_handler("agreement_estimate")
def run_agreement_estimate(job, report):
    from coding.agreement.estimates import estimate
    from coding.models import Study

    return estimate(Study.objects.get(pk=job.params["study"]))


@job_handler("rebuild_disagreements")
def run_rebuild_disagreements(job, report):
    """After an overlap change (coding.labeling.queue.sync_targets): the study's stored
    disagreements, rebuilt batch by batch while coders go on working."""
    from coding.adjudication.decisions import rebuild_disagreements
    from coding.models import Study

    study = Study.objects.get(pk=job.params["study"])
    rows = rebuild_disagreements(study, progress=lambda done, total: report(
        done, total, f"{done:,} of {total:,} items"))
    return {"study": study.slug, "disagreements": rows}


@job_handler("screening_rank")
def run_screening_rank(job, report):
    """After a screener's label (coding.screening.rankings.schedule): their ranking, retrained
    on their own labels while the queue serves the previous one."""
    from django.contrib.auth import get_user_model

    from coding.models import Study
    from coding.screening.rankings import run

    study = Study.objects.get(pk=job.params["study"])
    coder = get_user_model().objects.get(pk=job.params["coder"])
    return run(study, coder, report=report)


@job_handler("screening_simulate")
def run_screening_simulate(job, report):
    """Replay a study's decided records as a screener would (coding.screening.simulate)."""
    from django.utils.translation import gettext

    from coding.models import Study
    from coding.screening.setup import settings_of
    from coding.screening.simulate import labelled_study, simulate, summary
    from workbench.jobs import JobError

    study = Study.objects.get(pk=job.params["study"])
    setup = settings_of(study)
    texts, labels, _ids = labelled_study(study, setup["question"], setup["include"])
    if len(set(labels.tolist())) < 2 or labels.sum() < 1 or (labels == 0).sum() < 1:
        raise JobError(gettext("A replay needs decided records both included and excluded."))
    seeds = job.params.get("seeds", 1)
    runs = []
    for seed in range(seeds):
        report(seed, seeds, f"replay {seed + 1} of {seeds}")
        runs.append(simulate(texts, labels, seed=seed, model=job.params.get("model",
                                                                            setup["model"]),
                             target=setup["target_recall"], confidence=setup["confidence"]))
    return summary(runs)

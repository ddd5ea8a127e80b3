"""Job handlers of the coding app (see workbench.jobs)."""

from workbench.jobs import job_handler

from .demo import load_demo


@job_handler("load_demo")
def run_load_demo(job, report):
    return load_demo(report=report, seed=job.params.get("seed", 0))

from celery import shared_task

from . import jobs


@shared_task(name="workbench.run_job")
def run_job(job_id):
    jobs.run(job_id)

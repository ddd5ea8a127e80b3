from django.apps import AppConfig


class CodingConfig(AppConfig):
    name = "coding"
    verbose_name = "Coding studies"

    def ready(self):
        from celery.signals import worker_init

        # Importing these registers the job handlers (workbench.jobs.job_handler).
        from coding import jobs  # noqa: F401
        from coding.catalog import landings  # noqa: F401
        from coding.export import jobs as export_jobs  # noqa: F401
        from coding.labeling import pool  # noqa: F401
        from coding.labeling.metrics import codings_per_minute
        from coding.studies import backup  # noqa: F401
        from workbench.metrics import add_figure

        add_figure(codings_per_minute)
        worker_init.connect(load_report_libraries, weak=False)


def load_report_libraries(**kwargs):
    """What the agreement job imports on first use (statsmodels, about a second), imported
    as a Celery worker starts, before it takes a job: a pool's processes start with it.
    Web processes and commands never load it."""
    from coding.agreement.coefficients import load_statsmodels

    load_statsmodels()

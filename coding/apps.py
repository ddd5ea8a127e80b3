from django.apps import AppConfig


class CodingConfig(AppConfig):
    name = "coding"
    verbose_name = "Coding studies"

    def ready(self):
        from . import jobs  # noqa: F401  registers the job handlers
        from . import backup, landings, pool  # noqa: F401
        from .export import jobs as export_jobs  # noqa: F401

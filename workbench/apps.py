from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    name = "workbench"
    verbose_name = "Workbench"

    def ready(self):
        from . import schema  # noqa: F401  registers the token scheme with drf-spectacular
        from . import worker  # noqa: F401  connects the worker's job sweep to its signals

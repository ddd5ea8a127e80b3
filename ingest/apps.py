from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "ingest"
    verbose_name = "Ingested documents"

    def ready(self):
        from . import jobs  # noqa: F401  registers the "ingest" job handler

"""Creating, copying, renaming, archiving and restoring studies; the setup checklist and audit trail: REST API."""

urlpatterns = []

"""Codebooks as files: JSON and YAML (one versioned schema) and REFI-QDA .qdc: REST API."""

urlpatterns = []

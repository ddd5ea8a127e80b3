"""Members and roles, and one-time invitation links: REST API."""

urlpatterns = []

"""Members and roles, and one-time invitation links: pages."""

urlpatterns = []

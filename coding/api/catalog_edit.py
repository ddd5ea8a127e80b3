"""Editing the method catalog (methods, option names) and frameworks: REST API."""

urlpatterns = []

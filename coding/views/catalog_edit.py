"""Editing the method catalog (methods, option names) and frameworks: pages."""

urlpatterns = []

"""Calibration items, reference answers, pass threshold, who passed: REST API."""

urlpatterns = []

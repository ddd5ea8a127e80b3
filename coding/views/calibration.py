"""Calibration items, reference answers, pass threshold, who passed: pages."""

urlpatterns = []

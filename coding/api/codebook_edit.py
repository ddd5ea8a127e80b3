"""The codebook editor: drafts, publishing, version diffs, live preview: REST API."""

urlpatterns = []

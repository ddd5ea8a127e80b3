"""The codebook editor: drafts, publishing, version diffs, live preview: pages."""

urlpatterns = []

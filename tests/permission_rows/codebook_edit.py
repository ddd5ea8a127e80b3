"""Permission rows: The codebook editor: drafts, publishing, version diffs, live preview."""

ROWS = {}


def values(world, alpha, people):
    return {}

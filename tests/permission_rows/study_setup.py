"""Permission rows: Creating, copying, renaming, archiving and restoring studies; the setup checklist and audit trail."""

ROWS = {}


def values(world, alpha, people):
    return {}

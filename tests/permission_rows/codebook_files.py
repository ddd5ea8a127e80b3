"""Permission rows: Codebooks as files: JSON and YAML (one versioned schema) and REFI-QDA .qdc."""

ROWS = {}


def values(world, alpha, people):
    return {}

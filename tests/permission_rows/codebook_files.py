"""Permission rows: Codebooks as files: JSON and YAML (one versioned schema) and REFI-QDA .qdc.

Downloading follows the codebook page: every member (coders too) may read any version.
Importing changes the study's setup: owners only."""

ROWS = {
    "studies/<slug:slug>/codebooks/<int:codebook_id>/v<int:number>/file/<str:fmt>/":
        {"GET": "LNYYYYY"},
    "studies/<slug:slug>/codebooks/import/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/codebooks/<int:codebook_id>/versions/<int:number>/file/":
        {"GET": "LNYYYYY"},
    # The file format's JSON Schema describes no study's data: anyone signed in reads it.
    "api/codebook-format/v1/": {"GET": "LYYYYYY"},
    # The owner's empty POST is a 400 naming what is missing: it reached the view's work.
    "api/studies/<slug:slug>/codebooks/import/": {"POST": "LNFFFFY"},
}


def values(world, alpha, people):
    return {"fmt": "yaml"}

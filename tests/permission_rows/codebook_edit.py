"""Permission rows: The codebook editor: drafts, publishing, version diffs, live preview.

Every member reads the codebook list and any version with its diff; only owners make,
edit, preview and publish. The paper codebook `codebook_id` gets a draft v2 for each test
(values below), so the editor's rows meet a draft to edit.
"""

from coding.codebooks.versions import draft_new_version

OWNER_ONLY = "LNFFFFY"

ROWS = {
    "studies/<slug:slug>/codebooks/": {"GET": "LNYYYYY", "POST": OWNER_ONLY},
    "studies/<slug:slug>/codebooks/<int:codebook_id>/draft/": {"POST": OWNER_ONLY},
    "studies/<slug:slug>/codebooks/<int:codebook_id>/edit/": {"GET": OWNER_ONLY,
                                                               "POST": OWNER_ONLY},
    "studies/<slug:slug>/codebooks/<int:codebook_id>/edit/preview/": {"POST": OWNER_ONLY},
    "studies/<slug:slug>/codebooks/<int:codebook_id>/publish/": {"GET": OWNER_ONLY,
                                                                  "POST": OWNER_ONLY},
    # Replaces the table's GET-only row: every member reads, owners make codebooks.
    "api/studies/<slug:slug>/codebooks/": {"GET": "LNYYYYY", "POST": OWNER_ONLY},
    "api/studies/<slug:slug>/codebooks/<int:codebook_id>/draft/": {
        "GET": OWNER_ONLY, "PUT": OWNER_ONLY, "POST": OWNER_ONLY},
    "api/studies/<slug:slug>/codebooks/<int:codebook_id>/publish/": {"POST": OWNER_ONLY},
    "api/studies/<slug:slug>/codebooks/<int:codebook_id>/versions/<int:number>/": {
        "GET": "LNYYYYY"},
}


def values(world, alpha, people):
    draft_new_version(alpha.paper_codebook, people["olive"])
    return {}

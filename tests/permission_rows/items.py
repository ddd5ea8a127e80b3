"""Permission rows: the item browser (issue 39, finding 2).

Owners and adjudicators read the items with their states and each item's history; only
owners act on items. Coders and viewers are refused (a coder sees items one at a time,
blinded, through the queue; the items API list stays open to viewers, as before)."""

ROWS = {
    "studies/<slug:slug>/items/": {"GET": "LNFFFYY", "POST": "LNFFFFY"},
    "studies/<slug:slug>/items/<int:item_id>/": {"GET": "LNFFFYY"},
    "api/studies/<slug:slug>/items/<int:item_id>/": {"GET": "LNFFFYY"},
    "api/studies/<slug:slug>/items/actions/": {"POST": "LNFFFFY"},
}

"""Permission rows: the inclusion analysis (issue 17) and inclusion lists (issue 40).

Inclusion is blinded from coders, so the analysis is read as the agreement report is:
owners, adjudicators and viewers; coders are refused. Only owners import lists."""

ROWS = {
    "studies/<slug:slug>/inclusion/": {"GET": "LNYFFYY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/inclusion/": {"GET": "LNYFFYY"},
    "api/studies/<slug:slug>/inclusion/lists/": {"GET": "LNYFFYY", "POST": "LNFFFFY"},
}

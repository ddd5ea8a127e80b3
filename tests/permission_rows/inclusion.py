"""Permission rows: the inclusion analysis (issue 17).

Inclusion is blinded from coders, so the analysis is read as the agreement report is:
owners, adjudicators and viewers; coders are refused."""

ROWS = {
    "studies/<slug:slug>/inclusion/": {"GET": "LNYFFYY"},
    "api/studies/<slug:slug>/inclusion/": {"GET": "LNYFFYY"},
}

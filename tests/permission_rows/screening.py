"""Permission rows: screening (issue 37). Owners alone read the progress (every screener's
labels counted) and change, stop or resume it."""

ROWS = {
    "studies/<slug:slug>/screening-round/": {"GET": "LNFFFFY", "POST": "LNFFFFY"},
    "api/studies/<slug:slug>/screening-round/": {"GET": "LNFFFFY", "PUT": "LNFFFFY"},
    "api/studies/<slug:slug>/screening-round/stop/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/screening-round/resume/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/screening-round/replay/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/screening-round/priors/": {"POST": "LNFFFFY"},
}

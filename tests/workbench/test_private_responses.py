"""Responses that carry a secret or a private file are never kept by a cache (issue 36, 7).

A new API token's key (shown once) and export and backup downloads came without
Cache-Control: no-store: a shared proxy or the browser's disk cache could keep them.
"""


def no_store(response):
    return "no-store" in response.get("Cache-Control", "")


def test_a_new_tokens_key_is_not_cached(people, client_for):
    olive = client_for(people["olive"])
    made = olive.post("/api/tokens/", {"name": "laptop", "lifetime": "30"},
                      content_type="application/json")
    assert made.status_code == 201 and no_store(made)
    page = olive.post("/account/tokens/", {"name": "desk", "lifetime": "30"})
    assert page.status_code == 200 and no_store(page)


def test_an_export_download_is_not_cached(alpha, people, client_for):
    response = client_for(people["olive"]).post(f"/studies/{alpha.slug}/export/",
                                                {"shapes": ["wide"], "format": "csv"})
    assert response.status_code == 200 and no_store(response)

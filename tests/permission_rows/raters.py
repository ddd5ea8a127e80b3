"""Permission rows: raters, their imported codings and named comparisons.

Owners, adjudicators and viewers read them, as the agreement report; only owners add
raters, import codings and name comparisons. Coders are refused everywhere: a model's
labels and the comparisons tell how others answered (tests/coding/raters/test_raters.py drives
these doors adversarially)."""

READ = "LNYFFYY"
OWNER = "LNFFFFY"

ROWS = {
    "studies/<slug:slug>/raters/": {"GET": READ, "POST": OWNER},
    "studies/<slug:slug>/comparisons/<int:comparison_id>/": {"GET": READ},
    "api/studies/<slug:slug>/raters/": {"GET": READ, "POST": OWNER},
    "api/studies/<slug:slug>/rater-codings/": {"POST": OWNER},
    "api/studies/<slug:slug>/qdpx-imports/": {"POST": OWNER},
    "api/studies/<slug:slug>/comparisons/": {"GET": READ, "POST": OWNER},
    "api/studies/<slug:slug>/comparisons/<int:comparison_id>/": {"GET": READ},
    "api/studies/<slug:slug>/assisted-rounds/": {"GET": READ, "POST": OWNER},
}


def values(world, alpha, people):
    from coding.models import Rater
    from coding.raters.setup import add_comparison

    Rater.objects.create(study=alpha, kind=Rater.Kind.MODEL, name="matrix-model",
                         model_version="v1")
    comparison = add_comparison(alpha, people["olive"], name="matrix", first="matrix-model",
                                second=None, question="label")
    return {"comparison_id": comparison.pk}

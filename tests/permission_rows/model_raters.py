"""Permission rows: model raters run from the workbench (issue 38).

Owners, adjudicators and viewers read a model rater's settings, runs and validation, as
the other rater pages; only owners change settings, preview a request (it may hold
blinded fields when the owner lets the model see them) and start, pause, resume or cancel
runs. Coders are refused everywhere (tests/coding/model_raters/test_doors.py drives these
doors as a coder holding a second role)."""

READ = "LNYFFYY"
OWNER = "LNFFFFY"

ROWS = {
    "studies/<slug:slug>/raters/<slug:name>/model/": {"GET": READ, "POST": OWNER},
    "studies/<slug:slug>/raters/<slug:name>/validation/": {"GET": READ},
    "api/studies/<slug:slug>/raters/<slug:name>/model/": {"GET": READ, "PUT": OWNER},
    "api/studies/<slug:slug>/raters/<slug:name>/model/preview/": {"GET": OWNER},
    "api/studies/<slug:slug>/raters/<slug:name>/model/runs/": {"GET": READ, "POST": OWNER},
    "api/studies/<slug:slug>/raters/<slug:name>/model/runs/<int:run_id>/": {"GET": READ},
    "api/studies/<slug:slug>/raters/<slug:name>/model/runs/<int:run_id>/<str:action>/": {
        "POST": OWNER},
    "api/studies/<slug:slug>/raters/<slug:name>/validation/": {"GET": READ},
}


def values(world, alpha, people):
    from coding.model_raters import config
    from coding.models import ModelRun
    from coding.raters.setup import add_rater

    rater = add_rater(alpha, people["olive"], kind="model", name="matrix-llm",
                      model_version="m1")
    config.configure(rater, people["olive"], {"base_url": "http://127.0.0.1:9/v1",
                                              "model": "m1"})
    run = ModelRun.objects.create(rater=rater, status=ModelRun.Status.PAUSED)
    return {"name": "matrix-llm", "run_id": run.pk, "action": "cancel"}

"""What an export bundle carries of the model raters run from the workbench.

`summary` is `model_raters.json`: per model rater, the settings its runs used (never the
key), each run's set, counts and tokens, the validation against the coders (coders by the
export's pseudonyms) and the methods paragraph. `call_rows` is `model_calls.jsonl`: every
call with its request's cache key, prompt hash, replicate, status, reason, attempts,
latency, tokens and raw response. A raw response may quote what the model was sent: when a
run sent blinded fields, its raw responses go only to readers who may see blinded fields,
and others read `"raw": null, "raw_withheld": true`. Both are empty for a study without
runs, so other studies' exports do not change.
"""

from coding.access.blinding import sees_blinded
from coding.model_raters import validation
from coding.models import ModelCall, ModelRun, Rater

FETCH = 2000


def summary(study, names):
    """[{rater, model_version, runs, validation, methods_text}] of raters that ran here."""
    found = []
    for rater in Rater.objects.filter(study=study, kind=Rater.Kind.MODEL,
                                      runs__isnull=False).distinct().order_by("name"):
        runs = list(ModelRun.objects.filter(rater=rater).order_by("pk"))
        result = validation.validate(rater, name=lambda user_id: names.get(user_id, "someone"))
        found.append({
            "rater": rater.name, "model_version": rater.model_version,
            "runs": [{"run": run.pk, "status": run.status, "scope": run.scope,
                      "replicates": run.replicates, "settings": run.used,
                      "items": run.total, "answered": run.answered, "cached": run.cached,
                      "not_answered": run.failed, "tokens_in": run.tokens_in,
                      "tokens_out": run.tokens_out,
                      "started_at": run.created_at.isoformat(),
                      "finished_at": run.finished_at.isoformat() if run.finished_at else None}
                     for run in runs],
            "validation": result,
            "methods_text": validation.methods_text(rater, result, runs)})
    return found


def call_rows(study, roles):
    """One dict per call, in a fixed order (rater, item, replicate, id), streamed."""
    blinded_ok = sees_blinded(study, roles)
    sent_blinded = {run.pk for run in ModelRun.objects.filter(rater__study=study)
                    if run.used.get("send_blinded")}
    calls = (ModelCall.objects.filter(rater__study=study, item__deleted_at__isnull=True)
             .order_by("rater__name", "item__document__key", "replicate", "pk")
             .values_list("pk", "rater__name", "item__document__key", "replicate", "run_id",
                          "key", "prompt_hash", "status", "values", "reason", "attempts",
                          "latency_ms", "tokens_in", "tokens_out", "created_at", "raw"))
    for (pk, rater, item, replicate, run, key, prompt, status, values, reason, attempts,
         latency, tokens_in, tokens_out, created, raw) in calls.iterator(chunk_size=FETCH):
        withheld = run in sent_blinded and not blinded_ok
        yield {"call": pk, "rater": rater, "item": item, "replicate": replicate + 1,
               "run": run, "cache_key": key, "prompt_hash": prompt, "status": status,
               "answer": values, "reason": reason, "attempts": attempts,
               "latency_ms": round(latency, 3), "tokens_in": tokens_in,
               "tokens_out": tokens_out, "called_at": created.isoformat(),
               "raw": None if withheld else raw, "raw_withheld": withheld}

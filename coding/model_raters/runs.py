"""A model rater's run over a set of items, as a job (kind `model_run`).

The set is the item browser's filters (coding.items.browse): a round, the reliability
sample (`sample=yes`), the records not yet screened (`state=pool`), a kind, an import,
a search. The job reads the items by key, in batches; for each item and replicate it
builds the exact request (coding.model_raters.prompts), answers it from the rater's cache
when one of its calls with the same key has answered before (no request, no cost), and
otherwise sends it (coding.model_raters.client) on up to `concurrency` threads, which do
nothing but HTTP:
every database write is the job's own thread, one transaction per batch.

Each call is kept (`ModelCall`: key, prompt hash, raw response, attempts, latency,
tokens, the answer read or the reason it failed). The first replicate's answers become
the rater's codings (`RaterCoding`, through the raters' own writer, each pointing at its
call), so the comparisons, the validation and the export read them like any rater's;
further replicates are kept only as calls, for prompt stability. Nothing here touches an
assignment, a coding or the queue: a model is a rater, never a coder (rules 10 and 12).

Every retry and every failed item is a line of the job's log, located by the item's
document key; a failed item leaves nothing half-written and is tried again by the next
run or resume. Pausing cancels the job and keeps the run `paused`; resuming starts a new
job over the same set, and what was answered comes from the cache. A refusal of every
request (bad key, unknown model) stops the run with the reason.
"""

import time
from concurrent.futures import ThreadPoolExecutor

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone, translation
from django.utils.translation import gettext, gettext_lazy, ngettext

from coding.access import audit
from coding.access.archive import check_open
from coding.codebooks.versions import published_version
from coding.items.browse import FilterError, Filters, items_for, parse_filters
from coding.model_raters import prompts
from coding.model_raters.client import Caller, RunStopped
from coding.model_raters.config import KeyUnavailable, api_key, settings_of, used_settings
from coding.models import ModelCall, ModelRun, Rater
from coding.raters.imports import Answer, Report, write_answers
from workbench import jobs
from workbench.jobs import JobCancelled, JobError
from workbench.models import JobEvent

MAX_REPLICATES = 10
BATCH = 50  # items a batch at least: one transaction, one progress report
MAX_LOGGED = 500  # log lines of one job; the rest are counted in the last line
SCOPE_FIELDS = ("q", "state", "round", "kind", "run", "sample")
# The sets the page and the command offer by name (the API takes any filters).
SETS = {
    "sample": ({"sample": "yes"}, gettext_lazy("The reliability sample")),
    "all": ({}, gettext_lazy("Every item")),
    "main": ({"round": "main"}, gettext_lazy("The main round")),
    "calibration": ({"round": "calibration"}, gettext_lazy("The calibration round")),
    "pool": ({"state": "pool"}, gettext_lazy("Items nobody has coded or screened yet")),
}


def scope_of(params):
    """The run's set as stored: the item browser's filters, checked (ValidationError
    naming the field)."""
    try:
        filters = parse_filters({k: str(v) for k, v in (params or {}).items()
                                 if k in SCOPE_FIELDS and v not in (None, "")})
    except FilterError as exc:
        raise ValidationError({exc.field: str(exc)}) from None
    unknown = sorted(set(params or {}) - set(SCOPE_FIELDS))
    if unknown:
        raise ValidationError({str(unknown[0])[:40]: gettext(
            "not a filter: the set is chosen by %(fields)s") % {"fields": ", ".join(
                SCOPE_FIELDS)}})
    return filters.as_params()


def items_of(run):
    return items_for(run.rater.study, Filters(**run.scope))


def scope_words(scope):
    """The set in words, for the page and the methods text."""
    if not scope:
        return gettext("every item")
    parts = []
    if scope.get("sample") == "yes":
        parts.append(gettext("the reliability sample"))
    elif scope.get("sample") == "no":
        parts.append(gettext("items outside the reliability sample"))
    if scope.get("round"):
        parts.append(gettext("round %(round)s") % {"round": scope["round"]})
    if scope.get("state"):
        parts.append(gettext("state %(state)s") % {"state": scope["state"]})
    if scope.get("kind"):
        parts.append(gettext("%(kind)s items") % {"kind": scope["kind"]})
    if scope.get("run"):
        parts.append(gettext("import %(run)s") % {"run": scope["run"]})
    if scope.get("q"):
        parts.append(gettext("matching %(q)r") % {"q": scope["q"]})
    return ", ".join(parts)


@transaction.atomic
def start_run(rater, user, scope=None, replicates=1):
    """A new run over the set, queued as a job; ValidationError naming the field."""
    check_open(rater.study)
    machine = settings_of(rater)
    if rater.kind != Rater.Kind.MODEL or machine is None:
        raise ValidationError({"rater": gettext("set the model rater's endpoint and model "
                                                "first")})
    scope = scope_of(scope)
    try:
        replicates = int(replicates)
    except (TypeError, ValueError):
        raise ValidationError({"replicates": gettext("a whole number")}) from None
    if not 1 <= replicates <= MAX_REPLICATES:
        raise ValidationError({"replicates": gettext("between 1 and %(most)s")
                               % {"most": MAX_REPLICATES}})
    if replicates > 1 and machine.temperature == 0:
        raise ValidationError({"replicates": gettext(
            "repeated runs measure prompt stability only at a temperature above 0")})
    if not items_for(rater.study, Filters(**scope)).exists():
        raise ValidationError({"scope": gettext("no item of the study is in this set")})
    run = ModelRun.objects.create(rater=rater, scope=scope, replicates=replicates,
                                  created_by=user, used=used_settings(
                                      machine, prompts.TEMPLATE_VERSION))
    _enqueue(run, user)
    audit.record(user, rater.study, "model_run.start",
                 audit.target_of("model_rater", name=rater.name), run=run.pk,
                 scope=scope_words(scope), replicates=replicates)
    return run


def _enqueue(run, user):
    run.job = jobs.enqueue("model_run", {"run": run.pk, "study": run.rater.study_id,
                                         "language": translation.get_language()}, user=user)
    run.status = ModelRun.Status.QUEUED
    run.save(update_fields=["job", "status"])


def _active(run):
    return run.status in (ModelRun.Status.QUEUED, ModelRun.Status.RUNNING)


@transaction.atomic
def pause(run, user):
    """Stop the run at its next batch, keeping it for `resume`."""
    run = ModelRun.objects.select_for_update().get(pk=run.pk)
    if not _active(run):
        raise ValidationError({"run": gettext("only a queued or running run pauses")})
    run.status = ModelRun.Status.PAUSED
    run.save(update_fields=["status"])
    if run.job_id:
        jobs.cancel(run.job)
    audit.record(user, run.rater.study, "model_run.pause",
                 audit.target_of("model_rater", name=run.rater.name), run=run.pk)
    return run


@transaction.atomic
def resume(run, user):
    """Go on with a paused, failed or cancelled run, or ask again the items a finished run
    could not have answered: a new job over the same set, the answered calls served from
    the cache."""
    check_open(run.rater.study)
    run = ModelRun.objects.select_for_update().get(pk=run.pk)
    if _active(run) or (run.status == ModelRun.Status.DONE and not run.failed):
        raise ValidationError({"run": gettext(
            "only a paused, stopped or failed run, or one with items not answered, resumes")})
    if settings_of(run.rater) is None:
        raise ValidationError({"rater": gettext("the rater has no settings")})
    _enqueue(run, user)
    audit.record(user, run.rater.study, "model_run.resume",
                 audit.target_of("model_rater", name=run.rater.name), run=run.pk)
    return run


@transaction.atomic
def cancel(run, user):
    run = ModelRun.objects.select_for_update().get(pk=run.pk)
    if run.status in (ModelRun.Status.DONE, ModelRun.Status.CANCELLED):
        raise ValidationError({"run": gettext("this run has ended")})
    run.status = ModelRun.Status.CANCELLED
    run.finished_at = timezone.now()
    run.save(update_fields=["status", "finished_at"])
    if run.job_id:
        jobs.cancel(run.job)
    audit.record(user, run.rater.study, "model_run.cancel",
                 audit.target_of("model_rater", name=run.rater.name), run=run.pk)
    return run


def cost(run_or_totals, machine):
    """The estimated cost from the tokens and the rater's prices; None without prices."""
    if machine is None or (machine.price_in is None and machine.price_out is None):
        return None
    return (run_or_totals.tokens_in * (machine.price_in or 0)
            + run_or_totals.tokens_out * (machine.price_out or 0)) / 1e6


class _Versions:
    """Each codebook's published version, its system message and prompt hash, once."""

    def __init__(self, machine):
        self.machine, self.known = machine, {}

    def of(self, codebook_id):
        if codebook_id not in self.known:
            version = published_version(codebook_id)
            system = version and prompts.system_message(self.machine, version)
            self.known[codebook_id] = (version, system, version and prompts.prompt_hash(
                self.machine, version, system))
        return self.known[codebook_id]


class _Log:
    """The run's located log lines, at most MAX_LOGGED per job, the rest counted."""

    def __init__(self, job):
        self.job, self.written, self.skipped = job, 0, 0

    def __call__(self, message, location, level=JobEvent.Level.WARNING):
        if self.written >= MAX_LOGGED:
            self.skipped += 1
            return
        self.written += 1
        jobs.log(self.job, message, level=level, location=location)

    def close(self):
        if self.skipped:
            jobs.log(self.job, ngettext("%(count)s more line not logged",
                                        "%(count)s more lines not logged", self.skipped)
                     % {"count": self.skipped})


@jobs.job_handler("model_run")
def run_model(job, report):
    """The job: every item of the run's set, answered or failed; safe to run again (the
    cache answers what was answered)."""
    from coding.accounts.languages import job_language

    run = ModelRun.objects.select_related("rater__study").get(pk=job.params["run"])
    if run.job_id != job.pk or run.status in (ModelRun.Status.CANCELLED,
                                              ModelRun.Status.PAUSED, ModelRun.Status.DONE):
        return {"run": run.pk, "skipped": True}
    with translation.override(job_language(job)):
        return _run(job, run, report)


def _run(job, run, report):
    machine = settings_of(run.rater)
    if machine is None:
        raise JobError(gettext("the rater has no settings any more"))
    try:
        key = api_key(machine)
    except KeyUnavailable as exc:
        _end(run, ModelRun.Status.FAILED)
        raise JobError(str(exc)) from None
    items = items_of(run).order_by("pk")
    run.total = items.count()
    run.done = run.answered = run.cached = run.failed = 0
    run.status, run.used = ModelRun.Status.RUNNING, used_settings(
        machine, prompts.TEMPLATE_VERSION)
    run.save(update_fields=["total", "done", "answered", "cached", "failed", "status", "used"])
    log, versions = _Log(job), _Versions(machine)
    caller = Caller(machine, key)
    batch_size = max(BATCH, machine.concurrency * 8)
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(max_workers=machine.concurrency,
                                thread_name_prefix="model-rater") as pool:
            last = 0
            while True:
                batch = list(items.filter(pk__gt=last).select_related(
                    "snapshot", "document", "study")[:batch_size])
                if not batch:
                    break
                last = batch[-1].pk
                _batch(run, machine, versions, batch, pool, caller, log)
                run.seconds = time.monotonic() - started
                run.save(update_fields=["done", "answered", "cached", "failed", "tokens_in",
                                        "tokens_out", "seconds"])
                report(run.done, run.total, progress_words(run, machine))
    except JobCancelled:
        run.refresh_from_db(fields=["status"])
        if run.status != ModelRun.Status.PAUSED:
            _end(run, ModelRun.Status.CANCELLED)
        raise
    except RunStopped as exc:
        log(str(exc), gettext("the endpoint"), level=JobEvent.Level.ERROR)
        _end(run, ModelRun.Status.FAILED)
        raise JobError(str(exc)) from None
    finally:
        caller.close()
        log.close()
    _end(run, ModelRun.Status.DONE)
    return {"run": run.pk, "rater": run.rater.name, "study": run.rater.study.slug,
            "counts": {"items": run.total, "answered": run.answered, "cached": run.cached,
                       "not_answered": run.failed, "tokens_in": run.tokens_in,
                       "tokens_out": run.tokens_out}}


def _end(run, status):
    ModelRun.objects.filter(pk=run.pk).exclude(status__in=(
        ModelRun.Status.PAUSED, ModelRun.Status.CANCELLED)).update(
        status=status, finished_at=timezone.now())


def progress_words(run, machine):
    rate = run.done / run.seconds if run.seconds else 0
    words = gettext("%(done)s of %(total)s items, %(rate)s a second; %(answered)s answered "
                    "(%(cached)s from the cache), %(failed)s failed; %(tokens)s tokens") % {
        "done": f"{run.done:,}", "total": f"{run.total:,}", "rate": f"{rate:.1f}",
        "answered": f"{run.answered:,}", "cached": f"{run.cached:,}",
        "failed": f"{run.failed:,}", "tokens": f"{run.tokens_in + run.tokens_out:,}"}
    spent = cost(run, machine)
    if spent is not None:
        words += gettext("; estimated cost %(cost)s") % {"cost": f"{spent:.4f}"}
    return words


def _batch(run, machine, versions, batch, pool, caller, log):
    """Ask, or read from the cache, every request of one batch of items; write the calls
    and the first replicate's codings in one transaction."""
    asks = []  # (item, replicate, version, prompt hash, body, key)
    for item in batch:
        version, system, prompt_hash = versions.of(item.codebook_id)
        if version is None:
            log(gettext("its codebook has no published version"), _where(item),
                level=JobEvent.Level.ERROR)
            run.failed += 1
            run.done += 1
            continue
        body = prompts.request_for(machine, version, item, system)
        for replicate in range(run.replicates):
            asks.append((item, replicate, version, prompt_hash, body,
                         prompts.call_key(machine, body, replicate)))
    cached = {call.key: call for call in ModelCall.objects.filter(
        rater=run.rater, key__in=[ask[5] for ask in asks], status=ModelCall.Status.ANSWERED)}
    sent = {ask[5]: pool.submit(caller.call, ask[4], ask[2])
            for ask in asks if ask[5] not in cached}
    results = {key: future.result() for key, future in sent.items()}
    with transaction.atomic():
        calls, failed_items = {}, set()
        for item, replicate, version, prompt_hash, body, key in asks:
            if key in cached:
                calls[key] = cached[key]
                run.cached += replicate == 0
                continue
            result = results[key]
            for _kind, words in result.events:
                log(words, _where(item, replicate))
            if not result.answered:
                log(result.reason, _where(item, replicate), level=JobEvent.Level.ERROR)
                failed_items.add(item.pk)
            calls[key] = _call(run, item, replicate, key, prompt_hash, result)
            run.tokens_in += result.tokens_in
            run.tokens_out += result.tokens_out
        _save_calls(calls, cached)
        answers = []
        for item, replicate, version, prompt_hash, body, key in asks:
            call = calls[key]
            if replicate == 0 and call.status == ModelCall.Status.ANSWERED:
                answers += [Answer(run.rater, item.pk, question, value, version,
                                   call.evidence.get(question, ""), call.created_at, call.pk)
                            for question, value in call.values.items()]
        write_answers(answers, Report())
    for item in batch:
        if versions.of(item.codebook_id)[0] is None:
            continue
        run.done += 1
        if item.pk in failed_items:
            run.failed += 1
        else:
            run.answered += 1


def _where(item, replicate=0):
    key = item.document.key
    return (gettext("item %(key)s") % {"key": key} if not replicate
            else gettext("item %(key)s, replicate %(n)s") % {"key": key, "n": replicate + 1})


def _call(run, item, replicate, key, prompt_hash, result):
    return ModelCall(
        rater=run.rater, run=run, item=item, replicate=replicate, key=key,
        prompt_hash=prompt_hash,
        status=ModelCall.Status.ANSWERED if result.answered else ModelCall.Status.FAILED,
        values=result.values, evidence=result.evidence if result.answered else {},
        reason=result.reason[:2000], raw=result.raw, attempts=result.attempts,
        latency_ms=result.latency_ms, tokens_in=result.tokens_in,
        tokens_out=result.tokens_out)


def _save_calls(calls, cached):
    """The batch's new calls written at once; if another run answered one of the same
    requests meanwhile (the cache's unique key), one by one, reading that run's instead."""
    new = [call for key, call in calls.items() if key not in cached]
    try:
        with transaction.atomic():
            ModelCall.objects.bulk_create(new)
        return
    except IntegrityError:
        pass
    for call in new:
        try:
            with transaction.atomic():
                call.save()
        except IntegrityError:
            calls[call.key] = ModelCall.objects.get(rater=call.rater, key=call.key,
                                                    status=ModelCall.Status.ANSWERED)


def preview(rater, document_key=""):
    """The exact request one item would be sent as, before any run: the item named by its
    document key, or the study's first. ValidationError naming `item` when there is none."""
    machine = settings_of(rater)
    if machine is None:
        raise ValidationError({"rater": gettext("set the model rater's endpoint and model "
                                                "first")})
    items = rater.study.items.filter(deleted_at__isnull=True).select_related(
        "snapshot", "document", "study").order_by("pk")
    item = (items.filter(document__key=document_key) if document_key else items).first()
    if item is None:
        raise ValidationError({"item": gettext("no item %(key)r in this study")
                               % {"key": str(document_key)[:100]} if document_key
                               else gettext("the study has no items yet")})
    version = published_version(item.codebook_id)
    if version is None:
        raise ValidationError({"item": gettext("its codebook has no published version")})
    system = prompts.system_message(machine, version)
    body = prompts.request_for(machine, version, item, system)
    key = prompts.call_key(machine, body)
    return {"item": item.document.key, "endpoint": f"{machine.base_url}/chat/completions",
            "request": body, "withheld": prompts.withheld(machine, item),
            "sends_blinded": machine.send_blinded,
            "prompt_hash": prompts.prompt_hash(machine, version, system),
            "prompt_template": prompts.TEMPLATE_VERSION, "codebook_version": str(version),
            "cached": ModelCall.objects.filter(rater=rater, key=key,
                                               status=ModelCall.Status.ANSWERED).exists()}

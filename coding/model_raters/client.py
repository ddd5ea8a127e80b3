"""Calling an OpenAI-compatible chat completions endpoint, through the `openai` library.

The library speaks the protocol (paths, headers, the key, timeouts, error statuses); its
own retries are off, because every retry here is a line of the run's log: `Caller.call`
retries a 429 after the server's Retry-After (or a backoff when it gives none), a 5xx,
a timeout and a lost connection with exponential backoff and full jitter, up to
`NETWORK_RETRIES` times, then gives up on that item. Statuses that no retry mends stop
the whole run (`RunStopped`): 401 and 403 (the key), 404 (the model or the path). A
400 fails the one item (its prompt may be too long for the model).

An answer that fails the codebook's checks is asked for again, up to the rater's
`invalid_retries`: the model's answer and what was wrong with it are added to the
conversation. A refusal and an answer cut off at the token limit are not asked again:
the same request would get the same. What comes back is a `Result`: the answer read, or
the reason it failed, with the raw response, the attempts, latency and tokens.

A rate limit of the rater's own (requests per minute) and the pause a 429 asks for are
shared by every thread of a run (`Pacer`).
"""

import random
import threading
import time
from dataclasses import dataclass, field

from django.utils import translation
from django.utils.translation import gettext

from coding.model_raters.prompts import InvalidAnswer, read_answer

NETWORK_RETRIES = 5
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 30.0
RETRY_AFTER_MAX = 120.0
STOPPING = {401, 403, 404}


class RunStopped(Exception):
    """The endpoint refuses every request alike (bad key, unknown model or path)."""


@dataclass
class Result:
    values: dict | None = None
    evidence: dict = field(default_factory=dict)
    reason: str = ""
    raw: str = ""
    attempts: int = 0
    latency_ms: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    # Retries and their causes, for the run's log: [(kind, words)].
    events: list = field(default_factory=list)

    @property
    def answered(self):
        return self.values is not None


class Pacer:
    """Spaces requests to at most `per_minute` (0: no limit) and holds every thread while
    a server's Retry-After runs."""

    def __init__(self, per_minute=0, clock=time.monotonic, sleep=time.sleep):
        self.gap = 60.0 / per_minute if per_minute else 0.0
        self.clock, self.sleep = clock, sleep
        self.next_at = 0.0
        self.lock = threading.Lock()

    def wait(self):
        with self.lock:
            now = self.clock()
            start = max(now, self.next_at)
            self.next_at = start + self.gap
        if start > now:
            self.sleep(start - now)

    def hold(self, seconds):
        with self.lock:
            self.next_at = max(self.next_at, self.clock() + seconds)


def retry_after(exc):
    """The seconds a 429 or 503 asks to wait, from its Retry-After header; None if absent."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return min(max(float(value), 0.0), RETRY_AFTER_MAX) if value else None
    except ValueError:
        return None


def backoff(attempt, rng=random):
    """Exponential backoff with full jitter: uniform in [0, first * 2**attempt], capped."""
    return rng.uniform(0, min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** attempt))


class Caller:
    """Sends a run's requests; one per thread at a time, any number of threads."""

    def __init__(self, machine, key, pacer=None, sleep=time.sleep, client=None):
        import openai  # here, not with the module: it added 50 MB to every process

        self.machine = machine
        self.client = client or openai.OpenAI(
            base_url=machine.base_url, api_key=key or "not-needed", max_retries=0,
            timeout=machine.timeout_seconds)
        self.pacer = pacer or Pacer(machine.requests_per_minute)
        self.sleep = sleep
        # Threads do not inherit the job's language: each call speaks it (its reasons are
        # read on the job's log).
        self.language = translation.get_language()

    def close(self):
        self.client.close()

    def call(self, body, version):
        """The Result of asking `body`, retried as the module docstring says."""
        with translation.override(self.language):
            return self._call(body, version)

    def _call(self, body, version):
        result = Result()
        messages = list(body["messages"])
        for _ in range(self.machine.invalid_retries + 1):
            completion = self._send({**body, "messages": messages}, result)
            if completion is None:
                return result
            choice = completion.choices[0] if completion.choices else None
            message = choice.message if choice else None
            text = (message.content or "") if message else ""
            if message is not None and getattr(message, "refusal", None):
                result.reason = gettext("the model refused: %(words)s") % {
                    "words": str(message.refusal)[:300]}
                return result
            if choice is not None and choice.finish_reason == "length":
                result.reason = gettext("the answer was cut off at the token limit "
                                        "(max_tokens %(limit)s)") % {
                    "limit": self.machine.max_tokens}
                return result
            try:
                result.values, result.evidence = read_answer(version, text)
                result.reason = ""
                return result
            except InvalidAnswer as exc:
                result.reason = gettext("invalid answer: %(problem)s") % {"problem": exc}
                result.events.append(("invalid", result.reason))
                messages += [{"role": "assistant", "content": text},
                             {"role": "user", "content": (
                                 f"That answer is not valid: {exc}. Answer again with one "
                                 "JSON object as asked.")}]
        return result

    def _send(self, body, result):
        """One completion, retried on 429, 5xx, timeouts and lost connections; None (with
        the reason in `result`) when the item fails."""
        import openai

        for attempt in range(NETWORK_RETRIES + 1):
            self.pacer.wait()
            result.attempts += 1
            started = time.perf_counter()
            try:
                raw = self.client.chat.completions.with_raw_response.create(**body)
                completion = raw.parse()
            except openai.APIStatusError as exc:
                result.latency_ms += (time.perf_counter() - started) * 1000
                status = exc.status_code
                if status in STOPPING:
                    raise RunStopped(gettext(
                        "the endpoint answered %(status)s (%(what)s) to every request: check "
                        "the rater's %(fix)s") % {
                        "status": status,
                        "what": _error_words(exc),
                        "fix": gettext("API key") if status in (401, 403)
                        else gettext("model name and base URL")}) from None
                if status == 429 or status >= 500:
                    wait = retry_after(exc) if status in (429, 503) else None
                    kind = "rate_limited" if status == 429 else "server_error"
                    words = gettext("the endpoint answered %(status)s (%(what)s)") % {
                        "status": status, "what": _error_words(exc)}
                    if not self._retry(result, attempt, kind, words, wait):
                        return None
                    continue
                result.raw = _body_text(exc)
                result.reason = gettext("the endpoint refused the request: %(status)s "
                                        "(%(what)s)") % {"status": status,
                                                         "what": _error_words(exc)}
                return None
            except openai.APITimeoutError:
                result.latency_ms += (time.perf_counter() - started) * 1000
                words = gettext("no answer within %(seconds)s s") % {
                    "seconds": f"{self.machine.timeout_seconds:g}"}
                if not self._retry(result, attempt, "timeout", words, None):
                    return None
                continue
            except openai.APIConnectionError as exc:
                result.latency_ms += (time.perf_counter() - started) * 1000
                words = gettext("the connection failed (%(error)s)") % {
                    "error": str(exc)[:120]}
                if not self._retry(result, attempt, "connection", words, None):
                    return None
                continue
            except (ValueError, openai.APIResponseValidationError) as exc:
                result.latency_ms += (time.perf_counter() - started) * 1000
                result.reason = gettext("the response is not a chat completion "
                                        "(%(error)s)") % {"error": str(exc)[:160]}
                return None
            result.latency_ms += (time.perf_counter() - started) * 1000
            result.raw = raw.http_response.text
            usage = completion.usage
            if usage is not None:
                result.tokens_in += usage.prompt_tokens or 0
                result.tokens_out += usage.completion_tokens or 0
            return completion
        return None

    def _retry(self, result, attempt, kind, words, wait):
        """Record the event; sleep and say True when another attempt is allowed."""
        if attempt >= NETWORK_RETRIES:
            result.reason = gettext("%(words)s, %(count)s times; given up") % {
                "words": words, "count": attempt + 1}
            return False
        wait = backoff(attempt) if wait is None else wait
        result.events.append((kind, gettext("%(words)s; tried again after %(seconds)s s") % {
            "words": words, "seconds": f"{wait:.1f}"}))
        if kind == "rate_limited":
            self.pacer.hold(wait)
        else:
            self.sleep(wait)
        return True


def _body_text(exc):
    response = getattr(exc, "response", None)
    try:
        return response.text[:10_000] if response is not None else ""
    except Exception:  # a streamed or closed body: nothing more to keep
        return ""


def _error_words(exc):
    """The server's own error message when it sent one in the protocol's shape."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])[:200]
    return _body_text(exc)[:200] or type(exc).__name__

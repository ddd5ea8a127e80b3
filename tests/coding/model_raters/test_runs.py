"""A model rater's run over a fresh study's items against the local test server: what is
sent, what is stored, what the cache spares, and how every fault of the server ends."""

import json

import pytest
from django.core.exceptions import ValidationError

from coding.model_raters import prompts, runs
from coding.model_raters.config import configure
from coding.models import Coding, ModelCall, ModelRun, RaterCoding
from workbench.models import Job, JobEvent


def run_over(rater, owner, **scope):
    run = runs.start_run(rater, owner, scope)
    run.refresh_from_db()
    return run


def events(run):
    return list(JobEvent.objects.filter(job__in=Job.objects.filter(
        pk__in=[run.job_id])).order_by("pk").values_list("level", "location", "message"))


@pytest.mark.django_db(transaction=True)
def test_a_run_codes_every_item_as_a_rater_with_its_provenance(team, model_rater, server):
    run = run_over(model_rater, team["owner"])
    assert (run.status, run.total, run.answered, run.failed) == ("done", 12, 12, 0)
    assert len(server.requests) == 12
    # Paper 3 is analysis (no scope asked); paper 4 has no size reported.
    three = RaterCoding.objects.filter(rater=model_rater, item__document__key="2599.00003")
    assert dict(three.values_list("question_key", "value")) == {
        "label": "analysis", "size_b": 3, "failures": ["none"], "code_released": "yes"}
    four = dict(RaterCoding.objects.filter(rater=model_rater, item__document__key="2599.00004")
                .values_list("question_key", "value"))
    assert four["size_b"] == "not_reported" and four["scope"] == "general"
    coding = RaterCoding.objects.get(rater=model_rater, item__document__key="2599.00003",
                                     question_key="label")
    assert coding.evidence == "Invented paper number 3"
    call = coding.call
    assert call.status == "answered" and call.tokens_in > 0 and call.latency_ms > 0
    assert json.loads(call.raw)["object"] == "chat.completion"
    assert call.prompt_hash == prompts.prompt_hash(model_rater.machine,
                                                   team["codebook"].current_version())
    assert run.used["model"] == "test-coder-8b" and run.used["endpoint_host"].startswith(
        "127.0.0.1:")
    assert run.used["prompt_template"] == prompts.TEMPLATE_VERSION
    # A model is a rater, never a coder: nothing in the coders' tables.
    assert not Coding.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_second_run_is_served_from_the_cache_and_changes_nothing(team, model_rater,
                                                                    server):
    first = run_over(model_rater, team["owner"])
    stored = sorted(RaterCoding.objects.values_list("item_id", "question_key", "value"))
    second = run_over(model_rater, team["owner"])
    assert len(server.requests) == 12
    assert (second.answered, second.cached, second.tokens_in) == (12, 12, 0)
    assert sorted(RaterCoding.objects.values_list("item_id", "question_key", "value")) == stored
    assert first.tokens_in > 0


@pytest.mark.django_db(transaction=True)
def test_a_changed_parameter_is_a_new_call(team, model_rater, server):
    run_over(model_rater, team["owner"])
    configure(model_rater, team["owner"], {"max_tokens": 999})
    run_over(model_rater, team["owner"])
    assert len(server.requests) == 24


@pytest.mark.django_db(transaction=True)
def test_blinded_fields_are_never_sent_unless_the_owner_says_so(team, model_rater, server):
    run_over(model_rater, team["owner"], sample="yes")
    sent = json.dumps(server.requests)
    assert "Ann Example" not in sent and "An invented abstract for paper 1." in sent
    configure(model_rater, team["owner"], {"send_blinded": True})
    server.requests.clear()
    run_over(model_rater, team["owner"], q="2599.00001")
    assert "Ann Example" in json.dumps(server.requests)


@pytest.mark.django_db(transaction=True)
def test_the_request_asks_for_the_codebooks_schema(team, model_rater, server):
    run_over(model_rater, team["owner"], q="2599.00002")
    body = server.requests[0]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["label"]["enum"] == ["rl_method", "analysis", None]
    assert {"type": "string", "enum": ["not_reported"]} in schema["properties"]["size_b"]["anyOf"]
    assert schema["required"][-1] == "evidence" and not schema["additionalProperties"]
    system = body["messages"][0]["content"]
    assert "Asked only when label is rl_method" in system and "not_reported" in system
    assert body["temperature"] == 0 and body["model"] == "test-coder-8b"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("faults, answered, log_words", [
    (("malformed",), True, "not JSON"),
    (("invalid",), True, "not_an_option"),
    (("429",), True, "429"),
    (("500", "500"), True, "500"),
    (("timeout",), True, "no answer within 1 s"),
    (("refusal",), False, "the model refused: I can't help"),
    (("length",), False, "cut off at the token limit"),
    (("400",), False, "maximum context length"),
    (("garbage",), False, "not a chat completion"),
    (("invalid", "invalid", "invalid"), False, "not_an_option"),
])
def test_each_fault_ends_as_a_located_log_line_and_nothing_is_lost(
        team, model_rater, server, faults, answered, log_words):
    server.fail("Invented paper number 5\n", *faults)
    run = run_over(model_rater, team["owner"])
    assert run.status == "done" and run.total == 12
    assert run.answered == 11 + answered and run.failed == (not answered)
    lines = [(location, message) for level, location, message in events(run)]
    assert any(location == "item 2599.00005" and log_words in message
               for location, message in lines), lines
    five = RaterCoding.objects.filter(rater=model_rater, item__document__key="2599.00005")
    assert five.exists() == answered
    if not answered:
        failed = ModelCall.objects.get(item__document__key="2599.00005", status="failed")
        assert log_words in failed.reason
        # Resumed, the failed item is asked again and the rest come from the cache.
        asked = len(server.requests)
        runs.resume(run, team["owner"])
        run.refresh_from_db()
        assert (run.status, run.answered, run.cached) == ("done", 12, 11)
        assert len(server.requests) == asked + 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("fault, words", [("401", "API key"), ("404", "model name")])
def test_a_refusal_of_every_request_stops_the_run_with_the_reason(
        team, model_rater, server, fault, words):
    server.fail("Invented paper", *[fault] * 20)
    run = run_over(model_rater, team["owner"])
    assert run.status == "failed"
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "failed" and words in job.error
    assert not RaterCoding.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_paused_run_stops_between_batches_and_resumes_from_the_cache(
        team, model_rater, server, monkeypatch):
    monkeypatch.setattr(runs, "BATCH", 4)
    configure(model_rater, team["owner"], {"concurrency": 1})
    answer = server.answer

    def pause_on_the_sixth(body):
        if "Invented paper number 6\n" in body["messages"][1]["content"]:
            runs.pause(ModelRun.objects.get(), team["owner"])
        return answer(body)

    server.answer = pause_on_the_sixth
    run = run_over(model_rater, team["owner"])
    assert run.status == "paused" and run.done == 8 and len(server.requests) == 8
    assert Job.objects.get(pk=run.job_id).status == "cancelled"
    assert RaterCoding.objects.filter(question_key="label").count() == 8
    with pytest.raises(ValidationError, match="pauses"):
        runs.pause(run, team["owner"])
    server.answer = answer
    runs.resume(run, team["owner"])
    run.refresh_from_db()
    assert (run.status, run.done, run.cached, run.answered) == ("done", 12, 8, 12)
    assert len(server.requests) == 12
    with pytest.raises(ValidationError, match="resumes"):
        runs.resume(run, team["owner"])


@pytest.mark.django_db(transaction=True)
def test_the_cache_is_each_raters_own(team, model_rater, server):
    from coding.raters.setup import add_rater

    run_over(model_rater, team["owner"])
    twin = add_rater(team["study"], team["owner"], kind="model", name="twin-model",
                     model_version="test-coder-8b")
    configure(twin, team["owner"], {"base_url": server.url, "model": "test-coder-8b",
                                    "timeout_seconds": 1, "concurrency": 3})
    run = run_over(twin, team["owner"])
    # The same requests, asked again: a call of another rater is not this one's provenance.
    assert (run.answered, run.cached) == (12, 0) and len(server.requests) == 24
    assert not RaterCoding.objects.filter(rater=twin).exclude(call__rater=twin).exists()

"""For any codebook hypothesis makes (conditions, special answers, free text, optional
questions), the JSON schema a model is asked to follow admits every answer a coder may
submit, and reading that answer back gives exactly what a coder's submission stores: a
schema stricter than the checks would make valid answers impossible under structured
output, a looser one would let a model's answer through that a coder's would not."""

import itertools
import json

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coding.codebooks.versions import check_values, published_version
from coding.model_raters import prompts
from tests import factories
from tests.test_workflow_properties import answer_sets, codebooks

COUNTER = itertools.count()


@pytest.mark.django_db
@settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), spec=codebooks())
def test_the_schema_admits_what_a_coder_may_submit_and_reads_back_the_same(data, spec):
    study = factories.study(f"Schema study {next(COUNTER)}")
    version = published_version(factories.codebook(study, spec).pk)
    answers = data.draw(answer_sets(spec))
    stored = check_values(version, answers, complete=True)
    keys = [q["key"] for q in spec["questions"]]
    sent = {key: answers.get(key) for key in keys}
    sent["evidence"] = {key: None for key in keys}
    jsonschema.validate(sent, prompts.answer_schema(version),
                        cls=jsonschema.Draft202012Validator)
    values, quotes = prompts.read_answer(version, json.dumps(sent))
    assert values == stored and quotes == {}


@pytest.mark.django_db
@settings(max_examples=25, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(spec=codebooks())
def test_a_value_outside_the_options_is_refused_by_the_schema_and_the_checks(spec):
    study = factories.study(f"Schema study {next(COUNTER)}")
    version = published_version(factories.codebook(study, spec).pk)
    chosen = [q for q in spec["questions"] if q["kind"] in ("single", "yes_no")
              and not q.get("show_if")]
    if not chosen:
        return
    key = chosen[0]["key"]
    bad = {k["key"]: None for k in spec["questions"]} | {key: "not_an_option"}
    bad["evidence"] = {k["key"]: None for k in spec["questions"]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, prompts.answer_schema(version))
    with pytest.raises(prompts.InvalidAnswer, match=key):
        prompts.read_answer(version, json.dumps(bad))

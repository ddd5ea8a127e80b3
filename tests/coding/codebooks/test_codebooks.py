"""Versioned codebooks (rule 5) and the checking of answers against them."""

import pytest
from django.core.exceptions import ValidationError

from coding.codebooks.versions import check_values, draft_new_version, publish
from coding.models import Option, Question
from tests import factories


@pytest.fixture
def version(alpha):
    return alpha.paper_codebook.current_version()


def test_published_version_refuses_an_edited_question(version):
    question = version.questions.get(key="label")
    question.text = "A quietly changed question"
    with pytest.raises(ValidationError, match="published"):
        question.save()
    assert version.questions.get(key="label").text == "Main contribution?"


def test_published_version_refuses_a_new_or_deleted_option(version):
    question = version.questions.get(key="label")
    with pytest.raises(ValidationError):
        Option.objects.create(question=question, value="systems", label="Systems")
    with pytest.raises(ValidationError):
        question.options.first().delete()
    assert question.options.count() == 2


def test_editing_a_codebook_in_use_makes_a_new_version(alpha, people, version):
    factories.code(alpha.papers[0], people["cora"])
    draft = draft_new_version(alpha.paper_codebook, people["olive"], note="Add systems")
    label = draft.questions.get(key="label")
    Option.objects.create(question=label, value="systems", label="Systems", position=9)
    publish(draft)

    assert alpha.paper_codebook.current_version().number == 2
    assert version.questions.get(key="label").options.count() == 2
    coding = alpha.papers[0].assignments.get().codings.get()
    assert coding.codebook_version.number == 1  # the coding keeps the version it answered
    new_coding = factories.code(alpha.papers[1], people["cora"], label="systems")
    assert new_coding.codebook_version.number == 2


def test_answers_must_name_existing_questions_and_options(version):
    with pytest.raises(ValidationError) as error:
        check_values(version, {"label": "poetry", "colour": "blue", "size_b": 7,
                               "failures": ["none"], "code_released": "yes"})
    assert set(error.value.message_dict) == {"label", "colour"}


def test_required_questions_must_be_answered(version):
    with pytest.raises(ValidationError) as error:
        check_values(version, {"label": "analysis"})
    assert set(error.value.message_dict) == {"size_b", "failures", "code_released"}


def test_conditional_question_is_required_only_when_shown(version):
    base = {"size_b": "not_reported", "failures": ["none"], "code_released": "no"}
    assert "scope" not in check_values(version, {**base, "label": "analysis"})
    with pytest.raises(ValidationError) as error:
        check_values(version, {**base, "label": "rl_method"})
    assert set(error.value.message_dict) == {"scope"}


def test_answer_to_a_hidden_question_is_refused_as_not_applicable(version):
    with pytest.raises(ValidationError) as error:
        check_values(version, {"label": "analysis", "scope": "general", "size_b": 1,
                               "failures": ["none"], "code_released": "no"})
    assert error.value.message_dict["scope"][0] == "not applicable: asked only when label is rl_method"


def test_a_hidden_question_answered_without_javascript_is_refused_in_the_coders_language(version):
    from django.utils import translation
    with translation.override("zh-hans"), pytest.raises(ValidationError) as error:
        check_values(version, {"label": "analysis", "scope": "general", "size_b": 1,
                               "failures": ["none"], "code_released": "no"})
    assert error.value.message_dict["scope"][0] == "不适用：仅当 label 为 rl_method 时才需回答"


@pytest.mark.parametrize("key, answer", [
    ("size_b", "seven"), ("size_b", True), ("size_b", float("nan")),
    ("failures", "none"), ("failures", ["none", "none"]), ("failures", ["meltdown"]),
    ("code_released", "maybe"), ("note", 12),
])
def test_answers_of_the_wrong_type_are_refused(version, key, answer):
    values = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no",
              key: answer}
    with pytest.raises(ValidationError) as error:
        check_values(version, values)
    assert set(error.value.message_dict) == {key}


def test_multiple_choice_answers_are_kept_in_codebook_order(version):
    values = check_values(version, {"label": "analysis", "size_b": 0.5, "code_released": "yes",
                                    "failures": ["none", "entropy_collapse"]})
    assert values["failures"] == ["entropy_collapse", "none"]


def test_question_kinds_cover_the_design(version):
    kinds = set(version.questions.values_list("kind", flat=True))
    assert kinds == {k.value for k in Question.Kind}


def test_a_number_question_is_measured_at_the_ratio_level_unless_its_spec_says_otherwise(
        alpha):
    """Issue 35, 6: alpha at the nominal level treats 7 and 8 as unrelated categories."""
    from coding.codebooks.versions import create_codebook

    spec = {"name": "Counts", "applies_to": "thread", "questions": [
        {"key": "replies", "kind": "number", "text": "How many replies?"},
        {"key": "rank", "kind": "number", "level": "ordinal", "text": "Priority rank"},
        {"key": "why", "kind": "text", "text": "Why?"}]}
    questions = {q.key: q.level for q in create_codebook(alpha, spec).current_version()
                 .questions.all()}
    assert questions == {"replies": "ratio", "rank": "ordinal", "why": "nominal"}


def test_a_number_question_at_the_nominal_level_is_refused_with_a_question():
    from coding.codebooks.spec import validate

    errors = validate({"name": "Counts", "applies_to": "paper", "questions": [
        {"key": "size", "kind": "number", "level": "nominal", "text": "Size"}]})
    assert [(e.path, "interval or ratio" in e.message) for e in errors] == [
        ("questions[0].level", True)]

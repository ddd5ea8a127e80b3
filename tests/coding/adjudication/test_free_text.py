"""Free text is not a disagreement unless the codebook says so (issue 35, finding 4).

Two valid quotes of one sentence, worded differently, made half of a small study's
open disagreements. Per question, the codebook says whether differing answers go to
the adjudicator: by default choices and numbers do, free text does not (both texts are
kept and exported); an owner switches it in a new version.
"""

from coding.actions.submit import record_coding
from coding.codebooks.diff import diff
from coding.codebooks.spec import spec_of, validate
from coding.codebooks.versions import create_codebook
from coding.dataset import load
from coding.export.bundle import build_bundle
from coding.labeling import queue
from coding.models import StoredDisagreement
from tests import factories

SPEC = {"name": "Quotes", "applies_to": "paper", "questions": [
    {"key": "kind", "kind": "single", "text": "What kind?",
     "options": [{"value": "method", "label": "Method"}, {"value": "study", "label": "Study"}]},
    {"key": "evidence", "kind": "text", "text": "Quote the sentence that says so."}]}


def coded(study, spec, people):
    codebook = create_codebook(study, spec)
    item = factories.paper_item(study, codebook, 7)
    record_coding(queue.assign(item, people["cora"]),
                  {"kind": "method", "evidence": "We propose a new clipping rule."})
    record_coding(queue.assign(item, people["cyril"]),
                  {"kind": "study", "evidence": "we propose a new clipping rule"})
    return codebook


def open_questions(study):
    return set(StoredDisagreement.objects.filter(study=study, decided=False)
               .values_list("question_key", flat=True))


def test_two_wordings_of_free_text_are_not_a_disagreement_by_default(alpha, people, tmp_path):
    coded(alpha, SPEC, people)
    assert open_questions(alpha) == {"kind"}
    path = tmp_path / "quotes.zip"
    build_bundle(alpha, path, shapes=["wide", "long"], fmt="csv")
    tables = load(path)
    wide = tables["wide-quotes"].iloc[0]
    assert wide["evidence__status"] == "not_adjudicated"
    assert wide["kind__status"] == "undecided"
    texts = tables["long"].query("question == 'evidence'")["value"].tolist()
    assert sorted(texts) == ["We propose a new clipping rule.", "we propose a new clipping rule"]


def test_an_owner_can_send_free_text_to_the_adjudicator(alpha, people):
    spec = {**SPEC, "questions": [SPEC["questions"][0],
                                  {**SPEC["questions"][1], "adjudicated": True}]}
    coded(alpha, spec, people)
    assert open_questions(alpha) == {"kind", "evidence"}


def test_choices_can_be_left_to_the_coders_too(alpha, people):
    spec = {**SPEC, "questions": [{**SPEC["questions"][0], "adjudicated": False},
                                  SPEC["questions"][1]]}
    coded(alpha, spec, people)
    assert open_questions(alpha) == set()


def test_the_setting_is_part_of_the_versioned_codebook(alpha, people):
    codebook = coded(alpha, SPEC, people)
    before = spec_of(codebook.current_version())
    assert "adjudicated" not in before["questions"][1]  # as its kind has it
    after = {**before, "questions": [before["questions"][0],
                                     {**before["questions"][1], "adjudicated": True}]}
    changes = diff(before, after)["changed"]
    assert [(c["key"], c["fields"]) for c in changes] == [
        ("evidence", [{"field": "adjudicated", "old": None, "new": True}])]
    assert [e.path for e in validate({**after, "questions": [
        {**after["questions"][1], "adjudicated": "yes"}]})] == ["questions[0].adjudicated"]

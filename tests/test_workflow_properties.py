"""A team's whole first study, generated (issue 35): property-based, with hypothesis.

Each example is a fresh study the demo never shows: a codebook drawn at random (every
question kind, conditions on earlier answers, special answers, optional questions, free
text adjudicated or not), two to four coders and an adjudicator, papers read from a
generated arXiv file with duplicates and bad lines, codings submitted over the API with
quotes, notes, skips and revisions in discussion, then agreement, adjudication over the
API until nothing is open, and the export loaded with pandas. What must hold, always:

- the import's counters add up to the records read;
- no agreement computation fails, and nothing stored is NaN or infinite;
- every open disagreement can be closed through the API, and at every step the review
  list's open set is the export's undecided set (an item still being coded is pending);
- every stored quote is in the export's evidence table;
- the methods text's counts are the report's.

In `make test` it runs with a fixed seed (derandomize) and WORKFLOW_EXAMPLES examples
(default 8), which keeps the suite within its time. A longer search is
`make workflow-search` (WORKFLOW_EXAMPLES=300, random seeds), which prints what it tried.
"""

import json
import math
import os
from contextlib import contextmanager

import pytest
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from coding.adjudication import decisions as adjudication
from coding.agreement import snapshots
from coding.agreement.report import current_document
from coding.dataset import load
from coding.export.bundle import build_bundle
from coding.labeling import pool
from coding.models import AgreementSnapshot, Coding, Decision, Role, StoredDisagreement
from coding.models.tallies import live_tallies, tallies
from ingest.load import StrictModeError
from tests import factories

EXAMPLES = int(os.environ.get("WORKFLOW_EXAMPLES", "8"))
SEARCH = os.environ.get("WORKFLOW_SEARCH") == "1"  # random seeds, statistics printed

WORDS = ["policy", "reward", "rollout", "critic", "baseline", "entropy", "clipping", "group"]
TEXTS = ["Section two says so.", "Shown in a table.", "The appendix reports it.",
         "Section two says so, in passing."]
SPECIAL = {"value": "not_reported", "label": "Not reported"}


class Rollback(Exception):
    """Raised at the end of an example so the database forgets it."""


@contextmanager
def forgotten():
    """Everything an example writes, rolled back after it (hypothesis runs many examples
    in one test, and each must start from an empty study)."""
    try:
        with transaction.atomic():
            yield
            raise Rollback
    except Rollback:
        pass


# --- what is generated ----------------------------------------------------------------

@st.composite
def codebooks(draw):
    questions = []
    for n in range(draw(st.integers(2, 5))):
        kind = draw(st.sampled_from(["single", "multiple", "yes_no", "number", "text"]))
        q = {"key": f"q{n}", "text": f"Invented question {n}?", "kind": kind,
             "required": draw(st.booleans())}
        if kind in ("single", "multiple"):
            q["options"] = [{"value": f"o{k}", "label": f"Option {k}"}
                            for k in range(draw(st.integers(2, 3)))]
        if kind == "number":
            q.update(min_value=0, max_value=20)
            if draw(st.booleans()):
                q["options"] = [SPECIAL]
        if kind == "text":
            adjudicated = draw(st.sampled_from([None, True, False]))
            if adjudicated is not None:
                q["adjudicated"] = adjudicated
        parents = [p for p in questions if p["kind"] in ("single", "yes_no")]
        if parents and draw(st.booleans()):
            parent = draw(st.sampled_from(parents))
            values = ([o["value"] for o in parent["options"]] if parent["kind"] == "single"
                      else ["yes", "no"])
            q["show_if"] = {"question": parent["key"],
                            "in": draw(st.lists(st.sampled_from(values), min_size=1,
                                                max_size=len(values) - 1, unique=True))}
        questions.append(q)
    return {"name": "Generated codebook", "applies_to": "paper", "questions": questions}


def shown(question, answers):
    condition = question.get("show_if")
    return not condition or answers.get(condition["question"]) in condition["in"]


def an_answer(draw, question):
    kind = question["kind"]
    if kind == "single":
        return draw(st.sampled_from([o["value"] for o in question["options"]]))
    if kind == "multiple":
        values = [o["value"] for o in question["options"]]
        return sorted(draw(st.lists(st.sampled_from(values), min_size=1, unique=True)),
                      key=values.index)
    if kind == "yes_no":
        return draw(st.sampled_from(["yes", "no"]))
    if kind == "number":
        special = [o["value"] for o in question.get("options", [])]
        return draw(st.sampled_from([0, 1, 2, 3.5, *special]))
    return draw(st.sampled_from(TEXTS))


@st.composite
def answer_sets(draw, spec):
    """One coder's answers to one item: what the page would let them submit."""
    answers = {}
    for question in spec["questions"]:
        if not shown(question, answers):
            continue
        if not question["required"] and draw(st.integers(0, 4)) == 0:
            continue  # left unanswered
        answers[question["key"]] = an_answer(draw, question)
    return answers


@st.composite
def workflows(draw):
    spec = draw(codebooks())
    coders = draw(st.integers(2, 4))
    papers = draw(st.integers(1, 6))
    return {
        "spec": spec, "coders": coders, "papers": papers,
        "discussion": draw(st.booleans()),
        "duplicates": draw(st.integers(0, 2)), "bad_lines": draw(st.integers(0, 2)),
        "strict": draw(st.booleans()),
        # per coder and paper: skip it, or these answers (drawn small, so coders often agree)
        "work": [[None if draw(st.integers(0, 9)) == 0 else draw(answer_sets(spec))
                  for _ in range(papers)] for _ in range(coders)],
        "quotes": draw(st.lists(st.tuples(st.integers(0, coders - 1), st.integers(0, papers - 1),
                                          st.sampled_from(WORDS)), max_size=4)),
        "revisions": draw(st.lists(st.tuples(st.integers(0, coders - 1),
                                             st.integers(0, papers - 1)), max_size=3)),
    }


# --- the study, as a team makes it ----------------------------------------------------------

def arxiv_line(n, title):
    return json.dumps({
        "id": f"2598.{n:05d}", "submitter": "Ann Example", "authors": "Ann Example",
        "title": title, "comments": None, "journal-ref": None, "doi": None,
        "report-no": None, "categories": "cs.LG", "license": None,
        "abstract": f"An invented abstract about {WORDS[n % len(WORDS)]} number {n}.",
        "versions": [{"version": "v1", "created": "Mon, 03 Feb 2025 10:00:00 GMT"}],
        "update_date": "2025-12-01", "authors_parsed": [["Example", "Ann", ""]]})


def import_papers(study, flow, tmp_path):
    """Papers read from a generated file: every record counted once, whatever happens."""
    lines = [arxiv_line(n, f"Invented {' '.join(WORDS[n % 8:n % 8 + 3])} paper {n}")
             for n in range(flow["papers"])]
    lines += lines[:flow["duplicates"]]
    lines += ['{"id": "2598.9', "not json"][:flow["bad_lines"]]
    path = tmp_path / "papers.jsonl"
    path.write_text("\n".join(lines) + "\n")
    try:
        counts = pool.import_into_study(study, {"format": "arxiv_snapshot_file",
                                                "path": str(path), "strict": flow["strict"]},
                                        pool.Screening())
    except StrictModeError:
        counts = study.import_runs.get().counts
    assert sum(pool.accounted_for(counts).values()) == counts["read"], counts
    assert pool.screening_flow(study)["totals"]["adds_up"]


def make_study(flow, tmp_path):
    owner = factories.user("owner")
    study = factories.study("Generated study", owner=owner, overlap=flow["coders"],
                            discussion_step=flow["discussion"])
    factories.member(study, owner, Role.OWNER)
    coders = [factories.user(f"coder{n}") for n in range(flow["coders"])]
    for coder in coders:
        factories.member(study, coder, Role.CODER)
    adjudicator = factories.user("adjudicator")
    factories.member(study, adjudicator, Role.ADJUDICATOR)
    factories.codebook(study, flow["spec"])
    import_papers(study, flow, tmp_path)
    return study, coders, adjudicator


def client(user):
    browser = Client()
    browser.force_login(user)
    return browser


def code_everything(study, flow, coders):
    """Each coder takes items over the API until none is left: skips, quotes, notes."""
    items = {}  # item id -> paper number, in the order the pool holds them
    numbers = {pk: n for n, pk in enumerate(study.items.order_by("pk").values_list("pk", flat=True))}
    quotes = {}
    for coder_n, paper_n, word in flow["quotes"]:
        quotes.setdefault((coder_n, paper_n), []).append(word)
    for coder_n, coder in enumerate(coders):
        api = client(coder)
        for _ in range(len(numbers) + 1):
            given = api.post(f"/api/studies/{study.slug}/next/")
            if given.status_code == 204:
                break
            assert given.status_code == 200, given.content
            assignment = given.json()
            paper_n = numbers[assignment["item"]["id"]] % flow["papers"]
            items[assignment["item"]["id"]] = paper_n
            answers = flow["work"][coder_n][paper_n]
            base = f"/api/studies/{study.slug}/assignments/{assignment['id']}"
            if answers is None:
                skipped = api.post(f"{base}/skip/", {"reason": "unclear"},
                                   content_type="application/json")
                assert skipped.status_code == 204, skipped.content
                continue
            title = assignment["item"]["content"]["title"]
            evidence = [{"question": flow["spec"]["questions"][0]["key"], "field": "title",
                         "quote": word} for word in quotes.get((coder_n, paper_n), [])
                        if word in title]
            sent = api.post(f"{base}/submit/", {
                "values": answers, "evidence": evidence,
                "notes": "A generated note." if coder_n % 2 else ""},
                content_type="application/json")
            assert sent.status_code == 201, sent.content
    return items


def revise(study, flow, coders):
    """Coders revise after discussion opened: they take the first coder's answers."""
    for coder_n, paper_n in flow["revisions"]:
        api = client(coders[coder_n])
        mine = api.get(f"/api/studies/{study.slug}/assignments/").json()
        rows = mine["results"] if isinstance(mine, dict) else mine
        for row in rows:
            item = study.items.get(pk=row["item"])
            if not item.discussion_opened_at or row.get("status") != "submitted":
                continue
            answers = flow["work"][0][paper_n % flow["papers"]]
            if answers is None:
                continue
            sent = api.post(f"/api/studies/{study.slug}/assignments/{row['id']}/submit/",
                            {"values": answers}, content_type="application/json")
            assert sent.status_code == 201, sent.content
            break


# --- what must hold ---------------------------------------------------------------------------

def finite_everywhere(value, place="report"):
    if isinstance(value, float):
        assert math.isfinite(value), place
    elif isinstance(value, dict):
        for key, item in value.items():
            finite_everywhere(item, f"{place}.{key}")
    elif isinstance(value, list):
        for n, item in enumerate(value):
            finite_everywhere(item, f"{place}[{n}]")


def agreement_holds(study):
    result = snapshots.take_snapshot(study, force=True)  # must not raise
    for snapshot in AgreementSnapshot.objects.filter(study=study):
        finite_everywhere(snapshot.report)
        json.dumps(snapshot.report, allow_nan=False)
    doc = current_document(study)
    main = doc["rounds"]["main"]
    if doc["text"] is None:
        assert not result.get("n_codings") and doc["text_withheld"]
    else:
        assert f"So far {main['items_with_two_or_more']} items were coded by two or more" \
            in doc["text"]
        found, decided, undecided = (doc["disagreements"][k]
                                     for k in ("found", "decided", "undecided"))
        assert found == decided + undecided


def export(study, tmp_path, name):
    path = tmp_path / f"{name}.zip"
    build_bundle(study, path, shapes=["wide", "evidence", "decisions"], fmt="csv",
                 roles={Role.OWNER})
    return load(path)


def undecided_in_export(tables, spec, study):
    """The export's undecided questions (an item still waiting for a coder is pending, no
    disagreement yet)."""
    wide = next(frame for name, frame in tables.items() if name.startswith("wide"))
    pending = {int(row["item_id"]) for _, row in wide.iterrows()
               if any(row.get(f"{q['key']}__status") == "pending" for q in spec["questions"])}
    complete = set(adjudication.complete_items(study).values_list("pk", flat=True))
    assert not pending & complete, "a complete item is pending"
    return {(int(row["item_id"]), q["key"]) for _, row in wide.iterrows()
            for q in spec["questions"] if row.get(f"{q['key']}__status") == "undecided"}


def open_in_list(study):
    return set(StoredDisagreement.objects.filter(study=study, decided=False)
               .values_list("item_id", "question_key"))


def a_value(question, answers):
    """One coder's value where one gave it, else a value of the question's kind."""
    given = [a for a in answers if a not in (None, "n/a", "missing")]
    if given:
        return given[0]
    return {"single": lambda: question["options"][0]["value"],
            "multiple": lambda: [question["options"][0]["value"]],
            "yes_no": lambda: "yes", "number": lambda: 1,
            "text": lambda: "Decided."}[question["kind"]]()


def close_everything(study, spec, adjudicator, tmp_path):
    """Decide open disagreements over the API, one at a time, until none is open; the
    review list and the export agree on what is open at every step."""
    api = client(adjudicator)
    questions = {q["key"]: q for q in spec["questions"]}
    limit = 3 * len(questions) * max(1, study.items.count()) + 5
    for step in range(limit):
        assert open_in_list(study) == undecided_in_export(export(study, tmp_path, f"s{step}"),
                                                          spec, study)
        listed = api.get(f"/api/studies/{study.slug}/disagreements/").json()["results"]
        if not listed:
            return
        item, key = listed[0]["item"], listed[0]["question"]
        review = api.get(f"/api/studies/{study.slug}/items/{item}/review/").json()
        answers = [c["independent"]["values"].get(key) for c in review["coders"].values()]
        decided = api.post(f"/api/studies/{study.slug}/items/{item}/review/",
                           {"question": key, "value": a_value(questions[key], answers),
                            "rationale": "Generated decision."},
                           content_type="application/json")
        assert decided.status_code in (200, 201), (key, decided.content)
    raise AssertionError(f"disagreements still open after {limit} decisions: "
                         f"{sorted(open_in_list(study))}")


def quotes_exported(study, tables):
    stored = {(c.assignment.item_id, quote["question"], quote["quote"], c.revision)
              for c in Coding.objects.filter(assignment__item__study=study)
              .select_related("assignment") for quote in c.evidence}
    evidence = tables["evidence"]
    found = {(int(r["item_id"]), r["question"], r["quote"], int(r["revision"]))
             for _, r in evidence.iterrows()}
    assert stored == found


def no_decision_value_is_nan(study):
    for value in Decision.objects.filter(item__study=study).values_list("value", flat=True):
        finite_everywhere(value, "decision")


# --- the property ------------------------------------------------------------------------------

@pytest.mark.django_db
@settings(max_examples=EXAMPLES, deadline=None, derandomize=not SEARCH,
          **({} if SEARCH else {"database": None}),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large],
          print_blob=True)
@example(flow={  # found by a longer search: a grandchild of a question ruled out unanimously
    "spec": {"name": "Generated codebook", "applies_to": "paper", "questions": [
        {"key": "q0", "text": "Invented question 0?", "kind": "yes_no", "required": True},
        {"key": "q1", "text": "Invented question 1?", "kind": "single", "required": False,
         "options": [{"value": "o0", "label": "Option 0"}, {"value": "o1", "label": "Option 1"}],
         "show_if": {"question": "q0", "in": ["yes"]}},
        {"key": "q2", "text": "Invented question 2?", "kind": "single", "required": False,
         "options": [{"value": "o0", "label": "Option 0"}, {"value": "o1", "label": "Option 1"}],
         "show_if": {"question": "q1", "in": ["o0"]}}]},
    "coders": 2, "papers": 2, "discussion": False, "duplicates": 0, "bad_lines": 0,
    "strict": False, "work": [[{"q0": "no"}, {"q0": "yes", "q1": "o0", "q2": "o1"}],
                              [{"q0": "no"}, {"q0": "no"}]],
    "quotes": [], "revisions": []})
@given(flow=workflows())
def test_a_generated_study_goes_from_import_to_export_without_a_fault(flow, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("workflow")
    note(json.dumps(flow))
    with forgotten():
        study, coders, adjudicator = make_study(flow, tmp_path)
        code_everything(study, flow, coders)
        if flow["discussion"]:
            revise(study, flow, coders)
        agreement_holds(study)
        close_everything(study, flow["spec"], adjudicator, tmp_path)
        tables = export(study, tmp_path, "final")
        quotes_exported(study, tables)
        no_decision_value_is_nan(study)
        agreement_holds(study)
        # The counts the pages show, kept by PostgreSQL as they are written, are the
        # tables' (coding/models/tallies.py; on SQLite they are counted, so equal).
        assert tallies(study) == live_tallies(study)

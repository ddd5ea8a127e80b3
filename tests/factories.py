"""Small builders for test data. All text is invented for the tests."""

from datetime import UTC, datetime

from django.contrib.auth import get_user_model

from coding.actions.submit import record_coding
from coding.codebooks.versions import create_codebook
from coding.labeling import queue
from coding.models import Assignment, Membership, Study
from ingest.models import Document, Post

PASSWORD = "correct-horse-battery"

SMALL_PAPER_CODEBOOK = {
    "name": "Small paper codebook",
    "applies_to": "paper",
    "questions": [
        {"key": "label", "kind": "single", "text": "Main contribution?",
         "options": [{"value": "rl_method", "label": "RL method"},
                     {"value": "analysis", "label": "Analysis"}]},
        {"key": "scope", "kind": "single", "text": "Scope?",
         "show_if": {"question": "label", "in": ["rl_method"]},
         "options": [{"value": "general", "label": "General"},
                     {"value": "embedded", "label": "Embedded"}]},
        {"key": "size_b", "kind": "number", "level": "ratio", "text": "Largest policy (B)",
         "options": [{"value": "not_reported", "label": "Not reported"}]},
        {"key": "failures", "kind": "multiple", "text": "Failures addressed",
         "options": [{"value": "entropy_collapse", "label": "Entropy collapse"},
                     {"value": "none", "label": "None"}]},
        {"key": "code_released", "kind": "yes_no", "text": "Code released?"},
        {"key": "note", "kind": "text", "required": False, "text": "Anything else?"},
    ],
}


def user(username):
    return get_user_model().objects.create_user(
        username=username, password=PASSWORD, first_name=username.title()
    )


def study(name, owner=None, **fields):
    return Study.objects.create(name=name, created_by=owner, **fields)


def member(study, user, role):
    return Membership.objects.create(study=study, user=user, role=role)


def codebook(study, spec=SMALL_PAPER_CODEBOOK):
    return create_codebook(study, spec)


def paper(n, **metadata):
    return Document.objects.create(
        kind=Document.Kind.PAPER, source="test", key=f"2599.{n:05d}",
        title=f"Invented paper number {n}", published=datetime(2025, 5, 1 + n % 28, tzinfo=UTC),
        metadata={"abstract": f"An invented abstract for paper {n}.",
                  "authors": ["Ann Example", "Bo Sample"], **metadata},
    )


def thread(n, posts=("Opening post.", "A reply."), **metadata):
    document = Document.objects.create(
        kind=Document.Kind.THREAD, source="test", key=f"example/repo#{n}",
        title=f"Invented thread {n}", published=datetime(2025, 6, 1, tzinfo=UTC),
        metadata={"state": "closed", "merged": True, **metadata},
    )
    for i, body in enumerate(posts):
        Post.objects.create(
            document=document, position=i, external_id=str(i), author=f"user{i}",
            kind=Post.Kind.OPENING if i == 0 else Post.Kind.COMMENT,
            created=datetime(2025, 6, 1, i, tzinfo=UTC), body=body,
        )
    return document


def paper_item(study, codebook, n, **fields):
    return queue.add_item(study, paper(n), codebook, **fields)


def code(item, coder, **values):
    answers = {"label": "analysis", "size_b": 7, "failures": ["none"], "code_released": "no"}
    answers.update(values)
    assignment = (Assignment.objects.filter(item=item, coder=coder).first()
                  or queue.assign(item, coder))
    return record_coding(assignment, answers)

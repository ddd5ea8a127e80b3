"""A screening study made from nothing: the owner's own codebook (a decision, exclusion
reasons shown only for an exclude, a free-text note), two screeners, an adjudicator, and
invented records on two topics: the relevant ones about training language models by
reinforcement, the others about irrigation. All text is made here."""

import random
from datetime import UTC, datetime

import pytest

from coding.labeling import queue
from coding.screening.setup import configure
from ingest.models import Document
from tests import factories

SCREENING_CODEBOOK = {
    "name": "Title and abstract screening",
    "applies_to": "paper",
    "questions": [
        {"key": "decision", "kind": "single", "text": "Include this record?",
         "options": [{"value": "include", "label": "Include"},
                     {"value": "exclude", "label": "Exclude"}]},
        {"key": "reasons", "kind": "multiple", "text": "Why exclude?", "required": False,
         "show_if": {"question": "decision", "in": ["exclude"]},
         "options": [{"value": "off_topic", "label": "Off topic"},
                     {"value": "no_method", "label": "No method"}]},
        {"key": "note", "kind": "text", "required": False, "text": "Anything else?"},
    ],
}
RELEVANT = ("policy gradient reward model preference optimisation language model rollout "
            "advantage critic clipping entropy verifier").split()
OTHER = ("irrigation soil moisture crop yield drip sensor rainfall harvest field nitrogen "
         "tractor orchard").split()
COMMON = "we propose study results method experiments show improved approach data".split()


def record(n, relevant, rng):
    words = RELEVANT if relevant else OTHER
    title = " ".join(rng.sample(words, 4)).capitalize() + f" {n}"
    abstract = " ".join(rng.choice(words + COMMON) for _ in range(40)) + "."
    return Document.objects.create(
        kind=Document.Kind.PAPER, source="test", key=f"2598.{n:05d}", title=title,
        published=datetime(2025, 3, 1, tzinfo=UTC),
        metadata={"abstract": abstract, "authors": ["Ann Example"]})


def make_screening(people, size=60, share=0.2, overlap=2, seed=3, **settings):
    """(study, relevant item ids): `size` records, `share` of them relevant; `settings`
    override the screening settings (random order share 0 by default, so tests are exact)."""
    study = factories.study("Screening study", owner=people["olive"], overlap=overlap)
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    book = factories.codebook(study, SCREENING_CODEBOOK)
    rng = random.Random(seed)
    relevant = set()
    for n in range(size):
        is_relevant = rng.random() < share
        item = queue.add_item(study, record(n, is_relevant, rng), book)
        if is_relevant:
            relevant.add(item.pk)
    configure(study, question="decision", include=["include"],
              **{"random_share": 0.0, **settings}, user=people["olive"])
    return study, relevant


@pytest.fixture
def screening(people):
    return make_screening(people)


def answer(relevant):
    return ({"decision": "include"} if relevant
            else {"decision": "exclude", "reasons": ["off_topic"]})

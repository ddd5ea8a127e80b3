"""A blank study as a team makes it, a model rater pointed at the test server."""

import re

import pytest

from coding.model_raters.config import configure
from coding.models import Role
from coding.raters.setup import add_rater
from tests import factories
from tests.model_server import ModelServer, user_text

TITLE = re.compile(r"title: Invented paper number (\d+)")


def model_answer(body):
    """What the test server's model answers for paper n: a function of n only."""
    n = int(TITLE.search(user_text(body)).group(1))
    label = "analysis" if n % 3 == 0 else "rl_method"
    answer = {"label": label, "scope": "general" if label == "rl_method" else None,
              "size_b": n if n % 4 else "not_reported", "failures": ["none"],
              "code_released": "yes" if n % 2 else "no", "note": None,
              "evidence": {"label": f"Invented paper number {n}", "scope": None,
                           "size_b": None, "failures": None, "code_released": None,
                           "note": None}}
    return answer


@pytest.fixture
def server():
    running = ModelServer(model_answer, timeout_sleep=1.5).start()
    yield running
    running.stop()


@pytest.fixture
def team(db):
    """A study from nothing: owner, two coders, an adjudicator, a codebook with a
    condition, a special answer and free text, twelve papers, authors blinded."""
    owner, ann, bo, ada = (factories.user(n) for n in ("owner", "ann", "bo", "ada"))
    study = factories.study("Fresh study", owner=owner, blind_authors=True)
    factories.member(study, owner, Role.OWNER)
    factories.member(study, ann, Role.CODER)
    factories.member(study, bo, Role.CODER)
    factories.member(study, ada, Role.ADJUDICATOR)
    codebook = factories.codebook(study)
    items = [factories.paper_item(study, codebook, n) for n in range(1, 13)]
    return {"study": study, "owner": owner, "coders": (ann, bo), "adjudicator": ada,
            "codebook": codebook, "items": items}


@pytest.fixture
def model_rater(team, server):
    rater = add_rater(team["study"], team["owner"], kind="model", name="test-model",
                      model_version="test-coder-8b")
    configure(rater, team["owner"], {"base_url": server.url, "model": "test-coder-8b",
                                     "timeout_seconds": 1, "concurrency": 3})
    return rater

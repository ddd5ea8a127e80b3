"""The inclusion tests' study, built to hand-checkable counts (test_inclusion.py's
docstring gives them); the `tracked` fixture in conftest.py makes it."""

from datetime import UTC, datetime

from coding.models import Decision, Framework, Landing, Method, MethodLink
from tests import factories

VENUES = ["conference", "journal", "preprint"]
PAPER_CODEBOOK = {**factories.SMALL_PAPER_CODEBOOK, "name": "Paper codebook", "questions": [
    *factories.SMALL_PAPER_CODEBOOK["questions"],
    {"key": "venue", "kind": "single", "text": "Venue?",
     "options": [{"value": v, "label": v.title()} for v in VENUES]}]}
# (code released, included) for the 15 general RL-method papers.
GENERAL = [("yes", True)] * 2 + [("yes", False)] * 4 + [("no", True)] * 5 + [("no", False)] * 4


def make_tracked(people):
    study = factories.study("Inclusion study", owner=people["olive"])
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    book = factories.codebook(study, PAPER_CODEBOOK)
    framework = Framework.objects.create(study=study, name="toyrl", repository="example/toyrl")
    rows = [("rl_method", "general", released, included, ["entropy_collapse"] if n < 3 else ["none"])
            for n, (released, included) in enumerate(GENERAL)]
    # Analysis papers, some included: outside the population, never counted.
    rows += [("analysis", None, "yes", True, ["none"])] * 3
    for n, (label, scope, released, included, failures) in enumerate(rows):
        item = factories.paper_item(study, book, 100 + n)
        decided = {"label": label, "code_released": released, "failures": failures,
                   "venue": VENUES[n % 3]}
        if scope:
            decided["scope"] = scope
        for key, value in decided.items():
            Decision.objects.create(item=item, question_key=key, revision=1, value=value,
                                    method=Decision.Method.UNANIMOUS)
        method = Method.objects.create(study=study, name=f"method {n}", first_public="2025-03")
        MethodLink.objects.create(method=method, document=item.document,
                                  kind=MethodLink.Kind.SOURCE)
        if included:
            Landing.objects.create(method=method, framework=framework, option_name=f"opt_{n}",
                                   commit=f"{n:040x}",
                                   committed_at=datetime(2025, 9, 1, tzinfo=UTC))
    return study


GENERAL_ONLY = {"label": "rl_method", "scope": "general"}


def field(analysis, name):
    return next(f for f in analysis["fields"] if f["name"] == name)

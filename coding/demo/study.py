"""The demo study: the RL-inclusion preset with synthetic papers, threads and codings.

Everything is generated from a seed, so two loads give the same study. All
titles, abstracts, names and posts are invented here.
"""

import random
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import transaction

from coding.actions.submit import record_coding
from coding.adjudication.decisions import rebuild_disagreements, settle_study
from coding.agreement.snapshots import take_snapshot
from coding.catalog.names import PART, VALUE, key_of, kind_of, value_of
from coding.codebooks.versions import YES_NO, check_values, create_codebook, is_shown
from coding.demo.histories import build_demo_histories
from coding.labeling.codings import find_quote
from coding.labeling.queue import add_item, assign
from coding.models import Membership, Role, StoredDisagreement, Study
from coding.studies import presets
from coding.studies.setup import add_preset_catalog
from ingest.models import Document, Post

DEMO_SLUG = "rl-inclusion-demo"
DEMO_PASSWORD = "workbench-demo"
DEMO_PEOPLE = [
    ("owner", "Olive", "Owner", Role.OWNER),
    ("coder1", "Cora", "First", Role.CODER),
    ("coder2", "Cyril", "Second", Role.CODER),
    ("coder3", "Celia", "Third", Role.CODER),
    ("adjudicator", "Ada", "Judge", Role.ADJUDICATOR),
]
N_PAPERS = 200
N_THREADS = 50

FIRST = ["Lena", "Tomas", "Priya", "Jun", "Amara", "Felix", "Ines", "Kofi", "Mei", "Ravi",
         "Sofia", "Yusuf", "Hana", "Oskar", "Nadia", "Bruno", "Chen", "Leila", "Marek", "Zola"]
LAST = ["Arden", "Bexley", "Castell", "Dorran", "Elstow", "Fenwick", "Garrow", "Holloway",
        "Ivers", "Jessop", "Kirwan", "Lockley", "Marlow", "Nettle", "Orrin", "Pellow",
        "Quarry", "Rowntree", "Stanger", "Tolland"]
ACADEMIC = ["Northfield Institute of Technology", "University of Eastmere",
            "Lakeshore University", "Graywater College", "Institute for Learning Systems"]
INDUSTRY = ["Lumen AI Lab", "Quillstone Research", "Harbor Compute", "Tessel Labs"]
CATEGORIES = ["cs.LG", "cs.CL", "cs.AI", "stat.ML"]

METHOD_WORDS = ["Clipped", "Asymmetric", "Group-Relative", "Variance-Aware", "Token-Level",
                "Sequence-Level", "Entropy-Preserving", "Length-Normalised", "Decoupled",
                "Adaptive", "Bounded", "Calibrated"]
METHOD_NOUNS = ["Policy Optimisation", "Advantage Estimation", "Trust Regions",
                "Importance Correction", "Rollout Filtering", "Baselines", "KL Control",
                "Credit Assignment"]
DOMAINS = ["theorem proving", "code repair", "tabular question answering", "chemistry tutoring",
           "multi-turn tool use", "legal summarisation", "geometry word problems"]
COMPONENT_OF_NOUN = {
    "Policy Optimisation": "objective", "Advantage Estimation": "advantage",
    "Trust Regions": "clipping", "Importance Correction": "importance_weighting",
    "Rollout Filtering": "rollout_filtering", "Baselines": "advantage",
    "KL Control": "kl_entropy", "Credit Assignment": "credit_assignment",
}
FAILURE_PHRASES = {
    "entropy_collapse": "the policy's entropy collapses early in training",
    "length_bias": "responses drift longer without any gain in accuracy",
    "rollout_training_mismatch": "the rollout engine and the trainer disagree on token probabilities",
    "stale_rollouts": "rollouts go stale in asynchronous pipelines",
    "moe_instability": "mixture-of-experts policies produce extreme ratios",
    "groups_without_signal": "many sampled groups carry no learning signal",
    "growing_kl": "the KL penalty keeps growing",
    "unexplained_collapse": "training diverges without a clear cause",
}


def load_demo(report=lambda done, total=None, message="": None, seed=0):
    """Create the demo study once. Returns a summary; a second call changes nothing."""
    existing = Study.objects.filter(slug=DEMO_SLUG).first()
    if existing:
        # A demo loaded before disagreements were stored gets them (derived data only).
        if not StoredDisagreement.objects.filter(study=existing).exists():
            rebuild_disagreements(existing)
        return {"study": existing.slug, "created": False}
    with transaction.atomic():
        study = _build(random.Random(seed), report)
    return {"study": study.slug, "created": True}


def demo_users():
    """Create or reset the demo accounts; returns {username: user}."""
    User = get_user_model()
    users = {}
    for username, first, last, _ in DEMO_PEOPLE:
        user, created = User.objects.get_or_create(
            username=username, defaults={"first_name": first, "last_name": last}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
        users[username] = user
    # The demo's owner may also start studies of their own (home page: Create a study).
    users["owner"].user_permissions.add(
        Permission.objects.get(content_type__app_label="coding", codename="create_study"))
    return users


def _build(rng, report):
    total = N_PAPERS + N_THREADS + 2
    users = demo_users()
    study = Study.objects.create(
        name="RL methods in open-source frameworks (demo)", slug=DEMO_SLUG,
        description="Which RL post-training methods published on arXiv reach the open-source "
        "RL frameworks, how fast, and how the frameworks review the proposals they get. "
        "Synthetic demo data.",
        blinded_fields=presets.BLINDED_FIELDS, overlap=2, created_by=users["owner"],
    )
    for username, _, _, role in DEMO_PEOPLE:
        Membership.objects.create(study=study, user=users[username], role=role)
    paper_book = create_codebook(study, presets.PAPER_CODEBOOK, users["owner"])
    thread_book = create_codebook(study, presets.THREAD_CODEBOOK, users["owner"])
    add_preset_catalog(study)
    report(1, total, "codebooks and catalog")

    papers = []
    for n in range(N_PAPERS):
        truth, document = _paper(rng, n)
        papers.append((_add_item(study, document, paper_book), truth))
    report(1 + N_PAPERS, total, "papers")
    threads = []
    for n in range(N_THREADS):
        truth, document = _thread(rng, n)
        threads.append((_add_item(study, document, thread_book), truth))
    report(total - 1, total, "threads")
    # The frameworks' histories, with the merged proposals as their pull requests (a seed
    # of their own: the codings below draw from `rng` as before).
    merged = [(item.document.metadata["framework"], truth["method_named"],
               item.document.metadata["number"])
              for item, truth in threads if truth["outcome"] == "merged"]
    build_demo_histories(study, merged)
    report(total - 1, total, "framework histories scanned")

    coders = [users["coder1"], users["coder2"], users["coder3"]]
    for i, (item, truth) in enumerate(papers[:60]):
        for coder in (coders[i % 3], coders[(i + 1) % 3]):
            _code(rng, item, coder, truth)
    for i, (item, truth) in enumerate(threads[:12]):
        for coder in (coders[(i + 1) % 3], coders[(i + 2) % 3]):
            _code(rng, item, coder, truth)
    settle_study(study)
    take_snapshot(study, force=True)  # the agreement page has figures from the start
    report(total, total, "codings, decisions and agreement")
    return study


def _add_item(study, document, codebook):
    return add_item(study, document, codebook)


def _when(rng, start=datetime(2025, 1, 6, tzinfo=UTC), days=540):
    return start + timedelta(days=rng.randrange(days), minutes=rng.randrange(24 * 60))


def _person(rng):
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _paper(rng, n):
    label = rng.choices(
        ["rl_method", "rl_application", "analysis", "systems", "offline_preference",
         "distillation", "out_of_scope"], weights=[40, 20, 12, 10, 8, 5, 5])[0]
    word, noun, domain = rng.choice(METHOD_WORDS), rng.choice(METHOD_NOUNS), rng.choice(DOMAINS)
    failure = rng.choice(list(FAILURE_PHRASES))
    size = rng.choice([0.5, 1.5, 3, 7, 8, 14, 32, 70, "not_reported"])
    industry = rng.random() < 0.35
    truth = {"label": label, "largest_policy_b": size,
             "code_released": rng.choice(["yes", "no"]),
             "industry_author": "yes" if industry else "no",
             "failure_addressed": [failure] if label in ("rl_method", "analysis") else ["none"]}
    if label == "rl_method":
        truth |= {"scope": rng.choices(["general", "embedded", "other"], [70, 25, 5])[0],
                  "component": COMPONENT_OF_NOUN[noun],
                  "changes_existing_loss": rng.choice(["yes", "no"])}
    title, abstract = _paper_text(rng, label, word, noun, domain, failure, size)
    published = _when(rng)
    authors = [_person(rng) for _ in range(rng.randint(2, 6))]
    affiliations = rng.sample(ACADEMIC, 2) + ([rng.choice(INDUSTRY)] if industry else [])
    included = (sorted(rng.sample([f for f, _ in presets.FRAMEWORKS], rng.randint(1, 3)))
                if label == "rl_method" and rng.random() < 0.3 else [])
    key = f"{2501 + n % 18:04d}.{90000 + n:05d}"
    document = Document.objects.create(
        kind=Document.Kind.PAPER, source="demo", key=key, title=title,
        url=f"https://arxiv.org/abs/{key}", published=published, updated=published,
        metadata={
            "abstract": abstract, "authors": authors, "affiliations": affiliations,
            "categories": rng.sample(CATEGORIES, rng.randint(1, 2)),
            "versions": [{"version": "v1", "created": published.isoformat()}],
            "included_in": included,
        },
    )
    return truth, document


def _paper_text(rng, label, word, noun, domain, failure, size):
    scale = "models up to an undisclosed size" if size == "not_reported" else f"policies of up to {size}B parameters"
    problem = FAILURE_PHRASES[failure]
    if label == "rl_method":
        title = f"{word} {noun} for Reinforcement Learning of Language Models"
        abstract = (f"Reinforcement learning with verifiable rewards often fails when {problem}. "
                    f"We propose {word.lower()} {noun.lower()}, a change to the training objective "
                    f"that keeps updates informative. Experiments on {scale} show steadier "
                    f"training and higher accuracy on reasoning benchmarks.")
    elif label == "rl_application":
        title = f"Teaching Language Models {domain.title()} with Verifiable Rewards"
        abstract = (f"We apply group-relative policy optimisation to {domain}, with a verifier "
                    f"written for the domain. Training {scale} improves pass rates over "
                    f"supervised fine-tuning.")
    elif label == "analysis":
        title = f"What Really Matters in {word} {noun}? A Controlled Study"
        abstract = (f"We reproduce recent recipes and ablate their parts on {scale}. We find that "
                    f"{problem} in most settings, and that simple baselines close much of the gap.")
    elif label == "systems":
        title = f"A {word} Pipeline for Fast Asynchronous RL Training"
        abstract = (f"We present a training system that overlaps generation and learning. The "
                    f"objective is unchanged; throughput rises threefold on {scale}.")
    elif label == "offline_preference":
        title = f"{word} Direct Preference Optimisation Without a Reference Model"
        abstract = (f"We revisit offline preference optimisation and propose a reference-free "
                    f"variant, evaluated on {scale}.")
    elif label == "distillation":
        title = f"Distilling Reasoning Traces for {domain.title()}"
        abstract = (f"A student matches a larger teacher's reasoning traces in {domain}; "
                    f"we study {scale}.")
    else:
        title = f"A Benchmark of {domain.title()} Questions"
        abstract = f"We release a benchmark for {domain} and evaluate existing models."
    return title, abstract


THREAD_TEMPLATES = {
    "proposal_pr": "[Feature] Add {method} to the trainer",
    "request_issue": "Support for {method}?",
    "failure_report": "Training collapses: {symptom}",
    "other": "Question about the {method} configuration docs",
}


def _thread(rng, n):
    framework, repo = presets.FRAMEWORKS[n % len(presets.FRAMEWORKS)]
    method_name, _, options = rng.choice(presets.METHODS[:6])
    option = options.get(framework, "new_option")
    if kind_of(option) == PART:  # a thread names the option itself: `is_correction`
        option = key_of(option)
    kind = rng.choices(list(THREAD_TEMPLATES), [40, 30, 20, 10])[0]
    failure = rng.choice(list(FAILURE_PHRASES))
    outcome = rng.choice(["merged", "open_discussion", "open_no_reply", "declined",
                          "redirected", "lapsed"] if kind == "proposal_pr" else
                         ["open_discussion", "open_no_reply", "declined", "redirected", "lapsed"])
    number = 1000 + n * 17
    opened = _when(rng, datetime(2025, 3, 1, tzinfo=UTC), 420)
    proposer = f"{rng.choice(FIRST).lower()}-{rng.choice(LAST).lower()}"
    maintainer = f"{rng.choice(LAST).lower()}-maint"
    bodies = [(proposer, "NONE", _opening_post(kind, method_name, option, failure))]
    if outcome != "open_no_reply":
        bodies.append((maintainer, "MEMBER", _maintainer_reply(rng, outcome, method_name)))
        for _ in range(rng.randint(0, 3)):
            bodies.append((rng.choice([proposer, maintainer, f"{rng.choice(FIRST).lower()}dev"]),
                           rng.choice(["NONE", "CONTRIBUTOR", "MEMBER"]),
                           rng.choice(FOLLOW_UPS).format(option=option)))
    state = "open" if outcome.startswith("open") else "closed"
    truth = {
        "thread_kind": kind, "method_named": method_name, "outcome": outcome,
        "reply_by_other": "yes" if len(bodies) > 1 else "no",
        "concerns": [rng.choice(["design_interface", "tests_docs", "other", "none"])],
        "failure_reported": failure if kind == "failure_report" else "none",
    }
    if outcome in ("declined", "redirected"):
        truth["stated_reasons"] = [rng.choice(
            ["maintenance_burden", "placement", "evidence", "already_covered", "demand"])]
    document = Document.objects.create(
        kind=Document.Kind.THREAD, source="demo", key=f"{repo}#{number}",
        title=THREAD_TEMPLATES[kind].format(method=method_name, symptom=FAILURE_PHRASES[failure]),
        url=f"https://github.com/{repo}/{'pull' if kind == 'proposal_pr' else 'issues'}/{number}",
        published=opened, updated=opened + timedelta(days=len(bodies)),
        metadata={
            "repository": repo, "number": number, "framework": framework,
            "thread_type": "pull_request" if kind == "proposal_pr" else "issue",
            "state": state, "merged": outcome == "merged",
            "labels": ["enhancement"] if kind != "failure_report" else ["bug"],
            "closed_at": None if state == "open" else (opened + timedelta(days=9)).isoformat(),
            "events": [] if state == "open" else [{"event": "closed", "actor": maintainer}],
        },
    )
    Post.objects.bulk_create(
        Post(document=document, position=i, external_id=f"{number}-{i}",
             kind=Post.Kind.OPENING if i == 0 else Post.Kind.COMMENT, author=author,
             author_role=role, created=opened + timedelta(hours=7 * i), body=body)
        for i, (author, role, body) in enumerate(bodies)
    )
    return truth, document


def _opening_post(kind, method_name, option, failure):
    # An option with a value (importance_sampling=seq) is set to it, any other switched on.
    setting = f"{key_of(option)}: {value_of(option)}" if kind_of(option) == VALUE else \
        f"{option}: true"
    if kind == "failure_report":
        return (f"After about 300 steps {FAILURE_PHRASES[failure]}.\n\n"
                f"```yaml\nalgorithm:\n  {setting}\n  rollout_n: 8\n```\n\n"
                "Logs attached. Is this expected?")
    return (f"## Proposal\n\nThis adds **{method_name}** behind a new option `{option}`.\n\n"
            f"```python\nloss = masked_mean(pg_losses, mask)  # {option} changes this line\n```\n\n"
            "- off by default\n- one unit test\n\nHappy to change the interface.")


def _maintainer_reply(rng, outcome, method_name):
    return {
        "merged": "Thanks, this looks good. Could you add a line to the docs? Then we can merge.",
        "open_discussion": f"Interesting. How does {method_name} interact with the existing clip settings?",
        "declined": "We would rather not carry another loss variant; the maintenance cost is high "
                    "and the gains are not yet clear.",
        "redirected": "This fits better in the recipes repository than in the core trainer.",
        "lapsed": "Is this still being worked on?",
    }.get(outcome, "Thanks for the report.")


FOLLOW_UPS = [
    "I ran a quick check with `{option}` enabled and the curves look similar.",
    "Could you share the exact config? Setting `{option}` alone did not reproduce it.",
    "+1, we see the same on our side.",
    "Updated the PR with a test and a docs entry.",
]


def _code(rng, item, coder, truth):
    """Submit the truth with some disagreement, as a real pair of coders would."""
    version = item.codebook.current_version()
    questions = list(version.questions.prefetch_related("options"))
    options = {q.key: [o.value for o in q.options.all()] or (list(YES_NO) if q.kind == "yes_no" else [])
               for q in questions}
    values = dict(truth)
    if rng.random() < 0.25:
        key = rng.choice([k for k in values if options.get(k)])
        values[key] = ([rng.choice(options[key])] if isinstance(values[key], list)
                       else rng.choice(options[key]))
    # A changed answer can open or close conditional questions: keep the set coherent.
    for question in questions:
        if not is_shown(question, values):
            values.pop(question.key, None)
        elif question.key not in values and question.required:
            choice = rng.choice(options[question.key])
            values[question.key] = [choice] if question.kind == "multiple" else choice
    values = check_values(version, values)
    assignment = assign(item, coder)
    evidence, notes = _evidence(item, coder, questions[0].key)
    record_coding(assignment, values, version=version, seconds_spent=rng.randint(40, 400),
                  evidence=evidence, notes=notes)


DEMO_NOTES = ["The abstract names one domain only; the method may still be general.",
              "Read it twice before choosing.",
              "Unsure: the title and the abstract disagree on what is new."]


def _evidence(item, coder, question):
    """A quote from the title for the first question, as a coder takes one with E, and
    now and then a note. Drawn from the document and the coder alone, so the demo's
    answers (the main random stream) stay as they were."""
    draw = random.Random(f"{item.document.key} {coder.username}")
    title = item.document.title
    words = title.split()[:draw.randint(2, 4)]
    span = find_quote(title, " ".join(words))
    evidence = [{"question": question, "field": "title", "quote": title[span[0]:span[1]],
                 "start": span[0], "end": span[1]}] if span else []
    notes = draw.choice(DEMO_NOTES) if draw.random() < 0.15 else ""
    return evidence, notes

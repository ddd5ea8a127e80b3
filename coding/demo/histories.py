"""Small invented git histories for the demo's frameworks, scanned at `load_demo` time so
the catalog, the framework pages and the papers' inclusion fields show real scans on the
first run.

Each framework gets a bare repository under WORKBENCH_VAR_DIR/demo-histories, written by
one `git fast-import` (landings_git.write_history, which the scan benchmark uses too). The histories
hold what real ones do: option names landing as Python code, YAML keys and `--flags`,
committers in several time zones (some late in the evening), a name mentioned in a
comment weeks before its code, a renamed flag, a bulk sync authored weeks before it
was committed, a method switched on by a config value and a name inside a longer flag. Merged proposal threads of the demo are the pull requests that land.
"""

import random
import shutil
from datetime import datetime, timedelta, timezone

from django.conf import settings

from coding.catalog import landings
from coding.catalog.git import write_history
from coding.catalog.names import PART, VALUE, key_of, kind_of, leaf, normal, value_of
from coding.models import OptionName
from coding.studies import presets

ZONES = {"verl": 8, "TRL": -7, "OpenRLHF": 8, "NeMo-RL": -8, "AReaL": 8, "ROLL": 8, "slime": 8}
PEOPLE = ["Lena Arden", "Tomas Bexley", "Priya Castell", "Jun Dorran", "Amara Elstow"]


def build_demo_histories(study, merged=(), seed=0):
    """Write and scan every framework's demo history; `merged` lists (framework, method
    name, pull request number) of the demo's merged proposal threads. Returns the number
    of landings found, or None when git is not installed."""
    if shutil.which("git") is None:
        return None
    root = settings.VAR_DIR / "demo-histories"
    prs = {(framework, method): number for framework, method, number in merged}
    rng = random.Random(seed)
    _add_predecessor_names(study)
    found = 0
    for framework in study.frameworks.order_by("name"):
        commits = _history(rng, framework.name, prs)
        path = write_history(root / framework.name, commits, framework.main_branch)
        found += landings.scan_framework(framework, path)["landings"]
    landings.link_documents(study)
    landings.blind_inclusion(study)
    return found


def _add_predecessor_names(study):
    """slime's TIS flag had an older name: the catalog lists both, as the study's does."""
    slime = study.frameworks.filter(name="slime").first()
    tis = study.methods.filter(name__startswith="Truncated importance sampling").first()
    if slime and tis:
        OptionName.objects.get_or_create(method=tis, framework=slime,
                                         name="enable_off_policy_correction")


def _history(rng, framework, prs):
    hours = ZONES.get(framework, 0)
    zone = timezone(timedelta(hours=hours))
    files = {
        "trainer/config.py": ["from dataclasses import dataclass", "", "", "@dataclass",
                              "class AlgorithmConfig:", "    lr: float = 1e-6"],
        "configs/default.yaml": ["algorithm:", "  lr: 1.0e-6", "  rollout_n: 8"],
        "scripts/run.sh": ["python -m trainer.main \\", "  --rollout-n 8"],
    }
    commits = []

    def commit(message, when, authored=None, extra=None):
        if commits:  # one branch, one clock: each commit after the one before it
            when = max(when, commits[-1]["committed"] + timedelta(hours=1))
        snapshot = {name: "\n".join(lines) + "\n" for name, lines in files.items()}
        snapshot.update(extra or {})
        commits.append({"message": message, "author": rng.choice(PEOPLE), "committed": when,
                        "authored": authored or when, "files": snapshot})

    commit("Initial trainer", datetime(2024, 11, 4, 10, tzinfo=zone))
    landings_due = []
    for position, (method, first_public, options) in enumerate(presets.METHODS):
        option = options.get(framework)
        if not option or rng.random() < 0.25:
            continue
        start = datetime.fromisoformat(first_public + "-01-01"[len(first_public) - 4:]).replace(
            tzinfo=zone)
        delay = timedelta(days=rng.randint(6, 160), hours=rng.randint(9, 23),
                          minutes=rng.choice([0, 15, 30, 45]))
        landings_due.append((start + delay, position, method, option))
    landings_due.sort()
    pr = 200 + rng.randint(0, 40)
    for n, (when, position, method, option) in enumerate(landings_due):
        pr += rng.randint(3, 30)
        number = prs.get((framework, method), pr)
        shape = (position + n) % 3
        if method == "CISPO" and framework in ("verl", "ROLL"):
            # A recipe names it in a comment weeks before the code does: not a landing.
            files["scripts/run.sh"].append(f"# {option}: try it once it is in")
            commit("Recipe notes for the next release", when - timedelta(days=40))
        if method.startswith("Truncated") and framework == "slime":
            files["scripts/run.sh"].append("  --enable-off-policy-correction")
            commit(f"Off-policy correction for rollouts (#{number})", when)
            files["scripts/run.sh"][-1] = f"  --{option.replace('_', '-')}"
            commit(f"Rename the off-policy flag to --use-tis (#{number + 11})",
                   when + timedelta(days=23))
            continue
        kind, key = kind_of(option), key_of(option)
        if kind == VALUE:  # switched on by a value: a config key set to it
            *parents, last = normal(key).split(".")
            files["configs/default.yaml"] += [f"  {'  ' * depth}{parent}:"
                                              for depth, parent in enumerate(parents)]
            files["configs/default.yaml"].append(
                f"  {'  ' * len(parents)}{last}: {value_of(option)}")
        elif kind == PART:  # the name inside a longer flag
            files["scripts/run.sh"].append(f"  --enable-vllm-{normal(key).replace('_', '-')}")
        elif shape == 0 and "-" not in option:
            files["trainer/config.py"].append(f"    {normal(option)}: bool = False")
        elif shape == 1:
            files["configs/default.yaml"].append(f"  {leaf(option)}: false")
        else:
            files["scripts/run.sh"].append(f"  --{normal(option).replace('_', '-')}")
        if framework == "ROLL" and n == len(landings_due) - 1:
            # The last one arrives in a sync of internal work, authored three weeks before.
            bulk = {f"roll/pipeline/part_{k}.py": f"STEP = {k}\n"
                    for k in range(landings.BULK_FILES)}
            commit("Sync internal changes", when, authored=when - timedelta(days=21), extra=bulk)
            continue
        commit(f"Add {method} ({_option_text(option)}) (#{number})", when)
    commit("Docs and version bump", max(c["committed"] for c in commits) + timedelta(days=3),
           extra={"README.md": f"# {framework}\n\nA demo history.\n"})
    return commits


def _option_text(option):
    return option if "-" in option else f"`{key_of(option)}`"

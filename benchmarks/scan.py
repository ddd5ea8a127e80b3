"""History scan at size: a generated history of 5,000 commits searched for 30 option names,
beside `git log -p` reading the same history in the same run.

    .venv/bin/python benchmarks/scan.py [--commits 5000] [--names 30] [--repeat 3] [--pickaxe]

No database: the scan itself (coding.catalog.git.scan), which is what a framework scan
spends its time on; recording a few dozen hits afterwards is a handful of rows.

The history (written by one `git fast-import`, landings_git.write_history): 120 files
(Python, YAML, shell) that grow as commits change one to three of them; 24 of the names
land at random points (as Python code, a YAML key or a `--flag`), 3 only ever appear in
comments, 3 never appear, so the scan reads the whole history; one commit in 100 is a
bulk change of 40 files. Timed, alternating, --repeat runs each:
  (a) ours: `scan(repo, "main", names)`: one `git log --raw` and one `git cat-file --batch`;
  (b) the reference: `git log -p --first-parent --reverse main`, output read and dropped:
      git producing every patch of the same history, which any diff-reading scan needs
      at least (reading its text in Python would come on top);
  (c) with --pickaxe, the scan before issue 18: one `git log -S<name>` per name (the
      commit lists only; it then ran `git show` per candidate commit besides).
Printed: median wall seconds and CPU seconds (children included) of each, blobs read,
names found, and ours as a multiple of the reference; then the time to judge every hit's
rename flag again (landings_git.judge), which each framework scan adds after reading.
"""

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import target  # noqa: E402
from coding.catalog import git as landings_git  # noqa: E402

WORDS = ["clip", "ratio", "high", "seq", "level", "filter", "groups", "norm", "adv", "std",
         "tis", "cispo", "mask", "kl", "entropy", "dual", "token", "mean", "sum", "bound"]


def names_for(rng, count):
    found = set()
    while len(found) < count:
        found.add("_".join(rng.sample(WORDS, rng.randint(2, 4))))
    return sorted(found)


def history(rng, commits, names):
    files = {}
    for n in range(120):
        kind = ("py", "yaml", "sh")[n % 3]
        files[f"pkg/part_{n}.{kind}"] = [f"value_{n}_{k} = {k}" if kind == "py" else
                                         f"key_{n}_{k}: {k}" if kind == "yaml" else
                                         f"echo step_{n}_{k}" for k in range(20)]
    landing_names, comment_names = names[:24], names[24:27]
    margin = min(50, commits // 4)  # landings away from both ends, at any --commits
    when = {rng.randrange(margin, commits - margin): name for name in landing_names}
    comments = {rng.randrange(margin, commits - margin): name for name in comment_names}
    start = datetime(2024, 1, 1, 9, tzinfo=timezone(timedelta(hours=rng.choice([-7, 0, 8]))))
    out, paths = [], sorted(files)
    for c in range(commits):
        touched = rng.sample(paths, 40 if c % 100 == 99 else rng.randint(1, 3))
        for path in touched:
            lines = files[path]
            lines.append(f"# step {c}" if path.endswith((".py", ".sh")) else f"step_{c}: {c}")
            if len(lines) > 200:
                del lines[20:40]
        if c in when:
            name, path = when[c], touched[0]
            files[path].append(f"{name} = True" if path.endswith(".py") else
                               f"{name}: true" if path.endswith(".yaml") else
                               f"run --{name.replace('_', '-')}")
        if c in comments:
            files[touched[0]].append(f"# {comments[c]} later")
        moment = start + timedelta(hours=3 * c)
        out.append({"message": f"Change {c} (#{c + 1})", "author": "Bench Mark",
                    "authored": moment, "committed": moment,
                    "files": {p: "\n".join(files[p]) + "\n" for p in touched}})
    return out


def timed(fn):
    before = os.times()
    start = time.perf_counter()
    result = fn()
    wall = time.perf_counter() - start
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])
    return wall, cpu, result


def reference(repo):
    with subprocess.Popen(["git", "-C", str(repo), "log", "-p", "--first-parent", "--reverse",
                           "main"], stdout=subprocess.PIPE) as process:
        size = 0
        while chunk := process.stdout.read(1 << 20):
            size += len(chunk)
    return size


def pickaxe(repo, names):
    return sum(len(subprocess.run(
        ["git", "-C", str(repo), "log", "--first-parent", "--format=%H", f"-S{name}", "main"],
        capture_output=True, check=True).stdout.split()) for name in names)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--names", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pickaxe", action="store_true")
    args = parser.parse_args()
    rng = random.Random(18)
    names = names_for(rng, args.names)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "history"
        wall, _, _ = timed(lambda: landings_git.write_history(repo, history(rng, args.commits,
                                                                           names)))
        print(f"history: {args.commits} commits, {len(names)} names, written in {wall:.1f} s "
              f"(git {subprocess.run(['git', '--version'], capture_output=True, text=True).stdout.split()[-1]})")
        ours, ref, pick = [], [], []
        for _ in range(args.repeat):
            ours.append(timed(lambda: landings_git.scan(repo, "main", names)))
            ref.append(timed(lambda: reference(repo)))
            if args.pickaxe:
                pick.append(timed(lambda: pickaxe(repo, names)))
        found = ours[-1][2]
        print(f"ours       {statistics.median(w for w, _, _ in ours):6.2f} s wall "
              f"{statistics.median(c for _, c, _ in ours):6.2f} s CPU  "
              f"{found.commits_read} commits, {found.blobs_read} blobs read, "
              f"{len(found.first)} names found in code, {len(found.mentions)} mentioned only")
        print(f"reference  {statistics.median(w for w, _, _ in ref):6.2f} s wall "
              f"{statistics.median(c for _, c, _ in ref):6.2f} s CPU  "
              f"git log -p, {ref[-1][2] / 1e6:.0f} MB of patches")
        if pick:
            print(f"pickaxe    {statistics.median(w for w, _, _ in pick):6.2f} s wall "
                  f"{statistics.median(c for _, c, _ in pick):6.2f} s CPU  "
                  f"one git log -S per name")
        # What every framework scan adds since issue 40: each hit's commit read again to
        # judge its rename flag with the whole catalog (landings_git.judge).
        at = {name: hit.commit.sha for name, hit in found.first.items()}
        judged = [timed(lambda: landings_git.judge(repo, at, names, {}))
                  for _ in range(args.repeat)]
        print(f"judging    {statistics.median(w for w, _, _ in judged):6.2f} s wall "
              f"{statistics.median(c for _, c, _ in judged):6.2f} s CPU  "
              f"the {len(at)} hits' commits read again for their rename flags")
        ratio = statistics.median(w for w, _, _ in ours) / statistics.median(w for w, _, _ in ref)
        print(f"ours / reference: {ratio:.2f}x; peak RSS of this process "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; load "
              f"{os.getloadavg()[0]:.2f}")
        print(target(f"history scan: {args.commits:,} commits, {len(names)} option names",
                     "within 3x `git log -p` of the same history", f"{ratio:.2f}x",
                     ratio <= 3))


if __name__ == "__main__":
    main()

"""Every benchmark script and the arguments of each size it runs at.

    .venv/bin/python benchmarks/suite.py --scale smoke [--only load,pages]
    .venv/bin/python benchmarks/suite.py --scale 10k --write docs/performance.md

`smoke` is each script at its smallest size: it checks that the script still runs to its
end and that its own correctness checks hold (identical alphas, no coding lost, every
request answered as expected), in well under a minute a script. CI runs it through
tests/benchmarks/test_smoke_*.py, so a benchmark cannot rot unnoticed; its figures mean
nothing at that size and nothing is judged on them. `10k`, `100k` and `1m` run each at that
many items (`make bench [SCALE=…]`): every script prints its target lines (benchmarks/
machine.py), which are gathered into one table, met or missed, and written into
docs/performance.md between its markers.

A script runs in a process of its own with a queue name and var folder of its own
(WORKBENCH_QUEUE, WORKBENCH_VAR_DIR), so a run never takes another's tasks or files; only
the scripts that start their own Celery worker (load, pages) keep REDIS_URL, the others run
their jobs in process. Each makes and drops its own scratch database (benchmarks/scratch.py).
"""

import argparse
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HELPERS = {"scratch.py", "suite.py", "machine.py"}  # modules the scripts share, not benchmarks


@dataclass(frozen=True)
class Script:
    smoke: dict                      # {"smoke": arguments}: its smallest size
    scaled: object                   # items -> the arguments of a run at that size
    postgresql: bool = False         # writes with COPY, or serves through gunicorn
    redis: bool = False              # starts a Celery worker of its own
    prints: str = ""                 # a line a finished run always prints
    files: dict = field(default_factory=dict)  # name -> function(path) writing an input


def tiny_screening_set(path):
    """A labelled set in ASReview's CSV shape, invented: every sixth record included."""
    words = {True: "reward policy rollout critic verifier", False: "soil crop harvest tractor"}
    lines = ["record_id,title,abstract,label_included"]
    for n in range(120):
        included = n % 6 == 0
        lines.append(f"{n + 1},Invented title {n} {words[included]},An invented abstract on "
                     f"{words[included]} number {n},{int(included)}")
    path.write_text("\n".join(lines) + "\n")


SCALES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}


def part(n, share, least=1):
    return str(max(least, int(n * share)))


SCRIPTS = {
    "agreement": Script(
        {"smoke": ["--scale", "0.002", "--repeats", "1", "--study", "--items", "200"]},
        # Issue 42's five shapes (1M x 3 nominal ...) whatever the scale: the targets name them.
        lambda n: ["--repeats", "5"],
        prints="krippendorff.alpha, 18 matrices"),
    "agreement_report": Script(
        {"smoke": ["--sizes", "200"]}, lambda n: ["--sizes", str(n)],
        postgresql=True, prints="target at 200 items"),
    "export": Script(
        {"smoke": ["--rows", "2000", "--small", "1000", "--repeat", "1", "--e2e-rows", "1000"]},
        lambda n: ["--rows", str(n), "--small", part(n, 0.2), "--repeat", "3", "--e2e-rows",
                   part(n, 0.2)],
        prints="rows.long alone"),
    "export_study": Script(
        {"smoke": ["--sizes", "200", "--no-trace"]},
        lambda n: ["--sizes", str(n), "--no-trace"],
        postgresql=True, prints="pyarrow"),
    "ingest": Script(
        {"smoke": ["--records", "500"]}, lambda n: ["--records", str(max(n, 200_000))],
        prints="records/s"),
    "load": Script(
        {"smoke": ["--coders", "2", "--seconds", "3", "--items", "200", "--workers", "1",
                   "--alone", "3"]},
        lambda n: ["--coders", "50", "--seconds", "20", "--items", str(min(n, 100_000))],
        postgresql=True, redis=True, prints="all checks passed"),
    "model_rater": Script(
        {"smoke": ["--items", "50"]}, lambda n: ["--items", str(min(n, 10_000))],
        prints="second run: 50 of 50"),
    "pages": Script(
        {"smoke": ["--sizes", "200", "--requests", "2", "--warmups", "0", "--job-runs", "1"]},
        lambda n: ["--sizes", f"1000,{n}"],
        postgresql=True, redis=True, prints="export job: slowest run"),
    "qdpx": Script(
        {"smoke": ["--sizes", "200", "--repeat", "1"]},
        # Issue 41's target names 100,000 items; at 1M the study is built ten times over.
        lambda n: ["--sizes", str(min(n, 100_000)), "--repeat", "3"],
        postgresql=True, prints="REFI-QDA schema"),
    "queue": Script(
        {"smoke": ["--items", "500", "--coders", "1,2", "--seconds", "1", "--paced", "2",
                   "--think", "0.1", "--paced-seconds", "2", "--calibration", "1"]},
        lambda n: ["--items", str(n), "--paced-seconds", "60"],
        prints="paced"),
    "raters_import": Script(
        {"smoke": ["--rows", "200", "--repeat", "1"]},
        lambda n: ["--rows", str(min(n, 100_000)), "--repeat", "3"], prints="re-import"),
    "scan": Script(
        {"smoke": ["--commits", "200", "--repeat", "1"]}, lambda n: ["--repeat", "3"],
        prints="ours / reference"),
    "screening": Script(
        {"smoke": ["{screening.csv}", "--seeds", "1", "--skip-asreview", "--repeats", "1",
                   "--latency-sizes", "1000"]},
        lambda n: [str(ROOT.parent / "shared/screening/Nagtegaal_2019.csv"), "--seeds", "3",
                   "--latency-sizes", str(min(n, 100_000))],
        prints="stopping rule", files={"screening.csv": tiny_screening_set}),
    "screening_serve": Script(
        {"smoke": ["--records", "500", "--calls", "10"]},
        lambda n: ["--records", str(n), "--calls", "300"], prints="ranked next record"),
}


def scripts_on_disk():
    return sorted(p.stem for p in HERE.glob("*.py") if p.name not in HELPERS)


def cannot_run(name, environ=os.environ):
    """Why the script cannot run with these services, or ''."""
    script = SCRIPTS[name]
    if script.postgresql and not environ.get("DATABASE_URL", "").startswith("postgres"):
        return f"{name}.py needs PostgreSQL: set DATABASE_URL"
    if script.redis and not environ.get("REDIS_URL"):
        return f"{name}.py starts a Celery worker on Redis: set REDIS_URL"
    return ""


def run(name, scale, folder, timeout=900):
    """Run one script at one scale in a process of its own; a CompletedProcess whose
    stdout holds what it printed, stderr after it."""
    script = SCRIPTS[name]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    inputs = {}
    for file_name, write in script.files.items():
        inputs[file_name] = folder / file_name
        write(inputs[file_name])
    wanted = script.smoke[scale] if scale == "smoke" else script.scaled(SCALES[scale])
    arguments = [inputs[a[1:-1]] if a.startswith("{") else a for a in wanted]
    env = dict(os.environ, WORKBENCH_QUEUE=f"bench-{name}-{uuid.uuid4().hex[:8]}",
               WORKBENCH_VAR_DIR=str(folder / "var"), PYTHONUNBUFFERED="1")
    if not script.redis:
        env.pop("REDIS_URL", None)
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-" + "x" * 40)
    return subprocess.run([sys.executable, str(HERE / f"{name}.py"), *map(str, arguments)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=["smoke", *SCALES], default="smoke")
    parser.add_argument("--only", default="", help="comma-separated script names")
    parser.add_argument("--write", default="", help=(
        "a Markdown file whose generated section (between the markers) gets the table"))
    args = parser.parse_args()
    names = args.only.split(",") if args.only else sorted(SCRIPTS)
    import tempfile

    failed, runs, machine = [], [], ""
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as folder:
        for name in names:
            why = cannot_run(name)
            if why:
                print(f"{name:<18} skipped: {why}", flush=True)
                runs.append(Ran(name, "skipped", why))
                continue
            started = time.perf_counter()
            done = run(name, args.scale, Path(folder) / name, timeout=None)
            # The line a smoke run always prints; a larger run may leave its part out.
            ok = done.returncode == 0 and (args.scale != "smoke"
                                           or SCRIPTS[name].prints in done.stdout)
            seconds = time.perf_counter() - started
            print(f"{name:<18} {'ok' if ok else 'FAILED'} in {seconds:.0f} s", flush=True)
            if args.scale != "smoke" or not ok:
                print(done.stdout + done.stderr, flush=True)
            if not ok:
                failed.append(name)
            machine = machine or next((line for line in done.stdout.splitlines()
                                       if line.startswith("machine: ")), "")
            runs.append(Ran(name, "ok" if ok else "FAILED", f"{seconds:.0f} s",
                            targets(done.stdout)))
    if args.scale != "smoke":
        table = report(args.scale, machine, runs)
        print("\n" + table)
        if args.write:
            write_section(Path(args.write), table)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


@dataclass
class Ran:
    name: str
    status: str  # ok, FAILED or skipped
    note: str  # how long it took, or why it was skipped
    targets: list = field(default_factory=list)  # (what, wanted, figure, verdict)


def targets(output):
    """The target lines a script printed (benchmarks/machine.py target)."""
    found = []
    for line in output.splitlines():
        if line.startswith("target | "):
            cells = [cell.strip() for cell in line.split(" | ")[1:]]
            if len(cells) == 4:
                found.append(tuple(cells))
    return found


def report(scale, machine, runs):
    """The run as one Markdown table: every target of every script, met or missed, and the
    scripts that printed none, were skipped or failed."""
    import datetime

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "?"
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    met = sum(1 for r in runs for t in r.targets if t[3] == "met")
    counted = sum(len(r.targets) for r in runs)
    lines = [f"`make bench SCALE={scale}` on {when}, commit {commit}; "
             f"{machine.removeprefix('machine: ').split('; ')[0] or 'machine not printed'}. "
             f"{met} of {counted} targets met.", "",
             "| script | what | target | figure | met? |", "|---|---|---|---|---|"]
    for r in runs:
        for what, wanted, figure, verdict in r.targets:
            lines.append(f"| {r.name} | {what} | {wanted} | {figure} | {verdict} |")
        if not r.targets:
            said = {"skipped": f"skipped: {r.note}", "FAILED": "FAILED: see its output",
                    "ok": "ran; prints no target line yet (see its output)"}[r.status]
            lines.append(f"| {r.name} | | | {said} | |")
    return "\n".join(lines)


BEGIN, END = "<!-- make bench: begin -->", "<!-- make bench: end -->"


def write_section(path, table):
    """Put the table between the markers of `path` (added at its end if absent)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    section = f"{BEGIN}\n{table}\n{END}"
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + section + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

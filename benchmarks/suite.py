"""Every benchmark script and the arguments of each size it runs at.

    .venv/bin/python benchmarks/suite.py --scale smoke [--only load,pages]

`smoke` is each script at its smallest size: it checks that the script still runs to its
end and that its own correctness checks hold (identical alphas, no coding lost, every
request answered as expected), in well under a minute a script. CI runs it through
tests/benchmarks/test_smoke_*.py, so a benchmark cannot rot unnoticed; its figures mean
nothing at that size and nothing is judged on them. `documented` runs each at the sizes
its docstring and docs/performance.md give.

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
    sizes: dict                      # scale -> arguments
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


SCRIPTS = {
    "agreement": Script(
        {"smoke": ["--scale", "0.002", "--repeats", "1", "--study", "--items", "200"],
         "documented": ["--study"]},
        prints="krippendorff.alpha, 18 matrices"),
    "agreement_report": Script(
        {"smoke": ["--sizes", "200"], "documented": []},
        postgresql=True, prints="target at 200 items"),
    "export": Script(
        {"smoke": ["--rows", "2000", "--small", "1000", "--repeat", "1", "--e2e-rows", "1000"],
         "documented": []},
        prints="rows.long alone"),
    "export_study": Script(
        {"smoke": ["--sizes", "200", "--no-trace"], "documented": []},
        postgresql=True, prints="pyarrow"),
    "ingest": Script(
        {"smoke": ["--records", "500"], "documented": []}, prints="records/s"),
    "load": Script(
        {"smoke": ["--coders", "2", "--seconds", "3", "--items", "200", "--workers", "1",
                   "--alone", "3"],
         "documented": []},
        postgresql=True, redis=True, prints="all checks passed"),
    "model_rater": Script(
        {"smoke": ["--items", "50"], "documented": []}, prints="second run: 50 of 50"),
    "pages": Script(
        {"smoke": ["--sizes", "200", "--requests", "2", "--warmups", "0", "--job-runs", "1"],
         "documented": []},
        postgresql=True, redis=True, prints="export job: slowest run"),
    "queue": Script(
        {"smoke": ["--items", "500", "--coders", "1,2", "--seconds", "1", "--paced", "2",
                   "--think", "0.1", "--paced-seconds", "2", "--calibration", "1"],
         "documented": []},
        prints="paced"),
    "raters_import": Script(
        {"smoke": ["--rows", "200", "--repeat", "1"], "documented": []}, prints="re-import"),
    "scan": Script(
        {"smoke": ["--commits", "200", "--repeat", "1"], "documented": []},
        prints="ours / reference"),
    "screening": Script(
        {"smoke": ["{screening.csv}", "--seeds", "1", "--skip-asreview", "--repeats", "1",
                   "--latency-sizes", "1000"],
         "documented": [str(ROOT.parent / "shared/screening/Nagtegaal_2019.csv")]},
        prints="stopping rule", files={"screening.csv": tiny_screening_set}),
    "screening_serve": Script(
        {"smoke": ["--records", "500", "--calls", "10"], "documented": []},
        prints="ranked next record"),
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
    arguments = [inputs[a[1:-1]] if a.startswith("{") else a for a in script.sizes[scale]]
    env = dict(os.environ, WORKBENCH_QUEUE=f"bench-{name}-{uuid.uuid4().hex[:8]}",
               WORKBENCH_VAR_DIR=str(folder / "var"), PYTHONUNBUFFERED="1")
    if not script.redis:
        env.pop("REDIS_URL", None)
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-" + "x" * 40)
    return subprocess.run([sys.executable, str(HERE / f"{name}.py"), *map(str, arguments)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=["smoke", "documented"], default="smoke")
    parser.add_argument("--only", default="", help="comma-separated script names")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else sorted(SCRIPTS)
    import tempfile

    failed = []
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as folder:
        for name in names:
            why = cannot_run(name)
            if why:
                print(f"{name:<18} skipped: {why}", flush=True)
                continue
            started = time.perf_counter()
            done = run(name, args.scale, Path(folder) / name, timeout=None)
            ok = done.returncode == 0 and SCRIPTS[name].prints in done.stdout
            print(f"{name:<18} {'ok' if ok else 'FAILED'} in "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
            if args.scale != "smoke" or not ok:
                print(done.stdout + done.stderr, flush=True)
            if not ok:
                failed.append(name)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()

"""A study exported as a REFI-QDA project (.qdpx, issue 41), beside lxml writing the same XML.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=x \\
        .venv/bin/python benchmarks/qdpx.py [--sizes 10000,100000] [--repeat 3]

Target: a 100,000-item study with two coders' codings on each item exports in under 60 s
and under 500 MB peak memory (issue 41).

The data: the study benchmarks/pages.py builds (its `build_study`, imported: 3 coders,
overlap 2, so each complete item has two coders' codings, decisions, a reliability sample),
written with COPY into a scratch database of its own (benchmarks/scratch.py,
`<DATABASE_URL's name>_qdpx_bench`, PostgreSQL only), dropped at the end.

Timed, each in a fresh Python process: `coding.export.qdpx.build_qdpx` of the whole study
at owner level (what the export_qdpx job runs): wall and CPU seconds and the process's
peak RSS (VmHWM), and "added": the peak less the RSS once Django is loaded. The reference,
in the same run, in its own process: the project.qde just written, parsed with lxml
(untimed), then written again element by element with lxml's incremental writer
(`etree.xmlfile`) into a zip entry, with each source's text beside it: what writing the
same XML and texts costs with lxml when the data is already in memory. The exported
project.qde is checked against the REFI-QDA schema (../shared/refi-qda/Project.xsd) in
the reference's process, untimed; the line says when the schema is absent.
"""

import sys  # noqa: I001
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path.pop(0)  # benchmarks/queue.py would shadow the standard library's queue
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import zipfile  # noqa: E402

from benchmarks.machine import footer, header, target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

SEED = 20_261_207
MAX_ITEMS = 1_000_000
TARGET_SECONDS, TARGET_MB = 60, 500
SCHEMA = next((p for p in (ROOT.parent / "shared/refi-qda/Project.xsd",
                           Path("/work/shared/refi-qda/Project.xsd")) if p.is_file()),
              ROOT.parent / "shared/refi-qda/Project.xsd")


def say(*parts):
    print(*parts, flush=True)


def rss_mb(field="VmHWM"):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field)) / 1024


# --- child processes ------------------------------------------------------------------

def child(task, slug, out):
    import django

    django.setup()
    print(json.dumps(ours(slug, out) if task == "ours" else reference(out)))


def ours(slug, out):
    from coding.export.qdpx import build_qdpx
    from coding.models import Study

    study = Study.objects.get(slug=slug)
    before = rss_mb("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    summary = build_qdpx(study, out)
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
            "rss_peak": rss_mb(), "rss_before": before, **summary}


def reference(path):
    from lxml import etree

    with zipfile.ZipFile(path) as archive:
        root = etree.fromstring(archive.read("project.qde"),
                                etree.XMLParser(huge_tree=True, resolve_entities=False))
        texts = [(name, archive.read(name)) for name in archive.namelist()
                 if name.startswith("sources/")]
    valid = "schema absent"
    if SCHEMA.exists():
        schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
        valid = "valid" if schema.validate(root.getroottree()) else \
            f"INVALID: {schema.error_log.last_error}"
    with tempfile.TemporaryDirectory() as folder:
        target_path = Path(folder) / "reference.qdpx"
        wall, cpu = time.perf_counter(), time.process_time()
        with zipfile.ZipFile(target_path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as out:
            for name, data in texts:
                out.writestr(name, data)
            with out.open("project.qde", "w", force_zip64=True) as raw:
                with etree.xmlfile(raw, encoding="utf-8") as xf:
                    xf.write_declaration()
                    _write(xf, root)
        figures = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                   "bytes": target_path.stat().st_size}
    return {**figures, "valid": valid, "rss_peak": rss_mb()}


def _write(xf, element):
    with xf.element(element.tag, dict(element.attrib), nsmap=element.nsmap
                    if element.getparent() is None else None):
        if element.text:
            xf.write(element.text)
        for child_element in element:
            _write(xf, child_element)


def run_child(task, slug="", out=""):
    done = subprocess.run([sys.executable, __file__, "--child", task, slug, out],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the {task} run failed:\n{done.stderr[-6000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- the parent ---------------------------------------------------------------------

def main():
    if sys.argv[1:2] == ["--child"]:
        return child(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        parser.error("PostgreSQL only: set DATABASE_URL (the study is written with COPY)")
    if any(not 0 < s <= MAX_ITEMS for s in sizes) or not 1 <= args.repeat <= 10:
        parser.error(f"sizes 1 to {MAX_ITEMS:,}, --repeat 1 to 10")
    var = tempfile.mkdtemp(prefix="qdpx-bench-")
    os.environ["WORKBENCH_VAR_DIR"] = var
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SECRET_KEY", "qdpx-bench")
    scratch = use_scratch_database("qdpx")
    results = []
    try:
        import django

        django.setup()
        import lxml
        from django.contrib.auth.hashers import make_password
        from django.core.management import call_command
        from django.db import connection

        from benchmarks.pages import build_study, vacuum_analyze

        call_command("migrate", verbosity=0)
        say(header(f"lxml {lxml.__version__}"))
        password, rng = make_password("qdpx-bench"), random.Random(SEED)
        for size in sizes:
            say(f"\n== {size:,} items ==")
            start = time.perf_counter()
            built = build_study(size, password, rng)
            vacuum_analyze()
            say(f"  built in {time.perf_counter() - start:.0f} s: {built.complete:,} complete "
                f"items, {built.codings:,} codings, {built.decisions:,} decisions")
            connection.close()  # the children open their own
            say("  load average before: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
            runs, refs = [], []
            for n in range(args.repeat):  # interleaved: ours, then the reference, each time
                out = str(Path(var) / f"{size}-{n}.qdpx")
                runs.append(run_child("ours", built.study.slug, out))
                refs.append(run_child("reference", out=out))
                if n:
                    Path(out).unlink()
            say("  load average after: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
            first = Path(var) / f"{size}-0.qdpx"
            runs_same = all(r["bytes"] == runs[0]["bytes"] for r in runs)
            result = {"size": size, "wall": statistics.median(r["wall"] for r in runs),
                      "best": min(r["wall"] for r in runs),
                      "cpu": statistics.median(r["cpu"] for r in runs),
                      "rss_peak": statistics.median(r["rss_peak"] for r in runs),
                      "added": statistics.median(r["rss_peak"] - r["rss_before"] for r in runs),
                      "ref": statistics.median(r["wall"] for r in refs),
                      "ref_best": min(r["wall"] for r in refs), "valid": refs[0]["valid"],
                      **{k: runs[0][k] for k in ("sources", "codings", "selections", "notes",
                                                 "bytes")}}
            first.unlink()
            results.append(result)
            say(f"  ours: {result['sources']:,} sources, {result['codings']:,} codings on "
                f"{result['selections']:,} selections, {result['notes']:,} notes, "
                f"{result['bytes'] / 1e6:.1f} MB; median {result['wall']:.1f} s (best "
                f"{result['best']:.1f}), CPU {result['cpu']:.1f} s, peak RSS "
                f"{result['rss_peak']:.0f} MB ({result['added']:.0f} MB over Django loaded); "
                f"runs " + ", ".join(f"{r['wall']:.1f}" for r in runs) + " s; same size "
                f"every run: {runs_same}")
            say(f"  lxml writing the same XML and texts from memory: median {result['ref']:.1f} s"
                f" (best {result['ref_best']:.1f}); ours takes "
                f"{result['wall'] / max(result['ref'], 1e-9):.1f}x that; project.qde against "
                f"the REFI-QDA schema: {result['valid']}")
            if result["valid"] not in ("valid", "schema absent"):
                raise SystemExit(f"the exported project does not validate: {result['valid']}")
        for r in results:
            say(target(f"qdpx export: a {r['size']:,}-item study, two coders' codings",
                       f"under {TARGET_SECONDS} s and {TARGET_MB} MB",
                       f"{r['wall']:.1f} s, {r['rss_peak']:,.0f} MB (lxml from memory "
                       f"{r['ref']:.1f} s)",
                       r["wall"] < TARGET_SECONDS and r["rss_peak"] < TARGET_MB))
        say(footer())
    finally:
        drop_scratch_database(scratch)
        shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()

"""A model rater's run over 10,000 items against a local OpenAI-compatible server: the
workbench's own overhead per item beside the bare round trip, memory, and the cache.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=… \\
        .venv/bin/python benchmarks/model_rater.py [--items 10000] [--concurrency 1]

A scratch database of its own (benchmarks/scratch.py; SQLite in a temporary folder without
DATABASE_URL), migrated, with one study of --items invented papers and the tests' small
paper codebook (a condition, a special answer, free text). The server is the tests' own
(tests/model_server.py) in a process of its own, answering every request with one valid
answer in the protocol's wire format. Then, in this process:

- the bare round trip (the reference): the run's own request bodies, built beforehand,
  posted one after another on one kept-alive connection with httpx and read as JSON;
  timed before the run and again after it (the two passes' best is the reference);
- the run: `start_run` over every item with --concurrency (1 by default, so each item's
  time is its round trip plus the workbench's work: the prompt, the cache lookup, the
  call through the `openai` client, reading and checking the answer, writing the call and
  the codings), its wall time per item; overhead = run per item - bare per item;
- memory: this process's resident set, sampled every 0.2 s during the run, at 10% of the
  run and at its end;
- a second run over the same items: how many requests reached the server (0 when the
  cache serves all) and its time per item.

Target (issue 38): overhead under 5 ms per item at 10,000 items, memory flat, the second run
served entirely from the cache.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path[0] = str(Path(__file__).resolve().parents[1])
from benchmarks.machine import footer, header, target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ANSWER = {"label": "analysis", "scope": None, "size_b": 7, "failures": ["none"],
          "code_released": "no", "note": None,
          "evidence": {"label": None, "scope": None, "size_b": None, "failures": None,
                       "code_released": None, "note": None}}
SERVER = f"""
import json, sys, time
sys.path.insert(0, {str(ROOT)!r})
from tests.model_server import ModelServer
answer = json.loads({json.dumps(json.dumps(ANSWER))})
server = ModelServer(lambda body: answer).start()
print(server.url, flush=True)
for line in sys.stdin:
    print(len(server.requests), flush=True)
"""


def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def build(count):
    from django.contrib.auth import get_user_model

    from coding.codebooks.versions import create_codebook
    from coding.labeling.queue import unit_hash
    from coding.models import Item, Membership, Role, Study
    from ingest.models import Document, Snapshot, content_sha256
    from tests.factories import SMALL_PAPER_CODEBOOK

    owner = get_user_model().objects.create_user("olive")
    study = Study.objects.create(name="Model rater bench", created_by=owner)
    Membership.objects.create(study=study, user=owner, role=Role.OWNER)
    book = create_codebook(study, SMALL_PAPER_CODEBOOK)
    for start in range(0, count, 5000):
        docs = Document.objects.bulk_create([Document(
            kind="paper", source="bench", key=f"2596.{n:06d}",
            title=f"An invented study of reward shaping number {n}",
            metadata={"abstract": f"We invent method {n} and measure it on invented tasks. "
                      * 6, "authors": ["Ann Example"]}) for n in range(start, min(
                          start + 5000, count))])
        snaps = Snapshot.objects.bulk_create([Snapshot(
            document=doc, number=1, content=doc.content(),
            sha256=content_sha256(doc.content())) for doc in docs])
        Item.objects.bulk_create([Item(study=study, document=doc, snapshot=snap, codebook=book,
                                       random_key=unit_hash(study.queue_seed, doc.pk))
                                  for doc, snap in zip(docs, snaps)])
    return study, owner


def bodies(machine, study):
    from coding.codebooks.versions import published_version
    from coding.model_raters import prompts

    items = list(study.items.select_related("snapshot", "study").order_by("pk"))
    version = published_version(items[0].codebook_id)
    system = prompts.system_message(machine, version)
    return [json.dumps(prompts.request_for(machine, version, item, system)).encode()
            for item in items]


def bare(url, payloads):
    import httpx

    with httpx.Client(timeout=30) as client:
        started = time.perf_counter()
        for payload in payloads:
            client.post(f"{url}/chat/completions", content=payload,
                        headers={"content-type": "application/json"}).json()
        return (time.perf_counter() - started) / len(payloads)


def requests_seen(server):
    """How many requests the server process has answered so far."""
    server.stdin.write("?\n")
    server.stdin.flush()
    return int(server.stdout.readline())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=1)
    args = parser.parse_args()
    scratch = use_scratch_database("model_rater")
    os.environ.setdefault("DJANGO_SECRET_KEY", "benchmark-only-" + "x" * 40)
    os.environ.pop("REDIS_URL", None)  # the run's job runs here, in process
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from coding.model_raters import runs
    from coding.model_raters.config import configure
    from coding.raters.setup import add_rater

    server = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        call_command("migrate", verbosity=0)
        print(header(connection.vendor), flush=True)
        print(f"{args.items:,} items, concurrency {args.concurrency}", flush=True)
        study, owner = build(args.items)
        rater = add_rater(study, owner, kind="model", name="bench-model", model_version="m")
        machine = configure(rater, owner, {"base_url": url, "model": "bench-model",
                                           "concurrency": args.concurrency})
        payloads = bodies(machine, study)
        before = bare(url, payloads)
        print(f"bare round trip (before): {before * 1000:.3f} ms a request", flush=True)

        samples, stop = [], threading.Event()

        def sample():
            while not stop.wait(0.2):
                samples.append(rss_mb())

        sampler = threading.Thread(target=sample, daemon=True)
        start_rss = rss_mb()
        sampler.start()
        started = time.perf_counter()
        run = runs.start_run(rater, owner, {})
        first = (time.perf_counter() - started) / args.items
        stop.set()
        sampler.join()
        run.refresh_from_db()
        after = bare(url, payloads)
        print(f"bare round trip (after):  {after * 1000:.3f} ms a request", flush=True)
        reference = min(before, after)
        print(f"run: {run.status}, {run.answered:,} answered, {run.failed} not answered; "
              f"{first * 1000:.3f} ms an item; workbench overhead "
              f"{(first - reference) * 1000:.3f} ms an item (target < 5 ms)")
        tenth = samples[max(0, len(samples) // 10 - 1)] if samples else start_rss
        print(f"memory: {start_rss:.0f} MB before, {tenth:.0f} MB at 10% of the run, "
              f"{max(samples or [start_rss]):.0f} MB peak, {samples[-1] if samples else 0:.0f} "
              f"MB at its end")
        received = requests_seen(server)
        started = time.perf_counter()
        second = runs.start_run(rater, owner, {})
        again = (time.perf_counter() - started) / args.items
        second.refresh_from_db()
        print(f"second run: {second.cached:,} of {second.total:,} items from the cache, "
              f"{requests_seen(server) - received} requests reached the server; "
              f"{again * 1000:.3f} ms an item")
        overhead = (first - reference) * 1000
        print(target(f"model rater: {args.items:,} items, the workbench's overhead",
                     "under 5 ms an item", f"{overhead:.2f} ms", overhead < 5))
        print(target(f"model rater: second run of {args.items:,} items", "wholly from the cache",
                     f"{second.cached:,} of {second.total:,}", second.cached == second.total))
        print(footer())
    finally:
        server.stdin.close()
        server.terminate()
        drop_scratch_database(scratch)


if __name__ == "__main__":
    main()

"""Load test over HTTP: N coders looping next item -> submit against gunicorn on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/workbench DJANGO_SECRET_KEY=x \\
        .venv/bin/python benchmarks/load.py [--coders 50] [--seconds 60] [--items 20000]
                                            [--hot N] [--workers 3] [--no-worker]

What runs. The script makes its own database (benchmarks/scratch.py:
`<name>_load_bench` beside the configured PostgreSQL database, dropped at the end),
migrates it and builds in it, with the project's own code, a study with the preset paper
codebook (coding.studies.presets), the preset blinded fields, overlap 2 (the study default)
and --items invented papers, one owner and --coders coders. The first --hot items (10
per coder unless given) have priority 1, as an owner would mark the items wanted first:
every coder's queue offers them before the rest, so for the first part of the run all
coders compete for the same few items and fill them to the overlap, which the overlap
check needs to mean something (spread over 20,000 items, coders walking the study's
order from their own offsets would rarely meet on an item). It then starts, on
127.0.0.1 only and never on port 8000:

- gunicorn (`workbench.wsgi`, --workers sync workers, as docker-compose.yml serves it;
  with --threads N above 1, gthread workers of N threads each)
  with DATABASE_URL pointing at the scratch database, DJANGO_ALLOWED_HOSTS=127.0.0.1
  and DJANGO_SECURE_COOKIES=0 (the cookies travel over plain HTTP here);
- a Celery worker on Redis (REDIS_URL, default redis://127.0.0.1:6379/0) consuming a
  queue of its own (WORKBENCH_QUEUE=load-bench-<pid>), so it takes no one else's tasks
  and no one takes its. This is the served configuration: every submission runs
  `schedule_agreement` after it commits, and once 20 new independent codings are in,
  the agreement report is computed as a job on the worker, which competes with gunicorn
  and PostgreSQL for the same 2 cores, as it would in production. (Without REDIS_URL
  the served mode runs tasks in-process; `schedule_agreement` then only leaves a job
  row waiting, so the agreement work would be left out of the figures. --no-worker
  measures that configuration, for comparison.)

The coders. One asyncio task per coder, each with its own httpx client and session:
GET /login/, POST /login/ with the CSRF token (done before the clock starts), then, flat
out until --seconds are up, POST /api/studies/<slug>/next/ and POST
.../assignments/<id>/submit/ with valid answers to the codebook's questions (conditional
questions only when their condition is met; each coder answers like a shared "truth" per
item with some deliberate disagreement, so settling and agreement see realistic data) and
one evidence quote from the abstract. A coder who is past the deadline still submits the
item it holds, so no reservation is left open. Every response's status is counted.

The reference, measured in the same run by the same clients on the same gunicorn: a
trivial authenticated GET /api/studies/<slug>/ (session, middleware, DRF, the study and
role lookups; no queue). It is measured twice: alone, one request at a time before the
load (with one coder's next and submit, likewise alone: the service time of each step
with no queueing), and under load, by every coder every --reference-every cycles, so it
waits for a free gunicorn worker exactly as next and submit do. Under load a request's
latency is mostly that wait; the "in worker" columns (gunicorn's own request time from
its access log) are the time a worker spent on the request.

The checks, exit status 1 if one fails:
- no coding lost: each submission answered 201 is a Coding in the database, with the
  values sent; as many codings as 201s;
- no item over its overlap: an item's active + submitted assignments never exceed its
  target, its target never the study's overlap, its coders with a coding never the
  overlap, and `Item.taken` equals its active + submitted assignments;
- no 5xx and no request without a response;
- every response as expected (login 200/302, next 200/204, submit 201, reference 200);
- no background job failed.

Bounded: at most 200 coders, 600 seconds, 200,000 items; everything on loopback. The
servers, the worker's queue and the scratch database are removed at the end, also after
a failure or Ctrl-C. Logs of gunicorn and the worker are kept (and their folder named)
only when a check fails or the script itself fails.
"""

# Run as a script, this folder comes first on sys.path, where benchmarks/queue.py would
# shadow the standard library's queue module: use the project root instead.
import sys  # noqa: I001
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0]).resolve() == ROOT / "benchmarks":
    sys.path.pop(0)
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import ipaddress  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

from benchmarks.machine import target  # noqa: E402
from benchmarks.scratch import drop_scratch_database, use_scratch_database  # noqa: E402

HOST = "127.0.0.1"
FORBIDDEN_PORT = 8000
MAX_CODERS, MAX_SECONDS, MAX_ITEMS, MAX_WORKERS = 200, 600, 200_000, 8
SLUG = "load-bench"
HTTP_TARGET_MS = 300  # issue 43: 50 coders flat out, from the client
PASSWORD = "load-bench-synthetic-password"
SEED = 20_260_601
DISAGREE = 0.15      # chance a coder's answer to a question departs from the item's "truth"
BATCH = 5_000
GIVE_UP_AFTER = 20   # failed requests in a row before a coder stops
STEPS = ("next", "submit", "reference")
EXPECTED = {"login": {200, 302}, "next": {200, 204}, "submit": {201}, "reference": {200}}


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--coders", type=int, default=50, help=f"1 to {MAX_CODERS} (default 50)")
    parser.add_argument("--seconds", type=float, default=60,
                        help=f"length of the load, 1 to {MAX_SECONDS} (default 60)")
    parser.add_argument("--items", type=int, default=20_000,
                        help=f"paper items in the study, up to {MAX_ITEMS:,} (default 20,000)")
    parser.add_argument("--hot", type=int, default=None,
                        help="items at priority 1, which every coder is offered first "
                             "(default 10 per coder)")
    parser.add_argument("--workers", type=int, default=3,
                        help=f"gunicorn sync workers, 1 to {MAX_WORKERS} (default 3)")
    parser.add_argument("--threads", type=int, default=1, help=(
        "threads per gunicorn worker (gthread); 1: sync workers (default)"))
    parser.add_argument("--job-phases", type=float, default=0, help=(
        "after the load, this many seconds six times: the worker stopped, an agreement job "
        "always running, the automatic snapshots as deployed, twice, interleaved (issue 43); "
        "0: none"))
    parser.add_argument("--alone", type=int, default=30,
                        help="next + submit + reference cycles by one coder alone, before the "
                             "load (default 30)")
    parser.add_argument("--reference-every", type=int, default=4,
                        help="under load, each coder times the reference every this many "
                             "cycles (default 4)")
    parser.add_argument("--think", type=float, default=0,
                        help="under load, seconds a coder spends on an item between next and "
                             "submit, drawn from 0.5 to 1.5 times this (default 0: flat out, "
                             "a stress test; people take 20 s or more)")
    parser.add_argument("--no-worker", action="store_true",
                        help="no Celery worker: tasks in-process, as the served mode without "
                             "REDIS_URL (the agreement job is then never run)")
    args = parser.parse_args()
    if args.hot is None:
        args.hot = min(args.items, 10 * args.coders)
    bounds = [("--coders", args.coders, 1, MAX_CODERS), ("--seconds", args.seconds, 1, MAX_SECONDS),
              ("--items", args.items, 100, MAX_ITEMS), ("--hot", args.hot, 0, args.items),
              ("--workers", args.workers, 1, MAX_WORKERS), ("--threads", args.threads, 1, 32),
              ("--alone", args.alone, 0, 1000),
              ("--reference-every", args.reference_every, 1, 1000),
              ("--think", args.think, 0, 600)]
    for name, value, low, high in bounds:
        if not low <= value <= high:
            parser.error(f"{name} must be between {low:,} and {high:,}, not {value:,}")
    if not os.environ.get("DJANGO_SECRET_KEY", "").strip():
        parser.error("set DJANGO_SECRET_KEY (the served settings require it)")
    database = os.environ.get("DATABASE_URL", "")
    if urlsplit(database).scheme not in ("postgres", "postgresql", "pgsql"):
        parser.error("this benchmark needs DATABASE_URL=postgres://…: it serves the app with "
                     "gunicorn on PostgreSQL")
    if not is_loopback(urlsplit(database).hostname):
        parser.error(f"DATABASE_URL must point at this machine (loopback), not "
                     f"{urlsplit(database).hostname}")
    if args.no_worker:
        args.redis_url = ""
    else:
        args.redis_url = os.environ.get("REDIS_URL", "").strip() or "redis://127.0.0.1:6379/0"
        if not is_loopback(urlsplit(args.redis_url).hostname):
            parser.error(f"REDIS_URL must point at this machine (loopback), not "
                         f"{urlsplit(args.redis_url).hostname}")
    return args


def is_loopback(host):
    """Whether every address the host name resolves to is a loopback address (no host: a
    local Unix socket)."""
    if not host:
        return True
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except socket.gaierror:
        return False
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback
                                   for a in addresses)


def free_port():
    """A free TCP port on 127.0.0.1, never 8000."""
    while True:
        with socket.socket() as probe:
            probe.bind((HOST, 0))
            port = probe.getsockname()[1]
        if port != FORBIDDEN_PORT:
            return port


def percentile(sorted_values, share):
    """Nearest-rank percentile of an already sorted list."""
    return sorted_values[max(0, math.ceil(share * len(sorted_values)) - 1)]


def say(*parts):
    print(*parts, flush=True)


# --- the study ----------------------------------------------------------------

WORDS = ("policy gradient reward model rollout advantage baseline clipping ratio entropy "
         "token sequence group variance estimator objective training language reasoning "
         "verifier sample batch update stable efficient asynchronous mixture experts critic "
         "value trust region importance weight correction length bias penalty divergence "
         "benchmark mathematics code agent preference offline distillation teacher").split()


def invented_abstract(rng, n):
    sentences = []
    for _ in range(rng.randint(5, 9)):
        words = rng.choices(WORDS, k=rng.randint(10, 22))
        sentences.append(" ".join(words).capitalize() + ".")
    return f"Invented abstract {n}. " + " ".join(sentences)


def build_study(items, coders, hot):
    """The study, its paper codebook, an owner, `coders` coders and `items` paper items
    (the first `hot` of them at priority 1), all synthetic, made with the project's own
    builders (in bulk where one at a time would take minutes).
    Returns (study, [coder usernames])."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import connection

    from coding.codebooks.versions import create_codebook
    from coding.labeling import queue
    from coding.models import Item, Membership, Role, Study
    from coding.studies import presets
    from ingest.models import Document, Snapshot, content_sha256

    User = get_user_model()
    # One PBKDF2 hash for every coder: hashing 200 passwords would take a minute.
    password = make_password(PASSWORD)
    owner = User.objects.create(username=f"{SLUG}-owner", password=password)
    users = User.objects.bulk_create(
        User(username=f"{SLUG}-coder{n:03d}", password=password, first_name=f"Coder {n}")
        for n in range(coders))
    study = Study.objects.create(name="Load benchmark (synthetic)", slug=SLUG,
                                 blinded_fields=presets.BLINDED_FIELDS, created_by=owner)
    Membership.objects.create(study=study, user=owner, role=Role.OWNER)
    Membership.objects.bulk_create(Membership(study=study, user=u, role=Role.CODER) for u in users)
    codebook = create_codebook(study, presets.PAPER_CODEBOOK, owner)

    rng = random.Random(SEED)
    published = datetime(2025, 5, 1, tzinfo=UTC)
    for start in range(0, items, BATCH):
        numbers = range(start, min(items, start + BATCH))
        documents = Document.objects.bulk_create(
            Document(kind=Document.Kind.PAPER, source=SLUG, key=f"2599.{n:06d}",
                     title=f"Invented paper number {n} on {' '.join(rng.sample(WORDS, 4))}",
                     url=f"https://arxiv.org/abs/2599.{n:06d}", published=published,
                     metadata={"abstract": invented_abstract(rng, n),
                               "authors": ["Ann Example", "Bo Sample", "Cy Placeholder"],
                               "affiliations": ["Institute of Invented Studies"],
                               "categories": ["cs.LG"], "included_in": []})
            for n in numbers)
        snapshots = Snapshot.objects.bulk_create(
            Snapshot(document=d, number=1, content=d.content(), sha256=content_sha256(d.content()))
            for d in documents)
        Item.objects.bulk_create(
            Item(study=study, document=d, snapshot=s, codebook=codebook,
                 priority=int(n < hot), **queue.new_item_fields(study, d))
            for n, d, s in zip(numbers, documents, snapshots))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # what autovacuum would have done by now
    return study, [u.username for u in users]


class Answers:
    """Valid answers to the codebook's current version. Each item has a "truth" drawn from
    its id; a coder departs from it on a question with chance DISAGREE. Conditional
    questions are answered only when their condition is met, as check_values demands."""

    def __init__(self, study):
        from coding.models import Codebook

        version = Codebook.objects.get(study=study).current_version()
        self.version = version
        self.questions = list(version.questions.prefetch_related("options").order_by("position"))

    @staticmethod
    def pick(question, rng):
        """An answer the codebook's own rules accept: an exclusive option alone, a number
        within the question's bounds (issue 43: a 'none' drawn beside others was refused,
        and the benchmark stopped in its self-test)."""
        options = [o.value for o in question.options.all()]
        kind = question.kind
        if kind == "single":
            return rng.choice(options)
        if kind == "multiple":
            alone = [o.value for o in question.options.all() if o.exclusive]
            shared = [value for value in options if value not in alone]
            if alone and (not shared or rng.random() < 0.2):
                return [rng.choice(alone)]
            chosen = set(rng.sample(shared, min(len(shared), rng.choice((1, 1, 2)))))
            return [o for o in options if o in chosen]  # codebook order, as stored
        if kind == "yes_no":
            return rng.choice(("yes", "no"))
        if kind == "number":
            if options and rng.random() < 0.2:
                return rng.choice(options)
            low = question.min_value if question.min_value is not None else 0
            high = question.max_value if question.max_value is not None else low + 250
            return min(max(round(rng.uniform(low, high), 1), low), high)
        return "An invented note." if question.required else None

    def make(self, item_id, rng):
        from coding.codebooks.versions import is_shown

        truth_rng = random.Random(f"{SEED}:{item_id}")
        truth = {q.key: self.pick(q, truth_rng) for q in self.questions}
        values = {}
        for question in self.questions:
            if not is_shown(question, values):
                continue
            value = self.pick(question, rng) if rng.random() < DISAGREE else truth[question.key]
            if value is not None:
                values[question.key] = value
        return values

    def self_test(self, samples=300):
        """The generated answers pass the project's own check unchanged."""
        from coding.codebooks.versions import check_values

        rng = random.Random(SEED)
        for n in range(samples):
            values = self.make(n, rng)
            cleaned = check_values(self.version, values, complete=True)
            if cleaned != values:
                raise RuntimeError(f"generated answers {values} were cleaned to {cleaned}")


def evidence_from(content, rng):
    """One quote of a few consecutive words from the item's abstract."""
    words = (content.get("abstract") or "").split()
    if len(words) < 6:
        return []
    start = rng.randrange(len(words) - 5)
    return [{"question": "label", "field": "abstract", "quote": " ".join(words[start:start + 5])}]


# --- the servers --------------------------------------------------------------

class Servers:
    """gunicorn and (unless --no-worker) a Celery worker, started and stopped by us."""

    def __init__(self, args, logs):
        self.args, self.logs = args, logs
        self.port = free_port()
        self.queue = f"load-bench-{os.getpid()}"
        self.worker_name = f"load-bench-{os.getpid()}@{socket.gethostname()}"
        self.gunicorn = self.worker = None
        self.load_log_offset = 0  # where the load phase starts in the access log
        self.access_log = logs / "gunicorn-access.log"
        self.gunicorn_log = logs / "gunicorn.log"
        self.worker_log = logs / "worker.log"
        self.env = dict(os.environ, DJANGO_ALLOWED_HOSTS=HOST, DJANGO_SECURE_COOKIES="0",
                        DJANGO_HTTPS="0", DJANGO_DEBUG="0", LOG_LEVEL="WARNING",
                        WORKBENCH_QUEUE=self.queue, PYTHONUNBUFFERED="1")
        self.env.pop("REDIS_URL", None)
        if args.redis_url:
            self.env["REDIS_URL"] = args.redis_url

    @property
    def base_url(self):
        return f"http://{HOST}:{self.port}"

    def _start(self, command, log):
        # A session of its own: a Ctrl-C in the terminal reaches only this script, which
        # then stops the process group it started, in order.
        return subprocess.Popen(command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                                start_new_session=True)

    def start_worker(self):
        from workbench.queues import worker_argument  # every job kind's queue, for -Q

        if not self.args.redis_url or (self.worker and self.worker.poll() is None):
            return  # no broker, or the worker runs already
        self.worker = self._start(
            [sys.executable, "-m", "celery", "-A", "workbench", "worker", "--pool=solo",
             "--loglevel=WARNING", "-Q", worker_argument(ns=self.queue),
             "--hostname", self.worker_name,
             "--without-gossip", "--without-mingle"], self.worker_log)
        from workbench.celery import app

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.worker.poll() is not None:
                raise RuntimeError(f"the Celery worker exited with {self.worker.returncode}; "
                                   f"see {self.worker_log}")
            if app.control.ping(destination=[self.worker_name], timeout=0.5):
                return
            time.sleep(0.5)
        raise RuntimeError("the Celery worker did not answer a ping within 60 s")

    def start_gunicorn(self):
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.gunicorn = self._start(
            [str(gunicorn), "workbench.wsgi:application", "--bind", f"{HOST}:{self.port}",
             "--workers", str(self.args.workers),
             *(["--worker-class", "gthread", "--threads", str(self.args.threads)]
               if self.args.threads > 1 else ["--worker-class", "sync"]),
             "--timeout", "120", "--graceful-timeout", "20",
             "--access-logfile", str(self.access_log),
             "--access-logformat", "%(m)s %(U)s %(s)s %(D)s",
             "--error-logfile", "-"], self.gunicorn_log)
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.gunicorn.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.gunicorn.returncode}; "
                                   f"see {self.gunicorn_log}")
            try:
                if httpx.get(f"{self.base_url}/login/", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError("gunicorn did not answer GET /login/ within 60 s")

    @staticmethod
    def _stop(process, name, timeout):
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)  # the group we started, nothing else
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say(f"{name} did not stop within {timeout} s; killing it")
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        except ProcessLookupError:
            pass

    def stop_gunicorn(self):
        self._stop(self.gunicorn, "gunicorn", 30)

    def stop_worker(self):
        self._stop(self.worker, "the Celery worker", 60)
        if self.worker is not None:
            self._forget_queue()

    def _forget_queue(self):
        """Remove our queue's keys from Redis (messages of jobs the worker never took)."""
        try:
            import redis

            client = redis.Redis.from_url(self.args.redis_url)
            # The queue, its priority lists, and kombu's bindings of it.
            keys = [self.queue, *client.scan_iter(match=f"{self.queue}\x06*"),
                    *client.scan_iter(match=f"_kombu.binding*.{self.queue}")]
            client.delete(*keys)
            client.close()
        except Exception as error:  # cleanup must not hide the run's own outcome
            say(f"could not remove the queue {self.queue} from Redis: {error}")

    def stop(self):
        self.stop_gunicorn()
        self.stop_worker()


# --- the coders ---------------------------------------------------------------

class Tally:
    """Everything the clients saw: latencies per phase and step, statuses, failures."""

    def __init__(self):
        self.latency = defaultdict(list)    # (phase, step) -> [seconds]
        self.statuses = Counter()           # (step, status) -> count
        self.errors = Counter()             # (step, exception name) -> count
        self.unexpected = []                # (step, status, body excerpt), the first few
        self.submitted = defaultdict(list)  # assignment id -> [values], one per 201
        self.ran_out = 0

    def record(self, phase, step, response, seconds):
        status = response.status_code
        self.statuses[step, status] += 1
        if phase and status in EXPECTED[step]:
            self.latency[phase, step].append(seconds)
        if status not in EXPECTED[step] and len(self.unexpected) < 10:
            self.unexpected.append((step, status, response.text[:300]))


class Coder:
    def __init__(self, username, servers, tally, answers, index):
        import httpx

        self.username, self.tally, self.answers = username, tally, answers
        self.rng = random.Random(f"{SEED}:coder:{index}")
        self.client = httpx.AsyncClient(base_url=servers.base_url, timeout=httpx.Timeout(120),
                                        follow_redirects=False)
        self.failures_in_row = 0
        self.think = 0.0  # set for the load phase

    async def request(self, phase, step, method, url, **kwargs):
        """One timed request; the response, or None when none came."""
        import httpx

        if method != "GET":
            token = self.client.cookies.get("csrftoken", "")
            kwargs.setdefault("headers", {})["X-CSRFToken"] = token
        start = time.perf_counter()
        try:
            response = await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            self.tally.errors[step, type(error).__name__] += 1
            self.failures_in_row += 1
            return None
        seconds = time.perf_counter() - start
        self.tally.record(phase, step, response, seconds)
        ok = response.status_code in EXPECTED[step]
        self.failures_in_row = 0 if ok else self.failures_in_row + 1
        return response

    async def log_in(self):
        await self.request(None, "login", "GET", "/login/")
        response = await self.request(None, "login", "POST", "/login/", data={
            "username": self.username, "password": PASSWORD,
            "csrfmiddlewaretoken": self.client.cookies.get("csrftoken", ""), "next": ""})
        if (response is None or response.status_code != 302
                or "sessionid" not in self.client.cookies):
            status = response.status_code if response is not None else "no response"
            raise RuntimeError(f"{self.username} could not log in ({status})")

    async def reference(self, phase):
        await self.request(phase, "reference", "GET", f"/api/studies/{SLUG}/")

    async def cycle(self, phase):
        """Next item, then submit it. False when nothing is left for this coder."""
        response = await self.request(phase, "next", "POST", f"/api/studies/{SLUG}/next/")
        if response is None or response.status_code != 200:
            if response is not None and response.status_code == 204:
                self.tally.ran_out += 1
                return False
            return True
        assignment = response.json()
        if self.think:
            await asyncio.sleep(self.rng.uniform(0.5, 1.5) * self.think)
        values = self.answers.make(assignment["item"]["id"], self.rng)
        evidence = evidence_from(assignment["item"]["content"], self.rng)
        response = await self.request(
            phase, "submit", "POST", f"/api/studies/{SLUG}/assignments/{assignment['id']}/submit/",
            json={"values": values, "evidence": evidence})
        if response is not None and response.status_code == 201:
            self.tally.submitted[assignment["id"]].append(values)
        return True

    async def run(self, phase, deadline, reference_every):
        cycles = 0
        while time.perf_counter() < deadline and self.failures_in_row < GIVE_UP_AFTER:
            if cycles % reference_every == reference_every - 1:
                await self.reference(phase)
            if not await self.cycle(phase):
                break
            cycles += 1

    async def close(self):
        await self.client.aclose()


async def drive(args, servers, tally, answers, usernames):
    """Log everyone in, measure alone, then the load. Returns (load seconds, client CPU s)."""
    coders = [Coder(u, servers, tally, answers, n) for n, u in enumerate(usernames)]
    try:
        start = time.perf_counter()
        logins = asyncio.Semaphore(4)  # PBKDF2 is the server's work: a few at a time

        async def log_in(coder):
            async with logins:
                await coder.log_in()

        await asyncio.gather(*(log_in(c) for c in coders))
        say(f"logged in {len(coders)} coders in {time.perf_counter() - start:.1f} s")

        alone = coders[0]
        for _ in range(args.alone):
            await alone.reference("alone")
            if not await alone.cycle("alone"):
                break
        await asyncio.sleep(0.5)  # let gunicorn write the last access lines of this phase
        servers.load_log_offset = servers.access_log.stat().st_size

        for coder in coders:
            coder.think = args.think
        pace = f"each spending about {args.think:g} s on an item" if args.think else "flat out"
        say(f"load: {len(coders)} coders {pace} for {args.seconds:g} s …")
        cpu = time.process_time()
        start = time.perf_counter()
        deadline = start + args.seconds
        await asyncio.gather(*(c.run("load", deadline, args.reference_every) for c in coders))
        elapsed, used = time.perf_counter() - start, time.process_time() - cpu
        if args.job_phases:
            await job_phases(args, servers, coders)
        return elapsed, used
    finally:
        await asyncio.gather(*(c.close() for c in coders), return_exceptions=True)


# (phase, what runs): the worker stopped; an agreement job always running, one after another
# (what the automatic snapshots were before issue 43); the automatic snapshots as deployed,
# spaced out by settings.AGREEMENT_JOB_SHARE.
JOB_PHASES = (("no job", None), ("back to back", "always"), ("spaced (as deployed)", "auto")) * 2


async def job_phases(args, servers, coders):
    """The same coders for --job-phases seconds at a time, interleaved, twice each: with
    the Celery worker stopped (no background job runs), with an agreement job always running
    (a new one enqueued whenever none is queued or running), and with the automatic
    snapshots the coders' submissions schedule, as deployed."""
    from workbench import jobs
    from workbench.celery import app
    from workbench.models import Job

    from django.db import connection

    from coding.models import Study

    app.conf.task_default_queue = servers.queue  # the jobs go where the worker listens

    def the_study():
        try:
            return Study.objects.values_list("pk", flat=True).get()
        finally:
            connection.close()  # a thread of asyncio's pool: its connection closed here

    def keep_one_agreement_job():
        try:
            if not Job.objects.filter(kind="agreement",
                                      status__in=("queued", "running")).exists():
                jobs.enqueue("agreement", {"study": study_id, "force": True})
        finally:
            connection.close()

    def cancel_waiting_jobs():
        """Jobs the last phase queued: the worker may never have seen them (its queue is
        removed when it stops), and a queued one would hold the next automatic one back."""
        try:
            Job.objects.filter(kind="agreement", status="queued").update(status="cancelled")
        finally:
            connection.close()

    study_id = await asyncio.to_thread(the_study)

    for n, (phase, busy) in enumerate(JOB_PHASES):
        if busy:
            await asyncio.to_thread(servers.start_worker)
        else:
            await asyncio.to_thread(servers.stop_worker)
        await asyncio.to_thread(cancel_waiting_jobs)
        say(f"phase {n + 1}: {phase}, {args.job_phases:g} s …")
        deadline = time.perf_counter() + args.job_phases
        keeper = None
        if busy == "always":
            async def keep():
                while time.perf_counter() < deadline:
                    await asyncio.to_thread(keep_one_agreement_job)
                    await asyncio.sleep(0.5)
            keeper = asyncio.create_task(keep())
        began = time.perf_counter()
        await asyncio.gather(*(c.run(phase, deadline, args.reference_every) for c in coders))
        if keeper:
            await keeper
        JOB_SECONDS[phase] = JOB_SECONDS.get(phase, 0) + time.perf_counter() - began
    await asyncio.to_thread(servers.start_worker)


JOB_SECONDS = {}


def job_phase_report(tally):
    say("\nCoders with and without a background job (the same coders, phases interleaved)")
    say(f"  {'phase':<16}{'submissions/s':>15}{'next p95':>12}{'submit p95':>12}")
    for phase in dict(JOB_PHASES):
        seconds = JOB_SECONDS.get(phase)
        if not seconds:
            continue
        nexts = sorted(tally.latency[phase, "next"])
        submits = sorted(tally.latency[phase, "submit"])
        say(f"  {phase:<16}{len(submits) / seconds:>15.1f}"
            f"{percentile(nexts, 0.95) * 1000:>10.1f} ms{percentile(submits, 0.95) * 1000:>10.1f} ms")


# --- after the run -------------------------------------------------------------

def server_times(servers):
    """{step: sorted [seconds in a worker]} of the load phase, from gunicorn's access log."""
    patterns = [("next", "POST", re.compile(rf"^/api/studies/{SLUG}/next/$")),
                ("submit", "POST", re.compile(rf"^/api/studies/{SLUG}/assignments/\d+/submit/$")),
                ("reference", "GET", re.compile(rf"^/api/studies/{SLUG}/$"))]
    times = defaultdict(list)
    with open(servers.access_log, "rb") as log:
        log.seek(servers.load_log_offset)
        for line in log.read().decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) != 4:
                continue
            method, path, _, micros = parts
            for step, wanted, pattern in patterns:
                if method == wanted and pattern.match(path):
                    times[step].append(int(micros) / 1e6)
    return {step: sorted(values) for step, values in times.items()}


def check_codings(study, tally):
    """(passed, line): every 201 is a Coding with the values sent; as many codings as 201s."""
    from coding.models import Coding

    stored = defaultdict(list)
    for assignment, values in (Coding.objects.filter(assignment__item__study=study)
                               .order_by("assignment_id", "revision")
                               .values_list("assignment_id", "values")):
        stored[assignment].append(values)
    created = sum(len(v) for v in tally.submitted.values())
    in_db = sum(len(v) for v in stored.values())
    missing = [a for a, sent in tally.submitted.items() if len(stored.get(a, ())) < len(sent)]
    extra = [a for a, rows in stored.items() if len(rows) > len(tally.submitted.get(a, ()))]
    differ = [a for a, sent in tally.submitted.items()
              if len(stored.get(a, ())) == len(sent) and stored[a] != sent]
    passed = created == in_db and not missing and not extra and not differ
    line = (f"no coding lost: {created:,} submissions answered 201, {in_db:,} codings in the "
            f"database, each with the values sent")
    problems = [(missing, "miss a coding answered 201"),
                (extra, "have a coding no 201 reported"), (differ, "hold other values than sent")]
    for ids, what in problems:
        if ids:
            line += f"; {len(ids)} assignments {what} (e.g. {ids[:5]})"
    return passed, line


def check_overlap(study):
    """(passed, line, counts): no item holds more coders than its target or the overlap."""
    from coding.models import Assignment, Coding, Item

    holders, coded_by, released = Counter(), defaultdict(set), 0
    for item, coder, status in (Assignment.objects.filter(item__study=study)
                                .values_list("item_id", "coder_id", "status")):
        if status in (Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED):
            holders[item] += 1
        released += status == Assignment.Status.RELEASED
    for item, coder in (Coding.objects.filter(assignment__item__study=study)
                        .values_list("assignment__item_id", "assignment__coder_id")):
        coded_by[item].add(coder)
    bad, hot, hot_full = [], 0, 0
    items = Item.objects.filter(study=study).values_list("pk", "target", "taken", "priority")
    for pk, wanted, taken, priority in items:
        held = holders.get(pk, 0)
        if priority > 0:
            hot += 1
            hot_full += len(coded_by.get(pk, ())) == study.overlap
        if held > wanted or wanted > study.overlap or len(coded_by.get(pk, ())) > study.overlap \
                or taken != held:
            bad.append((pk, wanted, taken, held, len(coded_by.get(pk, ()))))
    spread = Counter(len(c) for c in coded_by.values())
    line = (f"no item over its overlap ({study.overlap}): items coded by "
            + ", ".join(f"{n} coder{'s' * (n > 1)}: {spread[n]:,}" for n in sorted(spread))
            + f" (of the {hot:,} priority items {hot_full:,} filled); highest active + submitted "
            f"on one item {max(holders.values(), default=0)}; Item.taken matches everywhere")
    if bad:
        line = (f"no item over its overlap ({study.overlap}): {len(bad)} items break it, e.g. "
                + "; ".join(f"item {pk}: target {t}, taken {tk}, active+submitted {h}, "
                            f"coders with codings {c}" for pk, t, tk, h, c in bad[:5]))
    active = Assignment.objects.filter(item__study=study, status=Assignment.Status.ACTIVE).count()
    return not bad, line, {"active left": active, "released": released}


def background_jobs():
    """[(kind, status, count, total seconds, max seconds)] of the jobs in the scratch database."""
    from workbench.models import Job

    rows = defaultdict(list)
    for kind, status, started, finished in Job.objects.values_list(
            "kind", "status", "started_at", "finished_at"):
        rows[kind, status].append((finished - started).total_seconds()
                                  if started and finished else None)
    return [(kind, status, len(v), sum(x for x in v if x is not None),
             max((x for x in v if x is not None), default=None))
            for (kind, status), v in sorted(rows.items())]


def agreement_timeline():
    """[(created, waited, ran)] seconds of each finished agreement job, oldest first;
    created counted from the first job's creation."""
    from workbench.models import Job

    rows = list(Job.objects.filter(kind="agreement", started_at__isnull=False,
                                   finished_at__isnull=False).order_by("created_at")
                .values_list("created_at", "started_at", "finished_at"))
    if not rows:
        return []
    first = rows[0][0]
    return [((c - first).total_seconds(), (s - c).total_seconds(), (f - s).total_seconds())
            for c, s, f in rows]


def latency_row(label, values, server=None):
    if not values:
        return f"  {label:34}{'—':>8}"
    ms = sorted(1000 * v for v in values)
    row = f"  {label:34}{len(ms):>8,}"
    row += "".join(f"{percentile(ms, p):9.1f}" for p in (.5, .95, .99))
    row += f"{ms[-1]:9.1f}"
    if server:
        row += "   " + "".join(f"{percentile(server, p) * 1000:9.1f}" for p in (.5, .95, .99))
    return row


def tracebacks(log, limit=3, length=60):
    """The first few errors with their tracebacks in a server log."""
    if not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    starts = [n for n, line in enumerate(lines)
              if line.startswith(("Internal Server Error", "Traceback"))
              and not (n and lines[n - 1].startswith("Internal Server Error"))]
    return ["\n".join(lines[n:n + length]) for n in starts[:limit]]


def describe_setup(args, servers):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        version = cursor.fetchone()[0].split(" on ")[0]
    import django

    say(f"database: {version} ({connection.settings_dict['NAME']}); python "
        f"{sys.version.split()[0]}, Django {django.get_version()}, {os.cpu_count()} cpus, load "
        f"average " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    say(f"server: gunicorn, {args.workers} sync workers on {servers.base_url}; "
        + (f"Celery worker (solo pool) on {args.redis_url}, queue {servers.queue}"
           if args.redis_url else "no Celery worker: tasks in-process (no REDIS_URL)"))


def report(args, study, tally, elapsed, cpu, servers):
    """Print the figures and the checks; whether every check passed."""
    load_requests = sum(len(v) for (phase, _), v in tally.latency.items() if phase == "load")
    pace = f"each about {args.think:g} s on an item" if args.think else "flat out"
    say(f"\nUnder load: {args.coders} coders {pace}, {args.seconds:g} s plus "
        f"{elapsed - args.seconds:.1f} s for the cycles in flight to finish")
    say(f"  throughput: {submissions_in(tally, 'load'):,} submissions in {elapsed:.1f} s = "
        f"{submissions_in(tally, 'load') / elapsed:,.1f} submissions/s; {load_requests:,} "
        f"requests = {load_requests / elapsed:,.1f} requests/s (next, submit, reference)")
    say(f"  the client (this process, asyncio + httpx) used {cpu / elapsed:.0%} of one core; "
        f"load average now {os.getloadavg()[0]:.2f}")
    server = server_times(servers)
    header = (f"  {'latency, ms (client side)':34}{'n':>8}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}"
              f"   {'in worker: p50':>15}{'p95':>9}{'p99':>9}")
    say(header)
    for step in STEPS:
        label = {"next": "next  POST …/next/", "submit": "submit  POST …/submit/",
                 "reference": "reference  GET /api/studies/<slug>/"}[step]
        say(latency_row(label, tally.latency["load", step], server.get(step)))
    p95 = {step: percentile(sorted(1000 * v for v in tally.latency["load", step]), .95)
           for step in STEPS if tally.latency["load", step]}
    if "next" in p95 and "submit" in p95:
        worst = max(p95["next"], p95["submit"])
        say(target(f"load: {args.coders} coders over HTTP, {pace}, next and submit each",
                   f"p95 under {HTTP_TARGET_MS} ms from the client",
                   f"p95 {p95['next']:.0f} and {p95['submit']:.0f} ms, "
                   f"{submissions_in(tally, 'load') / elapsed:,.1f} submissions/s (reference "
                   f"p95 {p95.get('reference', float('nan')):.0f} ms)", worst < HTTP_TARGET_MS))

    if args.alone:
        say("\nAlone, before the load (one coder, one request at a time: service time without "
            "queueing)")
        say(f"  {'latency, ms (client side)':34}{'n':>8}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}")
        for step in STEPS:
            say(latency_row(step, tally.latency["alone", step]))

    say(f"\nReference: GET /api/studies/{SLUG}/ goes through the same gunicorn, middleware, "
        f"session authentication and DRF, with the study and role lookups, and no queue work. "
        f"Alone it is the floor of any API request; under load each coder sent it every "
        f"{args.reference_every} cycles, so it waited for a free worker like next and submit: "
        f"what the steps cost beyond it is the queue's work, the rest is waiting for one of "
        f"{args.workers} workers on {os.cpu_count()} cores shared with PostgreSQL, "
        + ("the Celery worker " if args.redis_url else "")
        + "and this client (and whatever else the machine runs: see the load average).")

    say("\nBackground jobs in the scratch database:")
    jobs = background_jobs()
    for kind, status, count, total, longest in jobs:
        say(f"  {kind} {status}: {count}" + (f", {total:.1f} s in all, longest {longest:.1f} s"
                                             if longest is not None else ""))
    if not jobs:
        say("  none")
    timeline = agreement_timeline()
    if timeline:
        say("  agreement jobs, each: created (s after the first), waited before it started, ran: "
            + "; ".join(f"+{c:.1f} {w:.1f} {r:.1f}" for c, w, r in timeline))
        span = timeline[-1][0] + timeline[-1][1] + timeline[-1][2] - timeline[0][1]
    if timeline and span > 0:
        say(f"  they ran {sum(r for _, _, r in timeline) / span:.0%} of the "
            f"{span:.1f} s from the first start to the last end "
            "(settings.AGREEMENT_JOB_SHARE caps the automatic ones)")
    say("\nStatuses: " + ", ".join(f"{step} {status}: {n:,}"
                                   for (step, status), n in sorted(tally.statuses.items())))
    if tally.errors:
        say("Requests without a response: " + ", ".join(
            f"{step} {name}: {n:,}" for (step, name), n in sorted(tally.errors.items())))
    if tally.ran_out:
        say(f"Coders who found nothing left (204): {tally.ran_out} — raise --items")

    checks = []
    checks.append(check_codings(study, tally))
    passed, line, counts = check_overlap(study)
    checks.append((passed, line))
    total = sum(tally.statuses.values())
    fives = sum(n for (_, status), n in tally.statuses.items() if status >= 500)
    lost = sum(tally.errors.values())
    checks.append((fives == 0 and lost == 0,
                   f"no 5xx: {fives:,} of {total:,} responses; {lost:,} requests without a "
                   f"response"))
    unexpected = sum(n for (step, status), n in tally.statuses.items()
                     if status not in EXPECTED[step])
    checks.append((unexpected == 0, f"every response as expected: {unexpected:,} unexpected"))
    failed_jobs = sum(count for _, status, count, _, _ in jobs if status == "failed")
    checks.append((failed_jobs == 0, f"no background job failed: {failed_jobs} failed"))

    say(f"\nChecks ({counts['active left']} assignments left active, {counts['released']} "
        f"released):")
    for passed, line in checks:
        say(f"  [{'pass' if passed else 'FAIL'}] {line}")
    for step, status, body in tally.unexpected:
        say(f"  unexpected {step} {status}: {body!r}")
    return all(passed for passed, _ in checks)


def submissions_in(tally, phase):
    return len(tally.latency[phase, "submit"])


# --- main -----------------------------------------------------------------------

def interrupted(signum, frame):
    """SIGTERM cleans up like Ctrl-C."""
    raise KeyboardInterrupt


def main(args):
    signal.signal(signal.SIGTERM, interrupted)
    logs = Path(tempfile.mkdtemp(prefix="load-bench-"))
    keep_logs, ok, scratch, servers, status = True, False, None, None, 1
    if args.redis_url:
        os.environ["REDIS_URL"] = args.redis_url
    else:
        os.environ.pop("REDIS_URL", None)
    try:
        scratch = use_scratch_database("load")
        import django

        django.setup()
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
        logging.getLogger("httpcore").setLevel(logging.WARNING)
        from django.core.management import call_command
        from django.db import connections

        servers = Servers(args, logs)
        started = time.perf_counter()
        call_command("migrate", verbosity=0)
        describe_setup(args, servers)
        study, usernames = build_study(args.items, args.coders, args.hot)
        answers = Answers(study)
        answers.self_test()
        say(f"migrated and built {args.items:,} paper items ({args.hot:,} of them at priority 1; "
            f"overlap {study.overlap}; preset paper codebook) and {args.coders} coders in "
            f"{time.perf_counter() - started:.1f} s")
        connections.close_all()  # the servers are about to use the database

        servers.start_worker()
        servers.start_gunicorn()
        tally = Tally()
        elapsed, cpu = asyncio.run(drive(args, servers, tally, answers, usernames))
        # Every response is in; a graceful stop lets anything still running in a worker end.
        time.sleep(0.5)
        servers.stop_gunicorn()
        ok = report(args, study, tally, elapsed, cpu, servers)
        if args.job_phases:
            job_phase_report(tally)
        if not ok:
            for name, log in (("gunicorn", servers.gunicorn_log), ("worker", servers.worker_log)):
                for block in tracebacks(log):
                    say(f"\n--- from the {name} log ---\n{block}")
        keep_logs, status = not ok, 0 if ok else 1
    except KeyboardInterrupt:
        say("\ninterrupted; cleaning up")
        keep_logs, status = False, 130
    finally:
        if servers is not None:
            servers.stop()
        if scratch is not None:
            try:
                drop_scratch_database(scratch)
            except Exception as error:
                say(f"could not drop the scratch database {scratch[2]}: {error}")
        if keep_logs:
            say(f"server logs kept in {logs}")
        else:
            shutil.rmtree(logs, ignore_errors=True)
    if status != 130:
        say("\nall checks passed" if ok else "\nFAILED")
    return status


if __name__ == "__main__":
    sys.exit(main(parse_arguments()))

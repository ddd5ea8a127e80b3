"""Shared fixtures: named people, a small study, and the real Celery worker.

The people of the "alpha" study, and what each may see:

- olive (owner): everything in alpha, and may change its settings.
- cora, cyril (coders): alpha's codebooks and items; only their own assignments
  and codings, never each other's.
- ada (adjudicator): every coding in alpha, to review disagreements.
- vera (viewer): alpha's overview and codebooks; no individual codings.
- otto (outsider): a coder in the "beta" study only; alpha does not exist for him.
"""

import os
import socket
import subprocess
import sys
import time
from collections import Counter
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings

from coding.models import Role
from tests import factories
from workbench import jobs, queues

# About 170, 115 and 100 s of a 1,230 s suite (PostgreSQL, serial, --durations).
LONGEST_FILES = {"tests/test_api_fuzz.py", "tests/test_permission_matrix.py",
                 "tests/browser/test_accessibility.py"}


def pytest_collection_modifyitems(items):
    """Every test has an id of its own. Schemathesis names its tests by operation
    (`test_no_server_error[GET /api/...]`), but under pytest 9 their ids all come out as the
    bare function's; pytest-xdist schedules by id, and ran one of the 88 API fuzz tests in
    place of all of them. Each gets back the id its name says; a duplicate left is an error
    rather than tests silently not run."""
    for item in items:
        if item.nodeid != f"{item.parent.nodeid}::{item.name}":
            item._id = item.parent.id.child(item.name)  # what Node.__init__ would have made
    # Under pytest-xdist, the longest files first: it hands out whole files in this order,
    # and one of these started last would leave the other processes idle for minutes at the
    # end. (In one process pytest-django's order stands: transactional tests last.)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.nodeid.split("::")[0] not in LONGEST_FILES)
    seen = Counter(item.nodeid for item in items)
    twice = sorted(nodeid for nodeid, count in seen.items() if count > 1)
    if twice:
        raise pytest.UsageError(f"tests collected under the same id: {twice[:5]}")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_people():
    names = {"olive": Role.OWNER, "cora": Role.CODER, "cyril": Role.CODER,
             "ada": Role.ADJUDICATOR, "vera": Role.VIEWER}
    users = {name: factories.user(name) for name in [*names, "otto"]}
    users["names"] = names
    return users


def make_alpha(people):
    study = factories.study("Alpha study", owner=people["olive"])
    for name, role in people["names"].items():
        factories.member(study, people[name], role)
    study.paper_codebook = factories.codebook(study)
    study.papers = [factories.paper_item(study, study.paper_codebook, n) for n in range(3)]
    return study


def make_beta(people):
    study = factories.study("Beta study", owner=people["otto"])
    factories.member(study, people["otto"], Role.CODER)
    return study


@pytest.fixture(autouse=True)
def fresh_cache():
    """Each test starts with an empty cache: throttles count refusals there
    (workbench.auth.Refusals), and one test's must not refuse the next one's requests."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def people(db):
    return make_people()


@pytest.fixture
def alpha(people):
    """The alpha study with its members, a small paper codebook and three items."""
    return make_alpha(people)


@pytest.fixture
def beta(people):
    return make_beta(people)


@pytest.fixture
def stored_files(settings, tmp_path):
    """The file storage (workbench.storage) in this test's own folder; returns the folder:
    a stored key is the path under it."""
    folder = tmp_path / "stored"
    settings.STORAGES = {**settings.STORAGES, "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": folder, "allow_overwrite": True}}}
    return folder


@pytest.fixture
def client_for(client):
    """Log a named person in on the Django test client: client_for(people['cora'])."""

    def login(user):
        client.force_login(user)
        return client

    return login


# --- the real Celery worker --------------------------------------------------

@pytest.fixture(autouse=True)
def tasks_in_process_unless_on_the_worker(request):
    """Only tests marked `worker` send tasks to the real worker (when REDIS_URL is set);
    the rest run what they enqueue in-process, as the embedded mode does."""
    from workbench.celery import app

    if request.node.get_closest_marker("worker") or jobs.runs_in_process():
        yield
        return
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = False


def _test_database_url(settings_dict):
    """DATABASE_URL rewritten to the test database pytest-django created."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + settings_dict["NAME"]))


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """A real `celery worker` process on Redis when REDIS_URL is set; None when tasks run eagerly.

    The worker connects to the test database, so tests using it must use
    `transactional_db` for their rows to be visible to it.
    """
    if jobs.runs_in_process():
        yield None
        return
    from django.db import connection

    env = dict(os.environ, DATABASE_URL=_test_database_url(connection.settings_dict))
    hostname = f"tests-{os.getpid()}@{socket.gethostname()}"
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workbench", "worker", "--pool=solo",
         "--concurrency=1", "--loglevel=WARNING",
         # Every kind's queue under WORKBENCH_QUEUE's namespace (workbench.queues).
         "-Q", queues.worker_argument(ns=settings.CELERY_TASK_DEFAULT_QUEUE),
         "--hostname", hostname],
        env=env,
    )
    try:
        _wait_for_worker(worker, hostname)
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()


def _wait_for_worker(worker, hostname, attempts=60):
    """Until this worker answers: under pytest-xdist another test process's worker answers
    a broadcast ping too, before this one reads its queue."""
    from workbench.celery import app

    for _ in range(attempts):
        if worker.poll() is not None:
            raise RuntimeError(f"celery worker exited with {worker.returncode}")
        if app.control.ping(destination=[hostname], timeout=0.5):
            return
        time.sleep(0.5)
    raise RuntimeError("celery worker did not answer a ping")


def wait_for_job(job, attempts=1200):
    """Poll a job row until it finishes (bounded at 5 min, a give-up point for a loaded
    machine; not a timing assertion)."""
    for _ in range(attempts):
        job.refresh_from_db()
        if job.finished:
            return job
        time.sleep(0.25)
    raise AssertionError(f"job {job.pk} still {job.status} ({job.message})")


@pytest.fixture(autouse=True)
def the_default_language():
    """Each test starts in the site's default language: a page read in Chinese by the test
    before (the test client leaves its request's language active) does not turn the next
    test's messages Chinese."""
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield



def page_queries(client, url):
    """The statements one GET of `url` ran (it must answer 200): what the query-count tests
    hold equal at two study sizes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200, url
    return len(queries)


def at_once(*calls, timeout=60):
    """Run the calls together, each on a thread and database connection of its own,
    released at once by a barrier; each call's result, or the exception it raised, in
    order (the race tests: parallel submits, parallel next-item requests)."""
    import threading

    from django.db import connections

    barrier, outcomes = threading.Barrier(len(calls)), [None] * len(calls)

    def run(n, call):
        try:
            barrier.wait(timeout=timeout)
            outcomes[n] = call()
        except Exception as error:  # handed to the test, which decides
            outcomes[n] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n, call)) for n, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return outcomes

"""Which queue each kind of job goes to: routing is decided here and nowhere else.

Jobs of one group share a queue, and each group can have workers of its own, so a
90-second export never holds up an agreement recompute or an import:

| group     | kinds                                          | what it is like              |
|-----------|------------------------------------------------|------------------------------|
| ingest    | ingest, import_to_study, import_rater_codings, | waits on sources and model   |
|           | import_qdpx, load_demo, model_run              | endpoints, long              |
| export    | export, export_qdpx, backup_study,             | CPU and disk, long           |
|           | restore_study                                  |                              |
| agreement | agreement, agreement_estimate,                 | short, wanted soon           |
|           | rebuild_disagreements,                         |                              |
|           | screening_rank, screening_simulate             |                              |
| scan      | scan_framework                                 | git history, long            |

A group's queue is named `<namespace>.<group>`, the namespace being WORKBENCH_QUEUE
(default "workbench"), so installs, CI and test runs sharing one Redis never take
each other's jobs. A kind missing from ROUTES goes to the namespace's own queue (with
a warning); tests/test_queues.py fails for any registered kind not routed here.

Workers, one command a group (docs/deploy.md; `manage.py queues` prints them):

    celery -A workbench worker -Q workbench.ingest --concurrency=2
    celery -A workbench worker -Q workbench.export --concurrency=1
    celery -A workbench worker -Q workbench.agreement,workbench --concurrency=2
    celery -A workbench worker -Q workbench.scan --concurrency=1

Each worker's job sweep (jobs.recover) looks only after the kinds of the queues it
consumes (kinds_for), so a group without a live worker is not sent again and again
by the others.
"""

import logging

logger = logging.getLogger(__name__)

GROUPS = {
    "ingest": ("ingest", "import_to_study", "import_rater_codings", "import_qdpx", "load_demo",
               "model_run"),
    "export": ("export", "export_qdpx", "backup_study", "restore_study"),
    "agreement": ("agreement", "agreement_estimate", "rebuild_disagreements", "screening_rank",
                  "screening_simulate"),
    "scan": ("scan_framework",),
}
ROUTES = {kind: group for group, kinds in GROUPS.items() for kind in kinds}
# How many jobs of a group one worker runs at once (its --concurrency): exports and
# scans take a core each and much memory; imports mostly wait on their sources.
CONCURRENCY = {"ingest": 2, "export": 1, "agreement": 2, "scan": 1}


def namespace():
    """WORKBENCH_QUEUE, read at send time (tests give their own workers their own)."""
    from .celery import app

    return app.conf.task_default_queue


def queue_name(group, ns=None):
    return f"{ns or namespace()}.{group}"


def queue_for(kind):
    group = ROUTES.get(kind)
    if group is None:
        logger.warning("job kind %r has no queue in workbench.queues.ROUTES; it goes to the "
                       "namespace's own queue", kind)
        return namespace()
    return queue_name(group)


def all_queues(ns=None):
    """Every queue of the namespace: the groups' and its own (for unrouted kinds)."""
    ns = ns or namespace()
    return [queue_name(group, ns) for group in GROUPS] + [ns]


def worker_argument(groups=None, ns=None):
    """The `-Q` of a worker for these groups (all of them, and the namespace's own
    queue, when None)."""
    ns = ns or namespace()
    if groups is None:
        return ",".join(all_queues(ns))
    return ",".join(queue_name(group, ns) for group in groups)


def kinds_for(queue_names, registered=()):
    """The job kinds whose queue is among `queue_names`; None when that is every kind
    (the worker consumes all the namespace's queues)."""
    names = set(queue_names)
    if set(all_queues()) <= names:
        return None
    kinds = {kind for kind in ROUTES if queue_for(kind) in names}
    if namespace() in names:
        kinds |= {kind for kind in registered if kind not in ROUTES}
    return kinds


def depths():
    """{queue name: messages waiting} for the namespace's queues (Redis lists)."""
    from .celery import app

    with app.connection_for_read() as conn:
        client = conn.default_channel.client
        return {name: int(client.llen(name)) for name in all_queues()}

"""Queues by kind (workbench.queues): every kind routed, each worker sweeping its own."""

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from workbench import jobs, queues
from workbench.models import Job

ROOT = Path(__file__).resolve().parents[2]
# The kinds the apps register, read in a fresh interpreter (tests register kinds of their own).
KINDS = ("import json, django; django.setup(); from workbench import jobs; "
         "print(json.dumps(jobs.kinds()))")


def registered_kinds():
    found = subprocess.run([sys.executable, "-c", KINDS], cwd=ROOT, capture_output=True,
                           text=True, check=True,
                           env={**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings"})
    return json.loads(found.stdout.strip().splitlines()[-1])


def test_every_job_kind_the_apps_register_has_a_queue():
    kinds = registered_kinds()
    assert {"ingest", "import_to_study", "export", "agreement", "scan_framework"} <= set(kinds)
    unrouted = sorted(set(kinds) - set(queues.ROUTES))
    assert not unrouted, f"add these kinds to workbench.queues.GROUPS: {unrouted}"


@pytest.mark.parametrize("kind, group", [("ingest", "ingest"), ("import_to_study", "ingest"),
                                         ("export", "export"), ("agreement", "agreement"),
                                         ("scan_framework", "scan")])
def test_a_kind_goes_to_its_groups_queue_under_the_namespace(kind, group, settings):
    assert queues.queue_for(kind) == f"{settings.CELERY_TASK_DEFAULT_QUEUE}.{group}"


def test_an_unrouted_kind_goes_to_the_namespace_queue_with_a_warning(caplog):
    assert queues.queue_for("not-a-kind") == queues.namespace()
    assert "not-a-kind" in caplog.text


def test_a_worker_of_all_queues_sweeps_every_kind_and_one_of_exports_only_its_own():
    assert queues.kinds_for(queues.all_queues()) is None
    assert queues.kinds_for([queues.queue_name("export")]) == {
        "export", "export_qdpx", "backup_study", "restore_study"}
    assert "careless" in queues.kinds_for([queues.namespace()], ["careless", "export"])


def test_the_sweep_of_an_export_worker_sends_again_only_export_jobs(db, monkeypatch):
    sent = []
    monkeypatch.setattr("workbench.broker.publish", lambda pk, kind=None: sent.append(
        (pk, kind)) or True)
    old = timezone.now() - timedelta(minutes=1)
    export = Job.objects.create(kind="export")
    agreement = Job.objects.create(kind="agreement")
    Job.objects.filter(pk__in=[export.pk, agreement.pk]).update(created_at=old)
    assert jobs.recover(kinds=queues.kinds_for([queues.queue_name("export")])) == [export.pk]
    assert sent == [(export.pk, "export")]
    assert jobs.recover() == [agreement.pk]  # the agreement workers' sweep, or cron's


def test_the_queues_command_prints_each_groups_worker_command(db, capsys):
    Job.objects.create(kind="export")
    call_command("queues")
    out = capsys.readouterr().out
    export = queues.queue_name("export")
    assert f"{export}: export, export_qdpx, backup_study, restore_study (1 waiting)" in out
    assert f"celery -A workbench worker -Q {export} --concurrency=1" in out

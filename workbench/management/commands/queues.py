"""queues: each queue group's kinds, its queue, what waits in it, and its worker command."""

from django.core.management.base import BaseCommand
from django.db.models import Count

from workbench import jobs, queues
from workbench.models import Job


class Command(BaseCommand):
    help = ("List the job queues (workbench.queues): the kinds each takes, the jobs waiting "
            "for it, and the command that starts a worker for it.")

    def handle(self, *args, **options):
        waiting = dict(Job.objects.filter(status=Job.Status.QUEUED).values_list("kind")
                       .annotate(n=Count("pk")).order_by())
        for group, kinds in queues.GROUPS.items():
            name = queues.queue_name(group)
            queued = sum(waiting.get(kind, 0) for kind in kinds)
            self.stdout.write(f"{name}: {', '.join(kinds)} ({queued} waiting)")
            self.stdout.write(f"    celery -A workbench worker -Q {name} "
                              f"--concurrency={queues.CONCURRENCY[group]}")
        unrouted = sorted(set(jobs.kinds()) - set(queues.ROUTES))
        if unrouted:
            self.stderr.write(f"Not routed (they go to {queues.namespace()}): "
                              f"{', '.join(unrouted)}")

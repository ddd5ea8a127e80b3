"""Send again the jobs a worker or the broker lost (what each worker's sweep does)."""

from django.core.management.base import BaseCommand

from workbench import jobs


class Command(BaseCommand):
    help = ("Queue again running jobs whose worker stopped reporting, and send queued jobs "
            "whose id never reached the broker (or was lost by it). Safe to run at any time.")

    def handle(self, **options):
        sent = jobs.recover()
        listed = f": {', '.join(map(str, sent))}" if sent else ""
        self.stdout.write(f"Sent {len(sent)} job(s){listed}.")

from django.core.management.base import BaseCommand

from coding.demo.study import DEMO_PASSWORD, DEMO_PEOPLE, demo_users, load_demo


class Command(BaseCommand):
    help = "Load the RL-inclusion demo study with synthetic data (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, seed, **options):
        demo_users()
        summary = load_demo(seed=seed)
        verb = "Loaded" if summary["created"] else "Already loaded:"
        self.stdout.write(f"{verb} demo study '{summary['study']}'.")
        self.stdout.write(f"Demo accounts (password '{DEMO_PASSWORD}'):")
        for username, _, _, role in DEMO_PEOPLE:
            self.stdout.write(f"  {username:<12} {role.label}")

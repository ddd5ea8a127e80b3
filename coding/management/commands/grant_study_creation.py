from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from coding.studies.creators import grant


class Command(BaseCommand):
    help = ("Let a user create studies (the coding.create_study permission), or take it back "
            "with --revoke. Staff may create studies without it; staff also grant it on the "
            "study creators page (/staff/creators/).")

    def add_arguments(self, parser):
        parser.add_argument("user", help="username")
        parser.add_argument("--revoke", action="store_true")

    def handle(self, *args, user, revoke, **options):
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise CommandError(f"No user {user!r}.")
        grant(found, None, revoke=revoke)  # a command: no account is the actor
        if revoke:
            self.stdout.write(f"{user} may no longer create studies"
                              + (" (still may: staff)." if found.is_staff else "."))
        else:
            self.stdout.write(f"{user} may now create studies.")

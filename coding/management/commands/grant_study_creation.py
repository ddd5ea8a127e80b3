from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from coding.access.audit import record, target_of


class Command(BaseCommand):
    help = ("Let a user create studies (the coding.create_study permission), or take it back "
            "with --revoke. Staff may create studies without it.")

    def add_arguments(self, parser):
        parser.add_argument("user", help="username")
        parser.add_argument("--revoke", action="store_true")

    def handle(self, *args, user, revoke, **options):
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise CommandError(f"No user {user!r}.")
        permission = Permission.objects.get(codename="create_study", content_type__app_label="coding")
        with transaction.atomic():
            change = found.user_permissions.remove if revoke else found.user_permissions.add
            change(permission)
            # Not a study's change: an entry of the install's own (no study).
            record(None, None, "permission.revoke" if revoke else "permission.grant",
                   target_of("account", name=user),
                   permission="create_study")
        if revoke:
            self.stdout.write(f"{user} may no longer create studies"
                              + (" (still may: staff)." if found.is_staff else "."))
        else:
            self.stdout.write(f"{user} may now create studies.")

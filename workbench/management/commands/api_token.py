"""Make, list and revoke a user's API tokens from the shell (as on /account/tokens/)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from workbench.models import ApiToken
from workbench.tokens import create_token, live_tokens


class Command(BaseCommand):
    help = "Make (prints the key once), list or revoke a user's API tokens."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        make = sub.add_parser("create", help="Make a token and print its key.")
        make.add_argument("username")
        make.add_argument("--name", required=True, help="What the token is for.")
        make.add_argument("--days", type=int, default=90,
                          help="Days until it expires; 0 for never (default 90).")
        listing = sub.add_parser("list", help="A user's live tokens, without their keys.")
        listing.add_argument("username")
        revoke = sub.add_parser("revoke", help="Revoke a token by the id `list` shows.")
        revoke.add_argument("username")
        revoke.add_argument("token_id", type=int)

    def handle(self, action, username, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        if action == "create":
            if options["days"] < 0:
                raise CommandError("--days must be 0 (never) or more.")
            try:
                token, key = create_token(user, options["name"], options["days"] or None)
            except ValueError as error:
                raise CommandError(str(error)) from error
            self.stderr.write(f"Token {token.pk} “{token.name}” for {username}; "
                              "the key below is not shown again:")
            self.stdout.write(key)
        elif action == "list":
            for token in live_tokens(user):
                expiry = token.expiry.date().isoformat() if token.expiry else "never"
                used = token.last_used_at.isoformat(timespec="minutes") if token.last_used_at else "never"
                self.stdout.write(f"{token.pk}\t{token.name}\t{token.token_key}…\t"
                                  f"expires {expiry}\tlast used {used}")
        else:
            deleted, _ = ApiToken.objects.filter(pk=options["token_id"], user=user).delete()
            if not deleted:
                raise CommandError(f"{username} has no token {options['token_id']}.")
            self.stdout.write(f"Revoked token {options['token_id']}.")

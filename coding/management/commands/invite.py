"""Make a one-time invitation link to a study (as the members page does) and print it."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.models import Role
from coding.studies import members


class Command(BaseCommand):
    help = ("Make a one-time link that lets a person without an account join a study with a "
            "role; prints the link (starting with WORKBENCH_BASE_URL), shown only now.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("role", choices=Role.values)
        parser.add_argument("--note", default="", help="who it is for, for the owners' list")
        parser.add_argument("--email", default="",
                            help="mail the link there (when EMAIL_HOST is set)")
        parser.add_argument("--days", type=int, default=members.INVITE_DAYS,
                            help=f"days until it expires (1 to {members.MAX_INVITE_DAYS}, "
                                 f"default {members.INVITE_DAYS})")

    def handle(self, *args, study, role, note, email, days, **options):
        found = study_or_error(study)
        try:
            invite, token = members.create_invite(found, role, None, note=note, email=email,
                                                  days=days)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        link = members.invite_link(token)
        mailed = members.send_invite(invite, link)
        self.stderr.write(f"Invite {invite.pk} to {found.slug} as {role}, until "
                          f"{invite.expires_at:%Y-%m-%d %H:%M} UTC{', mailed' if mailed else ''}; "
                          "the link is not shown again:")
        self.stdout.write(link)

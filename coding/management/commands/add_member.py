"""Give a person a role in a study, or take it away (as the members page does)."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.http import Http404

from coding.management.studies import study_or_error
from coding.models import Role
from coding.studies import members


class Command(BaseCommand):
    help = "Give an existing account a role in a study (--remove takes the role away)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("user", help="the account's username or e-mail address")
        parser.add_argument("role", choices=Role.values)
        parser.add_argument("--remove", action="store_true", help="remove the role instead")

    def handle(self, *args, study, user, role, remove, **options):
        found = study_or_error(study)
        try:
            person = members.find_user(**({"email": user} if "@" in user else {"username": user}))
            if remove:
                membership = found.memberships.filter(user=person, role=role,
                                                      deleted_at__isnull=True).first()
                if membership is None:
                    raise CommandError(f"{person.username} is not {role} in {found.slug}.")
                members.remove_member(membership, None)
            else:
                members.add_member(found, person, role, None)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        except (members.Refused, Http404) as error:
            raise CommandError(str(error)) from error
        done = "is no longer" if remove else "is now"
        self.stdout.write(f"{person.username} {done} {role} in {found.slug}.")

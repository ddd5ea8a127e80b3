from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.studies import setup as study_setup


class Command(BaseCommand):
    help = ("Create a study owned by a user: blank, from a preset, or as a copy of a study "
            "they own (settings, published codebooks, catalog; never items or codings).")

    def add_arguments(self, parser):
        parser.add_argument("name", help="the study's name (its slug is made from it)")
        parser.add_argument("--owner", required=True, help="username of the study's owner")
        parser.add_argument("--description", default="")
        start = parser.add_mutually_exclusive_group()
        start.add_argument("--preset", choices=sorted(study_setup.PRESETS))
        start.add_argument("--copy-of", metavar="SLUG", help="a study the owner owns")

    def handle(self, *args, name, owner, description, preset, copy_of, **options):
        user = get_user_model().objects.filter(username=owner).first()
        if user is None:
            raise CommandError(f"No user {owner!r}.")
        source = study_or_error(copy_of) if copy_of else None
        try:
            # Whoever runs the command administers the install: the owner needs no
            # permission to create studies, but may copy only a study they own.
            study = study_setup.create_study(user, name, description, preset=preset,
                                             copy_of=source, by_command=True)
        except ValidationError as error:
            raise CommandError("; ".join(f"{field}: {' '.join(problems)}" for field, problems
                                         in error.message_dict.items())) from error
        except PermissionDenied as error:
            raise CommandError(f"{owner} does not own {copy_of!r}: {error}") from error
        self.stdout.write(f"Created {study.slug} ({study.name}), owned by {user.username}.")

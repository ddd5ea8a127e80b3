from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from coding.management.studies import study_or_error
from coding.models import Rater
from coding.raters.setup import add_rater


class Command(BaseCommand):
    help = ("Add a rater to a study: a model, an outside source, or a member as a person "
            "rater. Raters never enter the coder queue.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("name", help="the rater's name, as files name it")
        parser.add_argument("--kind", choices=Rater.Kind.values, required=True)
        parser.add_argument("--model-version", default="")
        parser.add_argument("--config-hash", default="", help="hash of the prompt or configuration")
        parser.add_argument("--provenance", default="")
        parser.add_argument("--member", default="", help="username, for a person rater")

    def handle(self, *args, study, name, kind, model_version, config_hash, provenance, member,
               **options):
        found = study_or_error(study)
        user = None
        if member:
            user = get_user_model().objects.filter(username=member).first()
            if user is None:
                raise CommandError(f"no user {member!r}")
        try:
            rater = add_rater(found, None, kind=kind, name=name, model_version=model_version,
                              config_hash=config_hash, provenance=provenance, member=user)
        except ValidationError as error:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in
                                         error.message_dict.items())) from None
        self.stdout.write(f"Rater {rater.name} ({rater.kind}) added to {found.slug}.")

"""Publish a codebook's draft (as the publish page does)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from coding.actions.publish import publish_draft
from coding.codebooks.editing import OPEN_ASSIGNMENTS, NothingToPublish
from coding.codebooks.spec import InvalidSpec
from coding.management.commands.codebook_diff import codebook_or_error
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Publish a codebook's draft as an immutable version with a note, and say what "
            "items coders hold now do: switch to the new version, or go back to the pool.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("codebook", help="the codebook's id or name")
        parser.add_argument("--note", required=True, help="what changed and why")
        parser.add_argument("--open-assignments", choices=list(OPEN_ASSIGNMENTS), required=True,
                            help="; ".join(f"{k}: {v}" for k, v in OPEN_ASSIGNMENTS.items()))
        parser.add_argument("--draft", type=int, dest="number",
                            help="the draft's number: publish only if that is still the draft")
        parser.add_argument("--by", help="the username recorded in the audit trail")

    def handle(self, *args, study, codebook, note, open_assignments, number, by, **options):
        found = codebook_or_error(study_or_error(study), codebook)
        actor = None
        if by:
            actor = get_user_model().objects.filter(username=by).first()
            if actor is None:
                raise CommandError(f"No user {by!r}.")
        try:
            version, counts = publish_draft(found, actor, note, open_assignments, number=number)
        except InvalidSpec as invalid:
            raise CommandError("Not published: " + "; ".join(map(str, invalid.errors))) from None
        except NothingToPublish as gone:
            raise CommandError(str(gone)) from None
        self.stdout.write(f"{found.name} v{version.number} published; {counts['released']} open "
                          f"items released, {counts['drafts_pruned']} coder drafts pruned.")

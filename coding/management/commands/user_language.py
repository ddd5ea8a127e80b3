from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from coding.accounts import languages


class Command(BaseCommand):
    help = ("Show or set the language a person's pages and mail use in any browser (what the "
            "switcher stores when they are signed in): user_language USER [CODE | --forget].")

    def add_arguments(self, parser):
        parser.add_argument("user", help="username")
        parser.add_argument("language", nargs="?",
                            help=f"one of {', '.join(languages.language_codes())}")
        parser.add_argument("--forget", action="store_true",
                            help="drop the choice: pages follow the browser again")

    def handle(self, *args, user, language, forget, **options):
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise CommandError(f"No user {user!r}.")
        if forget and language:
            raise CommandError("Give a language or --forget, not both.")
        if forget:
            languages.forget_language(found)
        elif language:
            try:
                languages.remember_language(found, language)
            except languages.UnknownLanguage as unknown:
                raise CommandError(str(unknown)) from None
        chosen = languages.stored_language(found)
        self.stdout.write(f"{user}: {chosen}" if chosen else
                          f"{user}: none chosen (pages follow the browser; mail uses "
                          f"{languages.user_language(found)})")

from django.conf import settings
from django.db import models


class LanguagePreference(models.Model):
    """The language a person chose with the switcher while signed in (coding.accounts.languages):
    their pages follow it in any browser, and mail to them is written in it. A row may hold
    no language (""): it keeps only the "codebook as written" choice."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True,
                                related_name="language_preference", on_delete=models.CASCADE)
    # A code of settings.LANGUAGES, checked by coding.accounts.languages.check_language (not a
    # field choice, so adding a language needs no migration).
    language = models.CharField(max_length=16)
    # The "show the codebook as written" switch of the coding, review and codebook pages
    # (coding.accounts.languages.choose_original): kept for the next item, page and device.
    show_original = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.user} reads {self.language}"

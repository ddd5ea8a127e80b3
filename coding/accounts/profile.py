"""A person's own account, without an administrator: the name others see, the e-mail
address a password reset is mailed to, and the language the pages are in.

The password itself is changed and reset by Django's own views (workbench/urls.py): a
change needs the old password; a reset needs a link, mailed to the account's address when
a mail server is configured (EMAIL_HOST), else made by an owner of the person's studies
(coding.studies.members.reset_link).
"""

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from coding.accounts.languages import remember_language, stored_language

NAME_MAX = 150  # Django's first_name


def mail_configured():
    """Whether this workbench can send mail (EMAIL_HOST is set): invites and password
    reset links are mailed only then; otherwise people pass links on themselves."""
    return bool(getattr(settings, "EMAIL_HOST", ""))


class ProfileForm(forms.Form):
    display_name = forms.CharField(
        label=gettext_lazy("Display name"), max_length=NAME_MAX, required=False,
        help_text=gettext_lazy("What the people of your studies see beside your username. "
                               "Empty: your username alone."))
    email = forms.EmailField(
        label=gettext_lazy("E-mail"), required=False,
        help_text=gettext_lazy("Where a password reset link is mailed, when this workbench "
                               "has a mail server. Never shown to coders."))
    language = forms.ChoiceField(label=gettext_lazy("Language"), choices=settings.LANGUAGES)

    def __init__(self, *args, user, **kwargs):
        self.user = user
        kwargs.setdefault("initial", {
            "display_name": user.get_full_name(), "email": user.email,
            "language": stored_language(user) or settings.LANGUAGE_CODE})
        super().__init__(*args, **kwargs)

    def clean_display_name(self):
        name = " ".join(self.cleaned_data["display_name"].split())
        if any(ord(c) < 32 for c in name):
            raise forms.ValidationError(_("A name is one line of text."))
        return name

    def clean_email(self):
        email = self.cleaned_data["email"].strip()
        if email and get_user_model().objects.filter(email__iexact=email).exclude(
                pk=self.user.pk).exists():
            raise forms.ValidationError(_("Another account uses this address: a reset link "
                                          "must reach one person only."))
        return email

    @transaction.atomic
    def save(self):
        """Store the name (as the first name, the last name emptied), the address and the
        language; returns the fields that changed."""
        user, data = self.user, self.cleaned_data
        changed = [field for field, before in (
            ("display_name", user.get_full_name()), ("email", user.email),
            ("language", stored_language(user))) if data[field] != before]
        user.first_name, user.last_name, user.email = data["display_name"], "", data["email"]
        user.save(update_fields=["first_name", "last_name", "email"])
        remember_language(user, data["language"])
        return changed

"""What the study commands share: finding the study they are given, by its slug."""

from django.core.management.base import CommandError

from coding.models import Study


def study_or_error(slug):
    """The live study with this slug; a command error naming it otherwise."""
    study = Study.objects.alive().filter(slug=slug).first()
    if study is None:
        raise CommandError(f"No study {slug!r}.")
    return study

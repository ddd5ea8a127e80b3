"""Archived studies change no more: the one check every door calls.

An archived study (`Study.archived_at`) stays readable by its members, but nothing in it
changes until an owner restores it: no item reserved or skipped, no coding submitted, no
decision, no import, no member, invite, codebook, calibration, rater or setting changed.
Each of those calls `check_open`; `coding.access.middleware` turns the refusal into a 409
page or a 409 `{"code": "archived"}` answer of the API. Restoring is the one change left.
"""

from django.utils.translation import gettext as _


class StudyArchived(Exception):
    code = "archived"

    def __init__(self, study):
        super().__init__(_("The study “%(name)s” is archived: nothing in it changes (no items "
                           "handed out, no codings, decisions or imports, no changes to members, "
                           "codebooks or settings). An owner can restore it.")
                         % {"name": study.name})
        self.study = study


def check_open(study):
    """Refuse new work in an archived study (StudyArchived); reads the study as loaded."""
    if study.archived_at is not None:
        raise StudyArchived(study)

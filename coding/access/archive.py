"""Archived studies are closed to new work: the one check every door calls.

An archived study (`Study.archived_at`) stays readable by its members, but no item is
reserved, no coding submitted and no import started in it until an owner restores it.
The queue, the submission and the import call `check_open`; `coding.access.middleware` turns
the refusal into a 409 page or a 409 `{"code": "archived"}` answer of the API.
"""

from django.utils.translation import gettext as _


class StudyArchived(Exception):
    code = "archived"

    def __init__(self, study):
        super().__init__(_("The study “%(name)s” is archived: it takes no new work (no items "
                           "handed out, no codings submitted, no imports). An owner can restore "
                           "it.") % {"name": study.name})
        self.study = study


def check_open(study):
    """Refuse new work in an archived study (StudyArchived); reads the study as loaded."""
    if study.archived_at is not None:
        raise StudyArchived(study)

"""Permission rows: Creating, copying, renaming, archiving and restoring studies; the setup checklist and audit trail.

The owner (olive) is granted `coding.create_study` here; nobody else holds it or is
staff, so creating is refused to everyone else whatever their roles in alpha."""

from django.contrib.auth.models import Permission

ROWS = {
    # Creating needs the permission, not a role in some study (an empty form: 200 or 400).
    "studies/new/": {"GET": "LFFFFFY", "POST": "LFFFFFY"},
    "api/studies/": {"GET": "LYYYYYY", "POST": "LFFFFFY"},
    # Archiving, restoring and the audit trail: owners.
    "studies/<slug:slug>/archive/": {"POST": "LNFFFFY"},
    "studies/<slug:slug>/restore/": {"POST": "LNFFFFY"},
    "studies/<slug:slug>/audit/": {"GET": "LNFFFFY"},
    "api/studies/<slug:slug>/archive/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/restore/": {"POST": "LNFFFFY"},
    "api/studies/<slug:slug>/audit/": {"GET": "LNFFFFY"},
}


def values(world, alpha, people):
    people["olive"].user_permissions.add(
        Permission.objects.get(codename="create_study", content_type__app_label="coding"))
    return {}

"""A study's backup from the browser: an owner starts it (a job) and downloads the zip."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from coding.access.roles import access_study
from coding.models import Role
from coding.studies.backup import backup_key, backup_name, start_backup
from workbench import storage
from workbench.models import Job


@login_required
@require_POST
def backup_start(request, slug):
    study = access_study(request.user, slug, roles={Role.OWNER})
    return redirect("job-detail", pk=start_backup(study, request.user).pk)


@login_required
@require_safe
def backup_download(request, slug, backup_id):
    """The finished backup's zip, to the study's owners only (it holds every coding and
    every blinded field)."""
    study = access_study(request.user, slug, roles={Role.OWNER})
    job = Job.objects.filter(pk=backup_id, kind="backup_study", params__study=study.pk,
                             status=Job.Status.DONE).first()
    response = storage.download(backup_key(job), backup_name(job)) if job else None
    if response is None:
        raise Http404(_("No such backup."))
    return response

"""A study's backup over the API: start one (a job to poll at /api/jobs/{id}/), download it."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.access.roles import access_study
from coding.models import Role
from coding.studies.backup import start_backup
from coding.studies.views.backup import backup_download
from workbench.api import JobSerializer


class BackupStart(APIView):
    @extend_schema(request=None, responses={202: JobSerializer})
    def post(self, request, slug):
        """Start a backup of the study (owners): its rows and stored files in one zip, which
        `manage.py restore_study` restores onto a fresh instance. Poll the returned job,
        then follow result.download."""
        study = access_study(request.user, slug, roles={Role.OWNER})
        job = start_backup(study, request.user)
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class BackupDownload(APIView):
    @extend_schema(responses={(200, "application/zip"): OpenApiResponse(
        description="The backup zip (manifest.json, users.json, rows/, files/).")})
    def get(self, request, slug, backup_id):
        """The finished backup's zip (owners)."""
        return backup_download(request._request, slug, backup_id)

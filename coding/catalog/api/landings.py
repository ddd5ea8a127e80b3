"""The method catalog, framework landings and history scans over the API (never for coders)."""

from django.core.exceptions import ObjectDoesNotExist
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from coding.catalog import edit as catalog_edit
from coding.catalog import landings
from coding.catalog import names as landings_names
from coding.catalog.api.edit import (
    CONFIRM, REMOVAL, FrameworkSerializer, confirmed, removed, valid, write,
)
from coding.catalog.views.edit import access_catalog_editor
from coding.catalog.views.landings import access_catalog, start_scan
from workbench.api import JobSerializer


def landing_payload(landing):
    hit = landing.hit
    return {"framework": landing.framework.name, "option_name": landing.option_name,
            "commit": landing.commit, "committed_at": landing.committed_at,
            "landed_on": landings.landing_day(landing),
            "author": landing.author, "pull_request": landing.pull_request,
            "upper_bound": landing.upper_bound,
            "found_as": hit.variant if hit else None, "kind": hit.kind if hit else None,
            "path": hit.path if hit else None, "line": hit.line if hit else None,
            "authored_at": hit.authored_at if hit else None,
            "committer_offset": hit.committer_offset if hit else None,
            "renamed": hit.renamed if hit else False,
            "rename_reason": hit.rename_reason if hit else "",
            "bulk": hit.bulk if hit else landing.files_changed >= landings.BULK_FILES,
            "batch_sync": hit.batch_sync if hit else False}


def _hit(option):
    try:
        return option.hit is not None
    except ObjectDoesNotExist:
        return False


class CatalogRowSerializer(serializers.Serializer):
    method = serializers.CharField(source="method.name")
    source_arxiv_id = serializers.CharField(source="method.source_arxiv_id")
    first_public = serializers.CharField(source="method.first_public", help_text="YYYY-MM-DD")
    frameworks = serializers.ListField(child=serializers.CharField(),
                                       help_text="Frameworks the method landed in.")
    days_to_first_landing = serializers.IntegerField(source="days_to_first", allow_null=True)
    not_known_in = serializers.ListField(
        child=serializers.CharField(), source="unknown",
        help_text="Frameworks where the method has option names but no landing while their "
                  "last scan could not read every file version: not known, not absent.")
    landings = serializers.SerializerMethodField()

    def get_landings(self, row) -> list[dict]:
        return [landing_payload(landing) for landing in row["landings"]]


class Catalog(generics.ListAPIView):
    """Each method: source, first public, landings per framework, days to first landing."""

    serializer_class = CatalogRowSerializer
    filter_backends = []  # a computed list, paged like the others

    def get_queryset(self):
        return landings.catalog(access_catalog(self.request.user, self.kwargs["slug"]))


class ScanRequest(serializers.Serializer):
    repo = serializers.CharField(help_text="A clone in the server's import folder "
                                           "(WORKBENCH_IMPORT_DIR), by its folder name.")
    branch = serializers.CharField(required=False, allow_blank=True, default="",
                                   help_text="Empty: the framework's default branch.")

    def validate_branch(self, branch):
        try:
            return catalog_edit.check_branch(branch) if branch else ""
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None


class FrameworkDetail(APIView):
    @extend_schema(responses={200: dict})
    def get(self, request, slug, framework_id):
        """Methods landed with their delay; thread proposals with their coded outcome."""
        study = access_catalog(request.user, slug)
        framework = get_object_or_404(study.frameworks, pk=framework_id)
        report = landings.framework_report(framework)
        scan = report["scan"]
        options = (framework.option_names.select_related("method", "hit")
                   .order_by("method__position", "method__name", "name"))
        return Response({
            "framework": report["framework"].name, "median_days": report["median_days"],
            "landed": [{**landing_payload(row["landing"]), "method": row["landing"].method.name,
                        "days": row["days"], "days_utc": row["days_utc"]}
                       for row in report["landed"]],
            "option_names": [{"method": o.method.name, "name": o.name,
                              "kind": landings_names.kind_of(o.name),
                              "hit": landings.hit_payload(o.hit) if _hit(o) else None}
                             for o in options],
            "scan": None if scan is None else {
                "branch": scan.branch, "last_commit": scan.last_commit,
                "commits_read": scan.commits_read, "partial_clone": scan.partial_clone,
                "fetched_blobs": scan.fetched_blobs, "fetch_error": scan.fetch_error,
                "complete": scan.complete, "missing_blobs": scan.missing_blobs, "missing_paths": scan.missing_paths,
                "excluded_paths": scan.excluded_paths, "mentions": scan.mentions,
                "warnings": report["warnings"]},
            "proposals": [{"document_key": row["link"].document.key,
                           "method": row["link"].method.name, "outcome": row["outcome"]}
                          for row in report["proposals"]],
        })

    @extend_schema(request=ScanRequest, responses={202: JobSerializer},
                   operation_id="studies_frameworks_scan")
    def post(self, request, slug, framework_id):
        """Scan the framework's history (owners); poll the returned job."""
        study = access_catalog_editor(request.user, slug)
        framework = get_object_or_404(study.frameworks, pk=framework_id)
        data = ScanRequest(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            job = start_scan(framework, request.user, **data.validated_data)
        except ValueError as error:
            raise ValidationError({"repo": [str(error)]}) from None
        job.refresh_from_db()
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=FrameworkSerializer, responses={200: FrameworkSerializer})
    def patch(self, request, slug, framework_id):
        """Change a framework's name, repository or default branch (owners); fields left
        out keep their values. A new default branch is scanned from its first commit."""
        study = access_catalog_editor(request.user, slug)
        framework = get_object_or_404(study.frameworks, pk=framework_id)
        write(catalog_edit.save_framework, study, request.user,
              valid(FrameworkSerializer, request, partial=True), framework)
        return Response(FrameworkSerializer(framework).data)

    @extend_schema(parameters=[CONFIRM], responses=REMOVAL)
    def delete(self, request, slug, framework_id):
        """Remove a framework with its option names and scan record (owners); with
        landings, only confirmed."""
        study = access_catalog_editor(request.user, slug)
        framework = get_object_or_404(study.frameworks, pk=framework_id)
        return removed(write(catalog_edit.remove_framework, framework, request.user,
                             confirmed(request)))

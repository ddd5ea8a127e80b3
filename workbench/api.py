"""Jobs over the API: status, progress, log and cancelling; the same rules as the job page."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from . import broker, jobs
from .models import Job, JobEvent
from .views import access_job, job_progress, your_jobs


class JobEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = JobEvent
        fields = ["level", "location", "message", "created_at"]


class JobSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    progress = serializers.SerializerMethodField()
    events = serializers.SerializerMethodField()
    waiting_for_queue = serializers.SerializerMethodField()
    params = serializers.SerializerMethodField()
    result = serializers.SerializerMethodField()

    class Meta:
        model = Job
        fields = ["id", "kind", "params", "status", "done", "total", "percent", "message",
                  "error", "result", "created_at", "started_at", "finished_at", "progress",
                  "waiting_for_queue", "events"]

    def get_params(self, job) -> dict:
        """What the job was asked to do; a file on the server (an upload, a clone in the
        import folder) by its name only."""
        return jobs.without_server_paths(job.params or {}, job.pk, quiet=True)

    def get_result(self, job) -> dict:
        """What the job produced: counts, file names, download links; never a server path."""
        return jobs.without_server_paths(job.result or {}, job.pk, quiet=True)

    def get_progress(self, job) -> dict:
        return job_progress(job)

    def get_waiting_for_queue(self, job) -> bool:
        """True while the job waits because the task queue could not be reached; it starts
        once the queue is back."""
        return broker.waiting_for_queue(job)

    def get_events(self, job) -> list[dict]:
        return JobEventSerializer(job.events.order_by("id")[:500], many=True).data


class JobSummarySerializer(JobSerializer):
    class Meta(JobSerializer.Meta):
        fields = [f for f in JobSerializer.Meta.fields if f not in ("events", "params")]


class JobList(generics.ListAPIView):
    """The jobs you started, newest first; filter by kind and status."""

    serializer_class = JobSummarySerializer
    queryset = Job.objects.none()
    filterset_fields = ["kind", "status"]
    ordering_fields = ["created_at", "finished_at"]

    def get_queryset(self):
        return your_jobs(self.request.user)


class JobDetail(APIView):
    @extend_schema(responses=JobSerializer)
    def get(self, request, pk):
        """A job you started: status, progress (rate, time left), result and log."""
        return Response(JobSerializer(access_job(request.user, pk)).data)


class JobCancel(APIView):
    @extend_schema(request=None, responses=JobSerializer)
    def post(self, request, pk):
        """Ask the job to stop; a running job stops at its next progress report."""
        job = access_job(request.user, pk)
        jobs.cancel(job)
        job.refresh_from_db()
        return Response(JobSerializer(job).data)

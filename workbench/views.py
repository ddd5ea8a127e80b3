"""The job page: live progress of long work, its log, and cancelling it."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from . import broker, jobs
from .models import Job


def access_job(user, pk):
    """A job is visible to whoever started it (and to staff); to anyone else it does not exist."""
    job = Job.objects.filter(pk=pk).first()
    if job is None or not (job.created_by_id == user.pk or user.is_staff):
        raise Http404("No such job.")
    return job


def job_progress(job):
    """Rate and remaining time from the work reported so far."""
    elapsed = ((job.finished_at or timezone.now()) - job.started_at).total_seconds() if job.started_at else 0
    rate = job.done / elapsed if elapsed > 0 else None
    remaining = (job.total - job.done) / rate if rate and job.total and not job.finished else None
    return {"elapsed": round(elapsed), "rate": rate and round(rate, 1),
            "remaining": remaining and round(remaining)}


KINDS = jobs.KIND_LABELS


def your_jobs(user, kind="", status=""):
    jobs_ = Job.objects.filter(created_by=user)
    if kind:
        jobs_ = jobs_.filter(kind=kind)
    if status:
        jobs_ = jobs_.filter(status=status)
    return jobs_.order_by("-created_at", "-id")


@login_required
@require_safe
def job_list(request):
    """The jobs you started, newest first, to find an import or export again."""
    kind, status = request.GET.get("kind", ""), request.GET.get("status", "")
    page = Paginator(your_jobs(request.user, kind, status), 50).get_page(request.GET.get("page"))
    return render(request, "jobs/list.html", {
        "page": page, "kind": kind, "status": status, "kinds": KINDS,
        "statuses": Job.Status.choices,
    })


@login_required
@require_safe
def job_detail(request, pk):
    job = access_job(request.user, pk)
    template = "jobs/_progress.html" if request.htmx else "jobs/job.html"
    return render(request, template, {
        "job": job, "progress": job_progress(job),
        "waiting_for_queue": broker.waiting_for_queue(job),
        "events": job.events.order_by("id")[:500], "event_count": job.events.count(),
    })


@login_required
@require_POST
def job_cancel(request, pk):
    jobs.cancel(access_job(request.user, pk))
    return redirect("job-detail", pk=pk)

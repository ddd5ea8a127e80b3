from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _
from knox.models import AbstractAuthToken
from knox.settings import CONSTANTS


class Job(models.Model):
    """A unit of long work (ingest, export, agreement, demo load) run by Celery.

    The row is the single source of truth for status and progress: the browser
    polls it, the API returns it, the worker claims it by conditional update.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")
        CANCELLED = "cancelled", _("Cancelled")

    kind = models.CharField(max_length=64)
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveBigIntegerField(default=0)
    total = models.PositiveBigIntegerField(null=True, blank=True)
    message = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self):
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def percent(self):
        if not self.total:
            return 100 if self.status == self.Status.DONE else 0
        return min(100, round(100 * self.done / self.total))

    @property
    def finished(self):
        return self.status in (self.Status.DONE, self.Status.FAILED, self.Status.CANCELLED)


class JobEvent(models.Model):
    """A line of a job's log: a bad record with where it was and why, a warning, a note."""

    class Level(models.TextChoices):
        INFO = "info"
        WARNING = "warning"
        ERROR = "error"

    job = models.ForeignKey(Job, related_name="events", on_delete=models.CASCADE)
    level = models.CharField(max_length=8, choices=Level.choices, default=Level.INFO)
    # Where it happened: "papers.jsonl line 17", "page 3 entry 12", "owner/repo#42".
    location = models.CharField(max_length=300, blank=True)
    message = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["job", "id"]

    def __str__(self):
        return f"{self.level} {self.location}: {self.message[:80]}"


class ApiToken(AbstractAuthToken):
    """A named token a user made for their scripts (`Authorization: Token <key>`).

    Only a SHA-512 digest is stored (django-rest-knox); the key itself is shown once,
    when it is made. Revoking deletes the row. `token_key` is the key's first
    characters, shown so a person can tell their tokens apart.
    """

    id = models.BigAutoField(primary_key=True)
    digest = models.CharField(max_length=CONSTANTS.DIGEST_LENGTH, unique=True)
    name = models.CharField(max_length=100)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created"]

    def __str__(self):
        return f"{self.name} ({self.token_key}…) of {self.user}"

"""Who changed a study's setup, when, and what: the owner's audit trail."""

from django.conf import settings
from django.db import models

from coding.models.studies import Study


class AuditEntry(models.Model):
    """One change to a study's setup (study, codebook, members, invites, calibration,
    catalog). Written by `coding.access.audit.record` in the transaction of the change; never
    updated or deleted."""

    study = models.ForeignKey(
        Study, null=True, blank=True, related_name="audit_entries", on_delete=models.CASCADE
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)
    # A dotted verb: "study.create", "codebook.publish", "member.add", "invite.use" …
    action = models.CharField(max_length=64)
    # What it was done to, in words a person reads ("coder cora", "Paper codebook v2").
    # Stored in English; the page reads `target_parts` instead when it is there.
    target = models.CharField(max_length=300, blank=True)
    # The target as keys: its kind and the names/ids its words need ({"kind": "member",
    # "role": "coder", "name": "cora"}), put in the reader's language when shown
    # (coding.access.audit.target_in_words). Null on entries written before targets had a kind.
    target_parts = models.JSONField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["study", "-at", "-id"], name="audit_study_at")]

    def __str__(self):
        return f"{self.action} {self.target}"

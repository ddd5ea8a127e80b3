import re
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop


class Role(models.TextChoices):
    # Labels stay plain strings (the API and exports name roles in English); pages show
    # them translated through coding.access.roles.role_label.
    OWNER = "owner", gettext_noop("Owner")
    CODER = "coder", gettext_noop("Coder")
    ADJUDICATOR = "adjudicator", gettext_noop("Adjudicator")
    VIEWER = "viewer", gettext_noop("Viewer")


def random_seed():
    return secrets.randbelow(2**31)


def validate_field_names(value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError(_("Give a list of field names."))
    # "state" hides the key from every item; "thread.url" only from threads.
    bad = [v for v in value if not re.fullmatch(r"((paper|thread)\.)?[a-z][a-z0-9_]*", v)]
    if bad:
        raise ValidationError(_("Not a field name: %(names)s") % {"names": ", ".join(bad)})


class StudyQuerySet(models.QuerySet):
    def alive(self):
        return self.filter(deleted_at__isnull=True)

    def visible_to(self, user):
        """Studies the user is an active member of; nothing for anonymous users."""
        if not user.is_authenticated:
            return self.none()
        return self.alive().filter(
            memberships__user=user, memberships__deleted_at__isnull=True
        ).distinct()


class Study(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    # Keys of a snapshot's content removed from everything a coder receives
    # (design brief, rule 2), e.g. "state", "merged", "labels", "included_in".
    blinded_fields = models.JSONField(
        default=list, blank=True, validators=[validate_field_names]
    )
    blind_authors = models.BooleanField(
        default=False, help_text=_("Also hide authors and affiliations from coders.")
    )
    overlap = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(20)],
        help_text=_("How many coders code each item independently.")
    )
    adjudicators_see_blinded = models.BooleanField(
        default=False, help_text=_("Show blinded fields to adjudicators on the review page.")
    )
    allow_self_adjudication = models.BooleanField(
        default=False, help_text=_("Let an adjudicator decide items they coded themselves.")
    )
    coders_hold_other_roles = models.BooleanField(
        default=False, help_text=_(
            "Let a coder also be an adjudicator or viewer. They can then read the others' "
            "codings and decisions before coding an item; each revision they make after "
            "such a read is recorded as informed, never independent.")
    )
    discussion_step = models.BooleanField(
        default=False,
        help_text=_("Once all of an item's codings are in and they differ, its coders see the "
        "disagreement and may revise (recorded as reconciliation, never used for reliability)."),
    )
    show_feedback = models.BooleanField(
        default=False, help_text=_("Show coders where they differed from the final decision.")
    )
    feedback_shows_reasons = models.BooleanField(
        default=False, help_text=_("With feedback on, also show coders who decided and why "
        "(by default only the decided value and how it was reached)."),
    )
    coders_see_names = models.BooleanField(
        default=False, help_text=_("Show coders other members' names; by default they see "
        "pseudonyms (coder_1, adjudicator_1 …)."),
    )
    adjudicators_see_names = models.BooleanField(
        default=True, help_text=_("Show adjudicators the coders' names; off, they see the "
        "coders by pseudonym (coder_1 …) on the review pages and lists, so a decision "
        "cannot lean on who answered."),
    )
    lease_minutes = models.PositiveSmallIntegerField(
        default=30, validators=[MinValueValidator(1), MaxValueValidator(24 * 60)],
        help_text=_("An item reserved for a coder returns to the pool after this long idle."),
    )
    # Seeds each coder's item order, so the order can be reproduced.
    queue_seed = models.PositiveIntegerField(default=random_seed)
    # How the reliability sample was drawn (coding.labeling.queue.draw_reliability_sample):
    # share or count, stratify_by, seed, size, drawn_at. Empty: every item is in it.
    reliability_sample = models.JSONField(default=dict, blank=True)
    # Screening (coding.screening.setup): the decision question, its include values, the
    # model, the random share, the stopping rule's target and confidence, and the owner's
    # stop with the estimate at that moment. Empty: the queue serves in random order.
    screening = models.JSONField(default=dict, blank=True)
    calibration_threshold = models.FloatField(
        default=0.8, validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text=_("Share of calibration answers matching the reference needed before main coding."),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Archived by its owner: out of everyone's lists and closed to coding, kept whole and
    # restorable. `deleted_at` is the admin's removal; archiving never sets it.
    archived_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = StudyQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["name"]
        # Staff may always create studies (coding.access.roles.may_create_study); others need
        # this permission, granted with `manage.py grant_study_creation USER`.
        permissions = [("create_study", "Can create studies")]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = slugify(self.name)[:80]
        super().save(*args, **kwargs)

    def roles_of(self, user):
        """The set of roles the user holds in this study (empty for outsiders)."""
        if not user.is_authenticated:
            return frozenset()
        return frozenset(
            self.memberships.filter(user=user, deleted_at__isnull=True).values_list(
                "role", flat=True
            )
        )


class Membership(models.Model):
    """A person's role in a study; one row per role. Removal is soft."""

    study = models.ForeignKey(Study, related_name="memberships", on_delete=models.CASCADE)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, related_name="memberships", on_delete=models.CASCADE
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    # An owner may let a coder start main coding without passing calibration.
    calibration_waived = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "user", "role"], name="membership_once_per_role"
            )
        ]

    def __str__(self):
        return f"{self.user} as {self.role} in {self.study}"


class Invite(models.Model):
    """A one-time link that lets a person without an account join a study with a role.

    Only the SHA-256 of the token is kept: the link is shown once to the owner who made
    it (and mailed when a mail server is configured). It works once, until it expires.
    """

    study = models.ForeignKey(Study, related_name="invites", on_delete=models.CASCADE)
    role = models.CharField(max_length=16, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    # Who it is for, as the owner wrote it (a name or a mail address); never a login.
    note = models.CharField(max_length=200, blank=True)
    email = models.EmailField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"invite to {self.study} as {self.role}"

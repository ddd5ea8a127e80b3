"""Codebooks and their versions.

A published version is immutable (design brief, rule 5): its questions and
options cannot be saved or deleted. Editing a codebook in use means drafting a
new version (coding.codebooks.versions.draft_new_version) and publishing it.
"""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from coding.models.studies import Study


class Codebook(models.Model):
    class AppliesTo(models.TextChoices):
        PAPER = "paper"
        THREAD = "thread"

    study = models.ForeignKey(Study, related_name="codebooks", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    applies_to = models.CharField(max_length=16, choices=AppliesTo.choices)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="codebook_name_in_study")
        ]

    def __str__(self):
        return self.name

    def current_version(self):
        """The newest published version: the one new codings answer."""
        return self.versions.filter(status=CodebookVersion.Status.PUBLISHED).order_by(
            "-number"
        ).first()


class CodebookVersion(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft"
        PUBLISHED = "published"

    codebook = models.ForeignKey(Codebook, related_name="versions", on_delete=models.CASCADE)
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    note = models.TextField(blank=True, help_text="What changed from the previous version.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True)
    # The questions' and options' texts in other languages, by language code, question key
    # and option value (coding.codebooks.translations); kept with the version, so a
    # published version's translations never change either.
    translations = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["codebook", "number"]
        constraints = [
            models.UniqueConstraint(fields=["codebook", "number"], name="codebook_version_number")
        ]

    def __str__(self):
        return f"{self.codebook.name} v{self.number}"

    @property
    def is_published(self):
        return self.status == self.Status.PUBLISHED


class FrozenWhenPublished(models.Model):
    """Questions and options refuse change once their version is published."""

    class Meta:
        abstract = True

    def codebook_version(self):
        raise NotImplementedError

    def check_editable(self):
        if self.codebook_version().is_published:
            raise ValidationError(
                f"{self.codebook_version()} is published and cannot change; draft a new version"
            )

    def save(self, *args, **kwargs):
        self.check_editable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        self.check_editable()
        return super().delete(*args, **kwargs)


class Question(FrozenWhenPublished):
    class Kind(models.TextChoices):
        SINGLE = "single", "Single choice"
        MULTIPLE = "multiple", "Multiple choice"
        YES_NO = "yes_no", "Yes / no"
        NUMBER = "number", "Number"
        TEXT = "text", "Free text"

    class Level(models.TextChoices):
        NOMINAL = "nominal"
        ORDINAL = "ordinal"
        INTERVAL = "interval"
        RATIO = "ratio"

    version = models.ForeignKey(CodebookVersion, related_name="questions", on_delete=models.CASCADE)
    key = models.SlugField(max_length=64, help_text="Stable name across versions, e.g. 'label'.")
    text = models.TextField()
    definition = models.TextField(blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    required = models.BooleanField(default=True)
    position = models.PositiveIntegerField(default=0)
    level = models.CharField(
        max_length=16, choices=Level.choices, default=Level.NOMINAL,
        help_text="Level of measurement used for agreement.",
    )
    # Shown only when another question's answer is one of the listed values:
    # {"question": "label", "in": ["rl_method"]}.
    show_if = models.JSONField(null=True, blank=True)
    # Bounds of a number answer, inclusive; None is unbounded on that side.
    min_value = models.FloatField(null=True, blank=True)
    max_value = models.FloatField(null=True, blank=True)
    # What a number answer counts, shown beside the box ("billion parameters").
    unit = models.CharField(max_length=50, blank=True)
    # Whether differing answers go to the adjudicator; None: as its kind has it (choices
    # and numbers yes, free text no: two wordings of one quote are not a disagreement).
    adjudicated = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["version", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["version", "key"], name="question_key_in_version")
        ]

    @property
    def is_adjudicated(self):
        return adjudicated_by_default(self.kind) if self.adjudicated is None else self.adjudicated

    def __str__(self):
        return f"{self.key} ({self.version})"

    def codebook_version(self):
        return self.version


class Option(FrozenWhenPublished):
    question = models.ForeignKey(Question, related_name="options", on_delete=models.CASCADE)
    value = models.CharField(max_length=100)
    label = models.CharField(max_length=200)
    definition = models.TextField(blank=True)
    examples = models.TextField(blank=True)
    counter_examples = models.TextField(blank=True, help_text="What this option is not.")
    # The key that chooses it on the coding page; blank: its position (1-9).
    shortcut = models.CharField(max_length=1, blank=True)
    position = models.PositiveIntegerField(default=0)
    # Chosen alone or not at all in a multiple-choice answer ("none").
    exclusive = models.BooleanField(default=False)

    class Meta:
        ordering = ["question", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "value"], name="option_value_in_question")
        ]

    def __str__(self):
        return self.label

    def codebook_version(self):
        return self.question.version


def adjudicated_by_default(kind):
    """Whether a question of this kind goes to the adjudicator unless its codebook says."""
    return kind != Question.Kind.TEXT

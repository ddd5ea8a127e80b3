"""Raters that are not coders: models and outside sources, and people compared by name.

A model's labels or an outside study's codings come in from a file (coding.raters.imports)
as `RaterCoding` rows, one per item and question. They never touch the assignment queue,
a coder never sees them, and they never feed the human reliability figures (design brief,
rule 10): they meet people only in a named `Comparison` an owner sets up
(coding.raters.comparisons).
"""

from django.conf import settings
from django.db import models

from coding.models.codebooks import Codebook, CodebookVersion
from coding.models.items import Item
from coding.models.studies import Study


class Rater(models.Model):
    class Kind(models.TextChoices):
        PERSON = "person", "Person (a member of the study)"
        MODEL = "model", "Model"
        OUTSIDE = "outside", "Outside source"

    study = models.ForeignKey(Study, related_name="raters", on_delete=models.CASCADE)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The name files and comparisons use, e.g. "gpt-labeller" or "pilot-2024".
    name = models.SlugField(max_length=64)
    model_version = models.CharField(max_length=200, blank=True,
                                     help_text="For a model: its exact version or snapshot.")
    config_hash = models.CharField(max_length=128, blank=True,
                                   help_text="For a model: a hash of its prompt or configuration.")
    provenance = models.TextField(blank=True, help_text="Where these labels come from: how "
                                  "they were made, by whom, with what instructions.")
    # A person rater is a member: their independent codings in the workbench are theirs.
    member = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                               related_name="+", on_delete=models.PROTECT)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   related_name="+", on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="rater_name_in_study"),
            models.UniqueConstraint(fields=["study", "member"], name="rater_once_per_member",
                                    condition=models.Q(member__isnull=False)),
        ]

    def __str__(self):
        return f"{self.name} ({self.kind})"


class RaterCoding(models.Model):
    """One rater's answer to one question of one item, as imported.

    Re-importing the same answer changes nothing; a different answer replaces it and the
    one it replaced is kept in `previous` (rule 4: nothing is lost)."""

    rater = models.ForeignKey(Rater, related_name="codings", on_delete=models.CASCADE)
    item = models.ForeignKey(Item, related_name="rater_codings", on_delete=models.CASCADE)
    question_key = models.SlugField(max_length=64)
    codebook_version = models.ForeignKey(CodebookVersion, related_name="+",
                                         on_delete=models.PROTECT)
    value = models.JSONField()
    evidence = models.TextField(blank=True)
    # When the rater made the label, as the file says; empty if it does not.
    coded_at = models.DateTimeField(null=True, blank=True)
    imported_at = models.DateTimeField()
    # Answers this one replaced: [{"value", "evidence", "coded_at", "imported_at"}], oldest first.
    previous = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["rater", "item", "question_key"]
        constraints = [
            models.UniqueConstraint(fields=["rater", "item", "question_key"],
                                    name="rater_coding_once"),
        ]
        indexes = [
            # A comparison reads one rater's answers to one question.
            models.Index(fields=["rater", "question_key", "item"], name="rater_coding_question"),
        ]

    def __str__(self):
        return f"{self.rater.name}: {self.item_id} {self.question_key}"


class Comparison(models.Model):
    """A named comparison of two raters, or of a rater with the final decisions, on one
    question: the only place a model's or outside source's labels meet people's."""

    study = models.ForeignKey(Study, related_name="comparisons", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    codebook = models.ForeignKey(Codebook, related_name="+", on_delete=models.CASCADE)
    question_key = models.SlugField(max_length=64)
    # Rows of the confusion table.
    first = models.ForeignKey(Rater, related_name="+", on_delete=models.CASCADE)
    # Columns; empty: the final decisions.
    second = models.ForeignKey(Rater, null=True, blank=True, related_name="+",
                               on_delete=models.CASCADE)
    # Cohen's kappa's agreement weights (coding.raters.comparisons.weight_matrix): none, by option
    # position, or a custom matrix {row value: {column value: weight}}, checked on saving.
    weighting = models.CharField(max_length=16, default="unweighted", choices=[
        ("unweighted", "unweighted"), ("linear", "linear"), ("quadratic", "quadratic"),
        ("custom", "custom matrix")])
    weights = models.JSONField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   related_name="+", on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="comparison_name_in_study"),
        ]

    def __str__(self):
        return self.name

    @property
    def second_name(self):
        return self.second.name if self.second_id else "final decisions"


class AssistedRound(models.Model):
    """A round whose coders see one model rater's answers beside the questions, marked as
    suggestions with their provenance (issue 16). Opt-in by an owner, one model per round.

    Never the calibration round and never an item of the reliability sample: those stay
    blind (coding.labeling.suggestions refuses the one and shows nothing on the other). What a
    coder was shown is kept as an Exposure of kind `suggestion`, and every coding made
    after it is assisted (Coding.assisted): it never feeds reliability (rule 8)."""

    study = models.ForeignKey(Study, related_name="assisted_rounds", on_delete=models.CASCADE)
    round = models.CharField(max_length=16, choices=Item.Round.choices)
    rater = models.ForeignKey(Rater, related_name="+", on_delete=models.PROTECT)
    marked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                  related_name="+", on_delete=models.SET_NULL)
    marked_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["study", "round"]
        constraints = [
            models.UniqueConstraint(fields=["study", "round"], name="assisted_round_once"),
        ]

    def __str__(self):
        return f"{self.study.slug} {self.round} assisted by {self.rater.name}"

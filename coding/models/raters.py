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
    # For a model run from the workbench: the call whose answer this is (its provenance:
    # request, raw response, latency, tokens). Empty for an imported answer.
    call = models.ForeignKey("ModelCall", null=True, blank=True, related_name="+",
                             on_delete=models.SET_NULL)

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


class ModelSettings(models.Model):
    """How the workbench calls a model rater: an endpoint speaking the OpenAI-compatible chat
    completions protocol, the model and its parameters, and what the prompt may contain
    (coding.model_raters). The API key is referenced by the name of an environment variable
    or stored encrypted with a key derived from the install's secret key; it is never shown,
    returned or exported once saved."""

    class Output(models.TextChoices):
        JSON_SCHEMA = "json_schema", "Structured output with the codebook's JSON schema"
        JSON_OBJECT = "json_object", "JSON mode, schema in the prompt"
        TEXT = "text", "Plain text, schema in the prompt"

    rater = models.OneToOneField(Rater, related_name="machine", on_delete=models.CASCADE)
    base_url = models.URLField(max_length=300)
    model = models.CharField(max_length=200)
    temperature = models.FloatField(default=0.0)
    seed = models.BigIntegerField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(default=1024)
    output = models.CharField(max_length=16, choices=Output.choices, default=Output.JSON_SCHEMA)
    concurrency = models.PositiveSmallIntegerField(default=4)
    requests_per_minute = models.PositiveIntegerField(default=0)  # 0: no limit of ours
    timeout_seconds = models.FloatField(default=60.0)
    invalid_retries = models.PositiveSmallIntegerField(default=2)
    api_key_env = models.CharField(max_length=100, blank=True)
    api_key_encrypted = models.TextField(blank=True)
    # Blinded fields go to the model only when an owner turns this on (design brief, rule 12).
    send_blinded = models.BooleanField(default=False)
    instructions = models.TextField(blank=True)
    # For the estimated cost: the price of a million tokens in and out, in any currency.
    price_in = models.FloatField(null=True, blank=True)
    price_out = models.FloatField(null=True, blank=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   related_name="+", on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.rater.name}: {self.model}"


class ModelRun(models.Model):
    """One run of a model rater over a set of items, as a job: what it covered, with which
    settings, and what it cost. Paused runs resume from the cache (coding.model_raters.runs)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        PAUSED = "paused"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    rater = models.ForeignKey(Rater, related_name="runs", on_delete=models.CASCADE)
    job = models.ForeignKey("workbench.Job", null=True, blank=True, related_name="+",
                            on_delete=models.SET_NULL)
    # Which items: {"kind": "sample" | "round" | "screened" | "items", ...}.
    scope = models.JSONField(default=dict)
    replicates = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    # The settings the run used, without the key: model, host, parameters, template version.
    used = models.JSONField(default=dict)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    answered = models.PositiveIntegerField(default=0)
    cached = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    seconds = models.FloatField(default=0.0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   related_name="+", on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.rater.name} run {self.pk} ({self.status})"


class ModelCall(models.Model):
    """One item sent to a model (one replicate of it): the exact request's hash, the raw
    response, what was read from it, and what it cost. A call that answered is the rater's
    cache: a request of the same rater with the same key (endpoint, model, parameters,
    prompt, item content, replicate) is answered from here and costs nothing."""

    class Status(models.TextChoices):
        ANSWERED = "answered"
        FAILED = "failed"

    rater = models.ForeignKey(Rater, related_name="calls", on_delete=models.CASCADE)
    run = models.ForeignKey(ModelRun, null=True, blank=True, related_name="calls",
                            on_delete=models.SET_NULL)
    item = models.ForeignKey(Item, related_name="model_calls", on_delete=models.CASCADE)
    replicate = models.PositiveSmallIntegerField(default=0)
    key = models.CharField(max_length=64)
    prompt_hash = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices)
    # The answer read and checked ({question key: value}) and its quotes ({key: quote}).
    values = models.JSONField(null=True, blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    reason = models.TextField(blank=True)
    raw = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=1)
    latency_ms = models.FloatField(default=0.0)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rater", "item", "replicate", "-id"]
        constraints = [
            # The cache is each rater's own: its calls, its study's provenance and backups.
            models.UniqueConstraint(fields=["rater", "key"], name="model_call_answered_once",
                                    condition=models.Q(status="answered")),
        ]
        indexes = [
            models.Index(fields=["rater", "prompt_hash", "replicate"], name="model_call_prompt"),
            models.Index(fields=["run", "status"], name="model_call_run"),
        ]

    def __str__(self):
        return f"{self.rater.name}: {self.item_id} #{self.replicate} ({self.status})"

"""The study's frameworks and method catalog: reference data owners edit."""

from django.db import models

from .studies import Study


class Framework(models.Model):
    study = models.ForeignKey(Study, related_name="frameworks", on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    repository = models.CharField(max_length=200, help_text="owner/name on GitHub")
    main_branch = models.CharField(max_length=100, default="main")

    class Meta:
        ordering = ["study", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="framework_name_in_study")
        ]

    def __str__(self):
        return self.name


class Method(models.Model):
    study = models.ForeignKey(Study, related_name="methods", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)
    # As precise as the record allows: "2025-03-18" or "2025-08".
    first_public = models.CharField(max_length=10)
    source_arxiv_id = models.CharField(max_length=32, blank=True)
    failure_addressed = models.CharField(max_length=200, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study", "position", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="method_name_in_study")
        ]

    def __str__(self):
        return self.name


class OptionName(models.Model):
    """The configuration name that signals a method in one framework's code."""

    method = models.ForeignKey(Method, related_name="option_names", on_delete=models.CASCADE)
    framework = models.ForeignKey(Framework, related_name="option_names", on_delete=models.CASCADE)
    name = models.CharField(max_length=200)

    class Meta:
        ordering = ["method", "framework"]
        constraints = [
            models.UniqueConstraint(
                fields=["method", "framework", "name"], name="option_name_once"
            )
        ]

    def __str__(self):
        return f"{self.framework.name}: {self.name}"


class Landing(models.Model):
    """Where and when a method first appeared in a framework's main branch.

    Found by scanning the framework's git history for the first commit that adds one
    of the method's option names (coding.landings). A commit that touched many files
    at once (an import, a rename, a squash of many changes) only bounds the date from
    above: the option may have existed under another name before.
    """

    method = models.ForeignKey(Method, related_name="landings", on_delete=models.CASCADE)
    framework = models.ForeignKey(Framework, related_name="landings", on_delete=models.CASCADE)
    option_name = models.CharField(max_length=200)
    commit = models.CharField(max_length=64)
    committed_at = models.DateTimeField()
    author = models.CharField(max_length=200, blank=True)
    pull_request = models.PositiveIntegerField(null=True, blank=True)
    files_changed = models.PositiveIntegerField(default=0)
    upper_bound = models.BooleanField(default=False)
    found_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["method", "committed_at"]
        constraints = [
            models.UniqueConstraint(fields=["method", "framework"], name="one_first_landing")
        ]

    def __str__(self):
        return f"{self.method} in {self.framework} at {self.commit[:10]}"


class FrameworkScan(models.Model):
    """How far a framework's history has been scanned, so a rescan reads only new commits."""

    framework = models.OneToOneField(Framework, related_name="scan", on_delete=models.CASCADE)
    branch = models.CharField(max_length=100, default="main")
    last_commit = models.CharField(max_length=64, blank=True)
    # The option names already searched up to last_commit: a new name needs a full search.
    searched_names = models.JSONField(default=list)
    scanned_at = models.DateTimeField(auto_now=True)


class MethodLink(models.Model):
    """A document tied to a method: the paper that proposes it, a thread that proposes or cites it."""

    class Kind(models.TextChoices):
        SOURCE = "source"  # the paper the method comes from
        PROPOSES = "proposes"  # a thread proposing the method for a framework
        CITES = "cites"  # a thread or paper citing the method

    class By(models.TextChoices):
        AUTOMATIC = "automatic"  # the document names the method's arXiv identifier or option
        OWNER = "owner"

    method = models.ForeignKey(Method, related_name="links", on_delete=models.CASCADE)
    document = models.ForeignKey("ingest.Document", related_name="method_links",
                                 on_delete=models.CASCADE)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    by = models.CharField(max_length=16, choices=By.choices, default=By.AUTOMATIC)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["method", "document", "kind"], name="method_link_once")
        ]

"""The study's frameworks and method catalog: reference data owners edit."""

from django.db import models

from coding.models.studies import Study

# What a first appearance's commit says about its date (read by the scanner, coding.catalog):
# among this many changed files it is a bulk change (an import, a sync) ...
BULK_FILES = 40
# ... and authored this many days before it was committed, a batch sync of older work.
BATCH_SYNC_DAYS = 7


class Framework(models.Model):
    study = models.ForeignKey(Study, related_name="frameworks", on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    repository = models.CharField(max_length=200, help_text="owner/name on GitHub")
    main_branch = models.CharField(max_length=100, default="main")
    # Paths a history scan does not read (fnmatch patterns); None: the defaults in
    # coding.catalog.git.DEFAULT_EXCLUDE (prose, lock files, vendored code, data).
    scan_exclude = models.JSONField(null=True, blank=True, default=None)

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
    of the method's option names (coding.catalog.landings). A commit that touched many files
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
    # The committer's own calendar date (committed_at in the committer's UTC offset):
    # days to landing count from it.
    landed_on = models.DateField(null=True, blank=True)
    # The option name's first hit this landing was taken from (its line, dates, flags).
    hit = models.ForeignKey("OptionHit", null=True, blank=True, related_name="+",
                            on_delete=models.SET_NULL)
    found_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["method", "committed_at"]
        constraints = [
            models.UniqueConstraint(fields=["method", "framework"], name="one_first_landing")
        ]

    def __str__(self):
        return f"{self.method} in {self.framework} at {self.commit[:10]}"


class OptionHit(models.Model):
    """One option name's own first appearance in code or configuration in its framework.

    Every name of a method is scanned, so a renamed option shows as two names on two
    dates; the method's landing is the earliest of them. Dates keep their UTC offsets:
    `committed_on` is the committer's local calendar date.
    """

    class Kind(models.TextChoices):
        CODE = "code"
        CONFIG = "config"

    option = models.OneToOneField(OptionName, related_name="hit", on_delete=models.CASCADE)
    commit = models.CharField(max_length=64)
    subject = models.CharField(max_length=500, blank=True)
    author = models.CharField(max_length=200, blank=True)
    authored_at = models.DateTimeField()
    author_offset = models.SmallIntegerField(help_text="minutes east of UTC")
    committed_at = models.DateTimeField()
    committer_offset = models.SmallIntegerField(help_text="minutes east of UTC")
    committed_on = models.DateField(help_text="the committer's local calendar date")
    pull_request = models.PositiveIntegerField(null=True, blank=True)
    path = models.CharField(max_length=500)
    line_number = models.PositiveIntegerField()
    line = models.CharField(max_length=500, blank=True)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    variant = models.CharField(max_length=200, help_text="the name as written: --use-tis")
    files_changed = models.PositiveIntegerField(default=0)
    renamed = models.BooleanField(default=False)
    rename_reason = models.CharField(max_length=300, blank=True)
    # An earlier mention in a comment or docstring ({commit, committed_on, path, line,
    # kind}): shown as a warning, never the landing.
    mention = models.JSONField(null=True, blank=True)
    found_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["committed_at"]

    def __str__(self):
        return f"{self.option} at {self.commit[:10]}"

    @property
    def bulk(self):
        return self.files_changed >= BULK_FILES

    @property
    def batch_sync(self):
        """Authored well before it was committed: a batch of older work synced at once."""
        return (self.committed_at - self.authored_at).days >= BATCH_SYNC_DAYS

    @property
    def upper_bound(self):
        return self.renamed or self.bulk

    @property
    def committer_zone(self):
        return zone(self.committer_offset)

    @property
    def author_zone(self):
        return zone(self.author_offset)


def zone(minutes):
    """UTC−07:00 for -420."""
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{'+' if minutes >= 0 else '−'}{hours:02d}:{rest:02d}"


class FrameworkScan(models.Model):
    """How far a framework's history has been scanned, so a rescan reads only new commits."""

    framework = models.OneToOneField(Framework, related_name="scan", on_delete=models.CASCADE)
    branch = models.CharField(max_length=100, default="main")
    last_commit = models.CharField(max_length=64, blank=True)
    # The option names already searched up to last_commit: a new name needs a full search.
    searched_names = models.JSONField(default=list)
    scanned_at = models.DateTimeField(auto_now=True)
    # What the last scan could not read: a partial clone's absent blobs, by path.
    partial_clone = models.BooleanField(default=False)
    # Absent blobs the last scan fetched from the partial clone's remote, and why the rest
    # could not be fetched ("" when nothing was left absent that way).
    fetched_blobs = models.PositiveIntegerField(default=0)
    fetch_error = models.CharField(max_length=300, blank=True)
    commits_read = models.PositiveIntegerField(default=0)
    missing_blobs = models.PositiveIntegerField(default=0)
    missing_paths = models.JSONField(default=list, blank=True)  # [[path, blobs], ...] most first
    excluded_paths = models.PositiveIntegerField(default=0)
    # Names seen only in comments or docstrings so far: {name: {commit, committed_on, path,
    # line_number, line, kind}}; a warning, never a landing.
    mentions = models.JSONField(default=dict, blank=True)

    @property
    def complete(self):
        """Whether every file version the scans needed was read: if not, a name without a
        hit is not known to be absent, and no page says "no landing" for it."""
        return self.missing_blobs == 0


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


class InclusionList(models.Model):
    """Inclusion a team already knows, imported from a CSV file (coding.inclusion.lists):
    one inclusion source beside the method tracker. Importing a list under the same name
    again replaces its rows."""

    study = models.ForeignKey(Study, related_name="inclusion_lists", on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    # Provenance: the file as received and who brought it.
    file_name = models.CharField(max_length=255, blank=True)
    sha256 = models.CharField(max_length=64)
    imported_by = models.ForeignKey("auth.User", null=True, on_delete=models.SET_NULL,
                                    related_name="+")
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["study", "name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="inclusion_list_name_in_study")
        ]

    def __str__(self):
        return self.name


class ListedInclusion(models.Model):
    """One paper included in one framework, as an inclusion list says, with the file line
    it came from."""

    inclusion_list = models.ForeignKey(InclusionList, related_name="rows",
                                       on_delete=models.CASCADE)
    document = models.ForeignKey("ingest.Document", related_name="+", on_delete=models.CASCADE)
    framework = models.CharField(max_length=100)
    included_on = models.DateField(null=True, blank=True)
    link = models.CharField(max_length=500, blank=True, help_text="a commit, pull request or "
                                                                  "release")
    line = models.PositiveIntegerField(help_text="the line of the file it came from")

    class Meta:
        ordering = ["inclusion_list", "line"]
        constraints = [
            models.UniqueConstraint(fields=["inclusion_list", "document", "framework"],
                                    name="listed_inclusion_once")
        ]

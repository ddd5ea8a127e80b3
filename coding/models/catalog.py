"""The study's frameworks and method catalog: reference data owners edit."""

from django.db import models

from .studies import Study


class Framework(models.Model):
    study = models.ForeignKey(Study, related_name="frameworks", on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    repository = models.CharField(max_length=200, help_text="owner/name on GitHub")

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

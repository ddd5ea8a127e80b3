"""Issue 18: landings that hold on real histories.

Each option name's own first hit (OptionHit), the committer's local date of a landing,
what a scan could not read, and per-framework path exclusions.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coding", "0016_reliability"),
    ]

    operations = [
        migrations.AddField(
            model_name="framework",
            name="scan_exclude",
            field=models.JSONField(blank=True, default=None, null=True),
        ),
        migrations.AddField(
            model_name="frameworkscan",
            name="partial_clone",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="frameworkscan",
            name="commits_read",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="frameworkscan",
            name="missing_blobs",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="frameworkscan",
            name="missing_paths",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="frameworkscan",
            name="excluded_paths",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="frameworkscan",
            name="mentions",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.CreateModel(
            name="OptionHit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("commit", models.CharField(max_length=64)),
                ("subject", models.CharField(blank=True, max_length=500)),
                ("author", models.CharField(blank=True, max_length=200)),
                ("authored_at", models.DateTimeField()),
                ("author_offset", models.SmallIntegerField(help_text="minutes east of UTC")),
                ("committed_at", models.DateTimeField()),
                ("committer_offset", models.SmallIntegerField(help_text="minutes east of UTC")),
                ("committed_on", models.DateField(help_text="the committer's local calendar date")),
                ("pull_request", models.PositiveIntegerField(blank=True, null=True)),
                ("path", models.CharField(max_length=500)),
                ("line_number", models.PositiveIntegerField()),
                ("line", models.CharField(blank=True, max_length=500)),
                ("kind", models.CharField(choices=[("code", "Code"), ("config", "Config")], max_length=8)),
                ("variant", models.CharField(help_text="the name as written: --use-tis", max_length=200)),
                ("files_changed", models.PositiveIntegerField(default=0)),
                ("renamed", models.BooleanField(default=False)),
                ("rename_reason", models.CharField(blank=True, max_length=300)),
                ("mention", models.JSONField(blank=True, null=True)),
                ("found_at", models.DateTimeField(auto_now=True)),
                ("option", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="hit", to="coding.optionname")),
            ],
            options={"ordering": ["committed_at"]},
        ),
        migrations.AddField(
            model_name="landing",
            name="landed_on",
            field=models.DateField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="landing",
            name="hit",
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to="coding.optionhit"),
        ),
    ]

"""Issue 19: what a post says beyond its text (review state, edit time, file and line,
reply chain, deleted author), kept per post."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0002_cached_response"),
    ]

    operations = [
        migrations.AddField(
            model_name="post",
            name="details",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]

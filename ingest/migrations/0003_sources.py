"""Issue 19's migration slot: its schema changes go here (empty until then)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0002_cached_response"),
    ]

    operations = []

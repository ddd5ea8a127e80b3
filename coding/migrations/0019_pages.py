"""Issue 20's migration slot: a person's language, and codebook translations kept with
each version."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coding", "0018_storage"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="LanguagePreference",
            fields=[
                ("user", models.OneToOneField(
                    on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                    related_name="language_preference", serialize=False,
                    to=settings.AUTH_USER_MODEL)),
                ("language", models.CharField(max_length=16)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
        ),
        migrations.AddField(
            model_name="codebookversion",
            name="translations",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]

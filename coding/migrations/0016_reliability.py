"""Issue 17's migration slot: every draw of the reliability sample kept (SampleDraw),
the draw each study holds now copied in as its first."""

from datetime import datetime

import django.db.models.deletion
from django.db import migrations, models


def draw_fields(drawn):
    return {"drawn_at": datetime.fromisoformat(drawn["drawn_at"]),
            "drawn_by": drawn.get("drawn_by") or "", "size": drawn["size"],
            "pool": drawn["pool"], "record": drawn}


def keep_current_draws(apps, schema_editor):
    Study = apps.get_model("coding", "Study")
    SampleDraw = apps.get_model("coding", "SampleDraw")
    SampleDraw.objects.bulk_create(
        SampleDraw(study_id=pk, **draw_fields(drawn))
        for pk, drawn in Study.objects.exclude(reliability_sample={})
        .values_list("pk", "reliability_sample") if drawn and "drawn_at" in drawn)


class Migration(migrations.Migration):
    dependencies = [
        ("coding", "0015_raters"),
    ]

    operations = [
        migrations.CreateModel(
            name="SampleDraw",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                           verbose_name="ID")),
                ("drawn_at", models.DateTimeField()),
                ("drawn_by", models.CharField(blank=True, max_length=150)),
                ("size", models.PositiveIntegerField()),
                ("pool", models.PositiveIntegerField()),
                ("record", models.JSONField()),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                            related_name="sample_draws", to="coding.study")),
            ],
            options={
                "ordering": ["study", "drawn_at", "id"],
                "indexes": [models.Index(fields=["study", "-drawn_at"],
                                         name="sample_draw_latest")],
            },
        ),
        migrations.RunPython(keep_current_draws, migrations.RunPython.noop),
    ]

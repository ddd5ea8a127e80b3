"""Issue 13: the queue page's time statistics and the codings and assignments lists stay
fast at 100,000 items.

- Assignment.first_seconds_spent: the seconds of its first submitted revision, copied
  from that coding (backfilled here; written by record_coding from now on).
- Coding.study: the assignment's study, copied (backfilled here; set on save), so a
  study's codings are one index range for keyset paging.
- Indexes for both lists' order and for the queue page's grouped count.

Not atomic: on PostgreSQL the backfill's updates leave deferred foreign-key trigger
events that would refuse the ALTER TABLE making Coding.study NOT NULL in the same
transaction; each step commits on its own instead (the backfill in one transaction).
"""

import django.db.models.deletion
from django.db import migrations, models


def backfill(apps, schema_editor):
    Assignment = apps.get_model("coding", "Assignment")
    Coding = apps.get_model("coding", "Coding")
    first = Coding.objects.filter(assignment=models.OuterRef("pk"), revision=1)
    Assignment.objects.filter(models.Exists(first.exclude(seconds_spent=None))).update(
        first_seconds_spent=models.Subquery(first.values("seconds_spent")[:1]))
    Coding.objects.filter(study__isnull=True).update(study_id=models.Subquery(
        Assignment.objects.filter(pk=models.OuterRef("assignment_id")).values("study_id")[:1]))


class Migration(migrations.Migration):

    atomic = False

    dependencies = [
        ("coding", "0013_study_setup"),
    ]

    operations = [
        migrations.AddField(
            model_name="assignment",
            name="first_seconds_spent",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="coding",
            name="study",
            field=models.ForeignKey(db_index=False, null=True,
                                    on_delete=django.db.models.deletion.PROTECT,
                                    related_name="+", to="coding.study"),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, atomic=True),
        migrations.AlterField(
            model_name="coding",
            name="study",
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT,
                                    related_name="+", to="coding.study"),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["study", "coder", "status", "first_seconds_spent"],
                               name="assignment_work"),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["study", "id"], name="assignment_study_order"),
        ),
        migrations.AddIndex(
            model_name="coding",
            index=models.Index(fields=["study", "id"], name="coding_study_order"),
        ),
    ]

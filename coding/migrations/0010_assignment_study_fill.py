"""Fill Assignment.study; release extra active items (kept apart from the schema changes so
PostgreSQL has no pending trigger events when the column is altered)."""

from django.db import migrations, models


def fill_study_and_release_extra(apps, schema_editor):
    """Copy each assignment's study; where a coder holds several active items of one study
    (possible before this migration), keep the oldest and return the rest to the pool."""
    Assignment = apps.get_model("coding", "Assignment")
    Item = apps.get_model("coding", "Item")
    Assignment.objects.update(study_id=models.Subquery(
        Item.objects.filter(pk=models.OuterRef("item_id")).values("study_id")[:1]))
    seen = set()
    active = (Assignment.objects.filter(status="active")
              .order_by("study_id", "coder_id", "created_at", "pk")
              .values_list("pk", "study_id", "coder_id", "item_id"))
    for pk, study_id, coder_id, item_id in active:
        if (study_id, coder_id) in seen:
            Assignment.objects.filter(pk=pk).update(status="released", leased_until=None)
            Item.objects.filter(pk=item_id, taken__gt=0).update(taken=models.F("taken") - 1)
        seen.add((study_id, coder_id))


class Migration(migrations.Migration):

    dependencies = [("coding", "0009_integrity")]

    operations = [
        migrations.RunPython(fill_study_and_release_extra, migrations.RunPython.noop),
    ]

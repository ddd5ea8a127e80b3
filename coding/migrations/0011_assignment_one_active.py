"""Assignment.study is required; one active item per coder per study (rule 9)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [("coding", "0010_assignment_study_fill")]

    operations = [
        migrations.AlterField(
            model_name='assignment',
            name='study',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='coding.study'),
        ),
        migrations.AddConstraint(
            model_name='assignment',
            constraint=models.UniqueConstraint(condition=models.Q(('status', 'active')), fields=('study', 'coder'), name='assignment_one_active_per_coder'),
        ),
    ]

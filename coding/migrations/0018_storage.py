"""Issue 16's second slot: model-suggested answers in assisted rounds. A round an owner
marks as assisted (AssistedRound), the suggestion a coder was shown (an Exposure of kind
suggestion) and the codings made after it (Coding.assisted), which never feed reliability.

One slot per open issue keeps parallel work on one chain, with no conflicting leaves.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coding", "0017_landings"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='coding',
            name='assisted',
            field=models.BooleanField(default=False),
        ),
        migrations.AlterField(
            model_name='exposure',
            name='kind',
            field=models.CharField(choices=[('feedback', 'Feedback'), ('discussion', 'Discussion'), ('suggestion', 'Suggestion')], max_length=16),
        ),
        migrations.CreateModel(
            name='AssistedRound',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('round', models.CharField(choices=[('calibration', 'Calibration'), ('main', 'Main')], max_length=16)),
                ('marked_at', models.DateTimeField(auto_now=True)),
                ('marked_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('rater', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='coding.rater')),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='assisted_rounds', to='coding.study')),
            ],
            options={
                'ordering': ['study', 'round'],
                'constraints': [models.UniqueConstraint(fields=('study', 'round'), name='assisted_round_once')],
            },
        ),
    ]

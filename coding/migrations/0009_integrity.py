"""Integrity under adversarial coders (issue 15): one active item per coder per study held
by the database, informed revisions, exposures, number bounds and exclusive options,
feedback and name settings."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('coding', '0008_import_runs'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Exposure',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('feedback', 'Feedback'), ('discussion', 'Discussion')], max_length=16)),
                ('question_key', models.SlugField(max_length=64)),
                ('shown', models.JSONField(default=dict)),
                ('first_shown_at', models.DateTimeField(auto_now_add=True)),
            ],
            options={
                'ordering': ['assignment', 'kind', 'question_key'],
            },
        ),
        migrations.AddField(
            model_name='assignment',
            name='study',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='coding.study'),
        ),
        migrations.AddField(
            model_name='option',
            name='exclusive',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='question',
            name='max_value',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='question',
            name='min_value',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='study',
            name='coders_see_names',
            field=models.BooleanField(default=False, help_text="Show coders other members' names; by default they see pseudonyms (coder_1, adjudicator_1 …)."),
        ),
        migrations.AddField(
            model_name='study',
            name='feedback_shows_reasons',
            field=models.BooleanField(default=False, help_text='With feedback on, also show coders who decided and why (by default only the decided value and how it was reached).'),
        ),
        migrations.AlterField(
            model_name='coding',
            name='phase',
            field=models.CharField(choices=[('independent', 'Independent'), ('reconciliation', 'Reconciliation'), ('informed', 'Informed')], default='independent', max_length=16),
        ),
        migrations.AddField(
            model_name='exposure',
            name='assignment',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='exposures', to='coding.assignment'),
        ),
        migrations.AddConstraint(
            model_name='exposure',
            constraint=models.UniqueConstraint(fields=('assignment', 'kind', 'question_key'), name='exposure_once'),
        ),
    ]

"""Issue 16: raters that are not coders (models, outside sources, people by name), their
imported codings, and named comparisons.

One slot per open issue keeps parallel work on one chain, with no conflicting leaves.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("coding", "0014_scale_lists"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Rater',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('person', 'Person (a member of the study)'), ('model', 'Model'), ('outside', 'Outside source')], max_length=16)),
                ('name', models.SlugField(max_length=64)),
                ('model_version', models.CharField(blank=True, help_text='For a model: its exact version or snapshot.', max_length=200)),
                ('config_hash', models.CharField(blank=True, help_text='For a model: a hash of its prompt or configuration.', max_length=128)),
                ('provenance', models.TextField(blank=True, help_text='Where these labels come from: how they were made, by whom, with what instructions.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('member', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='raters', to='coding.study')),
            ],
            options={
                'ordering': ['study', 'name'],
            },
        ),
        migrations.CreateModel(
            name='Comparison',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('question_key', models.SlugField(max_length=64)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('codebook', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='coding.codebook')),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='comparisons', to='coding.study')),
                ('first', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='coding.rater')),
                ('second', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='coding.rater')),
            ],
            options={
                'ordering': ['study', 'name'],
            },
        ),
        migrations.CreateModel(
            name='RaterCoding',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('question_key', models.SlugField(max_length=64)),
                ('value', models.JSONField()),
                ('evidence', models.TextField(blank=True)),
                ('coded_at', models.DateTimeField(blank=True, null=True)),
                ('imported_at', models.DateTimeField()),
                ('previous', models.JSONField(blank=True, default=list)),
                ('codebook_version', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='coding.codebookversion')),
                ('item', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='rater_codings', to='coding.item')),
                ('rater', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='codings', to='coding.rater')),
            ],
            options={
                'ordering': ['rater', 'item', 'question_key'],
            },
        ),
        migrations.AddConstraint(
            model_name='rater',
            constraint=models.UniqueConstraint(fields=('study', 'name'), name='rater_name_in_study'),
        ),
        migrations.AddConstraint(
            model_name='rater',
            constraint=models.UniqueConstraint(condition=models.Q(('member__isnull', False)), fields=('study', 'member'), name='rater_once_per_member'),
        ),
        migrations.AddConstraint(
            model_name='comparison',
            constraint=models.UniqueConstraint(fields=('study', 'name'), name='comparison_name_in_study'),
        ),
        migrations.AddIndex(
            model_name='ratercoding',
            index=models.Index(fields=['rater', 'question_key', 'item'], name='rater_coding_question'),
        ),
        migrations.AddConstraint(
            model_name='ratercoding',
            constraint=models.UniqueConstraint(fields=('rater', 'item', 'question_key'), name='rater_coding_once'),
        ),
    ]

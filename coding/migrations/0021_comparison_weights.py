from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("coding", "0020_scale"),
    ]

    operations = [
        migrations.AddField(
            model_name="comparison",
            name="weighting",
            field=models.CharField(choices=[("unweighted", "unweighted"), ("linear", "linear"),
                                            ("quadratic", "quadratic"),
                                            ("custom", "custom matrix")],
                                   default="unweighted", max_length=16),
        ),
        migrations.AddField(
            model_name="comparison",
            name="weights",
            field=models.JSONField(blank=True, null=True),
        ),
    ]

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("coding", "0021_comparison_weights"),
    ]

    operations = [
        migrations.AddField(
            model_name="languagepreference",
            name="show_original",
            field=models.BooleanField(default=False),
        ),
    ]

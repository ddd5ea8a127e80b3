"""Issue 18's migration slot: its schema changes go here (empty until then).

One slot per open issue keeps parallel work on one chain, with no conflicting leaves.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("coding", "0016_reliability"),
    ]

    operations = []

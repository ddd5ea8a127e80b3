"""What the operator's /metrics adds for coding (workbench.metrics.add_figure, wired in
coding.apps): codings submitted in the last minute, counted over the newest
CODINGS_LOOKBACK codings so the count stays cheap at any table size. Names no study,
person or value."""

from datetime import timedelta

from prometheus_client.core import GaugeMetricFamily

from coding.models import Coding

CODINGS_LOOKBACK = 10_000


def codings_per_minute(now):
    newest = Coding.objects.order_by("-pk").values_list("submitted_at", flat=True)
    recent = sum(1 for at in newest[:CODINGS_LOOKBACK] if at >= now - timedelta(minutes=1))
    return GaugeMetricFamily("workbench_codings_per_minute",
                             "Codings submitted in the last minute", value=recent)

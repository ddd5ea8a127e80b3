"""Drawing the reliability sample: the queue chooses the items, the agreement report's
sample-size plan as it stands is kept with the draw (coding.agreement.report.recorded_plan).
The queue page, the API and `manage.py draw_sample` draw through here."""

from coding.agreement.report import recorded_plan
from coding.labeling import queue


def draw_reliability_sample(study, **options):
    """queue.draw_reliability_sample with the plan recorded; the same options."""
    return queue.draw_reliability_sample(study, plan=recorded_plan, **options)

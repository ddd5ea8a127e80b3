"""Template tags about background work: `{% background_work_delayed as delayed %}`."""

from django import template

from workbench import broker

register = template.Library()


@register.simple_tag
def background_work_delayed():
    """Whether queued work waits because the task queue could not be reached (one query)."""
    return broker.work_is_delayed()

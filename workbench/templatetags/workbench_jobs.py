"""Template tags about background work: `{% background_work_delayed as delayed %}`."""

import re

from django import template
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from workbench import broker, jobs

register = template.Library()


@register.simple_tag
def background_work_delayed():
    """Whether queued work waits because the task queue could not be reached (one query)."""
    return broker.work_is_delayed()


# Counters that jobs report, as people read them; any other name as it is.
COUNTER_LABELS = {
    "seeds": gettext_lazy("Replays (seeds)"),
    "records_to_95": gettext_lazy("Records needed for recall 0.95 (mean)"),
    "records_to_100": gettext_lazy("Records needed for recall 1 (mean)"),
    "wss_95": gettext_lazy("Work saved over sampling at recall 0.95 (mean)"),
    "rrf_10": gettext_lazy("Recall after a tenth screened (mean)"),
    "stop": gettext_lazy("Where the stopping rule stops (mean records)"),
    "stop_recall": gettext_lazy("True recall there (mean)"),
    "read": gettext_lazy("Records read"), "added": gettext_lazy("Added"),
    "updated": gettext_lazy("Updated"), "unchanged": gettext_lazy("Unchanged"),
    "deleted": gettext_lazy("Marked deleted"),  # an OAI-PMH deletion: the document is kept
    "deletions": gettext_lazy("Deletions (withdrawn at the source)"),
    "failed": gettext_lazy("Failed (bad records)"), "duplicates": gettext_lazy("Duplicates within a file"),
    "added_to_pool": gettext_lazy("Added to the pool"), "already_in_pool": gettext_lazy("Already in the pool"),
    "no_codebook": gettext_lazy("No codebook for their kind"), "refreshed": gettext_lazy("Refreshed"),
    "rows": gettext_lazy("Rows"), "new": gettext_lazy("New"), "changed": gettext_lazy("Changed"),
    "errors": gettext_lazy("Errors"),
    "items": gettext_lazy("Items"), "answered": gettext_lazy("Answered"),
    "cached": gettext_lazy("Answered from the cache"),
    "not_answered": gettext_lazy("Not answered (see the log)"),
    "tokens_in": gettext_lazy("Tokens sent"), "tokens_out": gettext_lazy("Tokens received"),
    # A REFI-QDA project's import (coding.raters.qdpx.flat_counts).
    "sources": gettext_lazy("Text sources read"),
    "codings_new": gettext_lazy("Codings imported"),
    "codings_changed": gettext_lazy("Codings changed"),
    "codings_unchanged": gettext_lazy("Codings already imported"),
    "codings_read": gettext_lazy("Codings read (a dry run writes none)"),
    "codings_waiting": gettext_lazy("Codings waiting for the codebook to be published"),
    "codings_without_code": gettext_lazy("Codings of codes not in the codebook"),
}
# A screening rule's count is kept as "excluded: <the rule in English>" (coding.labeling.pool.
# flat_counts): the rule's words are its msgid, so it reads in the reader's language too.
EXCLUDED = "excluded: "


@register.filter
def counter_label(name):
    name = str(name)
    if name.startswith(EXCLUDED):
        return _("Excluded: %(rule)s") % {"rule": _(name.removeprefix(EXCLUDED))}
    return COUNTER_LABELS.get(name) or name  # a name we do not know, as it is


@register.filter
def job_label(kind):
    """A job's kind as people read it: "Import into a study", not import_to_study."""
    label = jobs.KIND_LABELS.get(kind)
    return _(label) if label else str(kind)  # a kind we do not know, as it is


@register.filter
def file_names(text):
    """Server paths in a job's log shown by the file's own name (the folders are the
    server's business): "/srv/var/uploads/x/1f3e/papers.jsonl line 3" as "papers.jsonl line 3"."""
    return re.sub(r"(?<![\w.])/(?:[^/\s]+/)+", "", str(text))


@register.filter
def basename(path):
    """An uploaded file by its own name, whatever folder the server keeps it in."""
    return str(path).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


FAILED = re.compile(r"(?P<what>.+) failed on the server; the details are in the server log "
                    r"under job (?P<job>\d+)\.")


@register.filter
def job_words(text, kind=""):
    """A job's message or error as stored (English, the API's words) in the reader's
    language where it is one of the workbench's own: "Cancelled.", "… failed on the
    server …". A job's own progress and refusals are already in its starter's language."""
    text = str(text or "")
    if text in jobs.OWN_WORDS:
        return _(text)
    failed = FAILED.fullmatch(text)
    if failed:
        return _(jobs.FAILED_ON_SERVER) % {"what": job_label(kind) if kind in jobs.KIND_LABELS
                                           else failed["what"], "job": failed["job"]}
    return text

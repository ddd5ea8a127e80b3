"""Publishing a codebook's draft: the version is written (coding.codebooks.editing) and,
in the same transaction, the open work of its coders is handled as the owner chose
(coding.labeling.open_work). The editor page, the API and `manage.py publish_codebook`
publish through here."""

from coding.codebooks import editing
from coding.labeling.open_work import handle_open_assignments


def publish_draft(codebook, actor, note, open_assignments, number=None):
    """editing.publish_draft with the queue's handling of open assignments; the same
    arguments, result and refusals (InvalidSpec, NothingToPublish)."""
    return editing.publish_draft(codebook, actor, note, open_assignments, number,
                                 handle_open=handle_open_assignments)

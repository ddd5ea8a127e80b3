"""What one submission or draft may hold: declared once, enforced on submit and on draft.

Each limit is far above what a person writes by hand. Past it a request is refused
with the field named (a 400); nothing is cut short silently.
"""

import json
import re

from django.utils.translation import gettext

NOTES_MAX_CHARS = 20_000
TEXT_ANSWER_MAX_CHARS = 5_000
EVIDENCE_MAX_QUOTES = 100
QUOTE_MAX_CHARS = 2_000
# A whole draft as JSON: the answers, notes and quotes above fit many times over.
DRAFT_MAX_BYTES = 512 * 1024

# One line of an imported rater file (a CSV row, a JSON Lines record): the answers,
# evidence and notes above fit in it many times over.
IMPORT_LINE_MAX_BYTES = 256 * 1024

# Unicode bidirectional controls: in a key they make one name look like another
# (a "label" that is not the question label). Refused wherever a key is named.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def too_long(text, limit, what):
    """An error message when text is over its limit, else None."""
    if isinstance(text, str) and len(text) > limit:
        return gettext("%(what)s is %(length)s characters; at most %(limit)s are kept") % {
            "what": what, "length": f"{len(text):,}", "limit": f"{limit:,}"}
    return None


def check_notes(notes):
    return too_long(notes, NOTES_MAX_CHARS, gettext("the note"))


def check_quote_count(evidence):
    if len(evidence) > EVIDENCE_MAX_QUOTES:
        return gettext("%(count)s quotes; at most %(limit)s per item") % {
            "count": f"{len(evidence):,}", "limit": EVIDENCE_MAX_QUOTES}
    return None


def check_key(key):
    """Why a key someone sent cannot name a question, or None."""
    if BIDI_CONTROLS.search(key):
        return gettext("contains a Unicode direction control")
    return None


def check_draft(draft):
    """Errors of a draft, keyed by part: its size, the note, the number of quotes, keys."""
    errors = {}
    size = len(json.dumps(draft, ensure_ascii=False, default=str).encode())
    if size > DRAFT_MAX_BYTES:
        errors["draft"] = gettext("the draft is %(size)s bytes; at most %(limit)s are kept") % {
            "size": f"{size:,}", "limit": f"{DRAFT_MAX_BYTES:,}"}
    if not isinstance(draft, dict):
        return errors
    if problem := check_notes(draft.get("notes")):
        errors["notes"] = problem
    evidence = draft.get("evidence")
    if isinstance(evidence, list) and (problem := check_quote_count(evidence)):
        errors["evidence"] = problem
    values = draft.get("values")
    if isinstance(values, dict):
        bad = [key for key in values if isinstance(key, str) and check_key(key)]
        if bad:
            errors["values"] = gettext("an answer's key contains a Unicode direction control")
    return errors

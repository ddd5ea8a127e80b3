"""The study setup's audit trail: one call writes who did what to what.

Call `record` inside the transaction that makes the change, so a change and its entry
land together or not at all. Pages and the API show a study's entries to its owners
(`entries_for`).

An entry keeps keys, never sentences: its action ("member.add"), its details' keys and
its target's kind with the names it needs (`target_of("member", role="coder", name="cora")`).
The page puts them in the reader's language when it shows them (`target_in_words`;
`study_setup.action_in_words`, `details_in_words`); the English words of the target are
stored beside them (`AuditEntry.target`: the API's field, and all an entry written before
targets had a kind carries)."""

from django.utils import translation
from django.utils.translation import gettext, pgettext_lazy

from coding.models import AuditEntry, Role

# A target's kind → its words, with the parts `target_of()` was given as placeholders. Roles
# are put in words first (`role`: "coder", 编码员); a list (`keys`) is joined.
NAME_ONLY = "%(name)s"
TARGET_WORDS = {
    "study": NAME_ONLY,
    "account": NAME_ONLY,
    "codebook": NAME_ONLY,
    "comparison": NAME_ONLY,
    "document": NAME_ONLY,
    "documents": "%(keys)s",
    "codebook_version": "%(codebook)s v%(number)s",  # as the codebook pages write it
    "member": pgettext_lazy("audit target", "%(role)s %(name)s"),
    "invite": pgettext_lazy("audit target", "invite %(id)s as %(role)s"),
    "model_rater": pgettext_lazy("audit target", "model rater %(name)s"),
    "person_rater": pgettext_lazy("audit target", "person rater %(name)s"),
    "outside_rater": pgettext_lazy("audit target", "outside rater %(name)s"),
    "main_round": pgettext_lazy("audit target", "main round"),
    "calibration_round": pgettext_lazy("audit target", "calibration round"),
    "method": pgettext_lazy("audit target", "method %(name)s"),
    "framework": pgettext_lazy("audit target", "framework %(name)s"),
    "option_name": pgettext_lazy("audit target", "%(method)s in %(framework)s"),
    "inclusion_list": pgettext_lazy("audit target", "inclusion list %(name)s"),
}


def target_of(kind, **parts):
    """A structured target for `record`: its kind (a key of TARGET_WORDS) and the names
    and ids its words need."""
    return {"kind": kind, **parts}


def target_in_words(parts, stored=""):
    """A target in the active language; the stored text when it has no kind (an entry
    written before targets had one) or a kind without words."""
    if not isinstance(parts, dict) or parts.get("kind") not in TARGET_WORDS:
        return stored
    values = {}
    for key, value in parts.items():
        if key == "role":
            value = gettext(Role(value).label).lower() if value in Role.values else value
        elif isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        values[key] = value
    try:
        return str(TARGET_WORDS[parts["kind"]]) % values
    except (KeyError, TypeError, ValueError):
        return stored


def record(actor, study, action, target="", **details):
    """Write one entry: `action` is a dotted verb ("member.add"), `target` what it was done
    to (`target_of(kind, ...)`; plain text is kept as it is), `details` what changed
    ({"from": …, "to": …})."""
    parts = target if isinstance(target, dict) else None
    if parts is not None:
        with translation.override("en"):
            target = target_in_words(parts)
    return AuditEntry.objects.create(
        study=study, actor=actor if getattr(actor, "is_authenticated", False) else None,
        action=action, target=str(target)[:300], target_parts=parts, details=details,
    )


def entries_for(study):
    """A study's entries, newest first, with who made them (for keyset paging on -at, -id)."""
    return AuditEntry.objects.filter(study=study).select_related("actor")

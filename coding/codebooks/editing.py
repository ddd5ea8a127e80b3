"""The codebook editor's writes: a new codebook, its draft, saving it, publishing it.

A codebook has at most one draft, its newest version; everything older is published
and immutable (rule 5). Publishing is a conditional UPDATE of the draft's row
(`status = 'draft'`), so a replayed or concurrent publish makes one version, never two.
What the owner chose for the open assignments of the codebook's items happens in the
same transaction (coding.labeling.open_work, called through coding.actions.publish):

- "switch": coders go on with the new version (the coding page always shows the
  current one); their saved drafts keep the answers the new version still accepts;
- "release": their items go back to the pool (as a lapsed lease does).

Every change is audited in its own transaction (coding.access.audit).
"""

import hashlib
import json

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from coding.access import audit
from coding.access.archive import check_open
from coding.codebooks.diff import change_counts, diff
from coding.codebooks.spec import InvalidSpec, SpecError, check, save_draft, spec_of
from coding.codebooks.translations import pruned
from coding.codebooks.versions import draft_new_version
from coding.models import Codebook, CodebookVersion

SWITCH, RELEASE = "switch", "release"
# In English for the API and commands; the publish page shows them translated.
OPEN_ASSIGNMENTS = {
    SWITCH: gettext_noop("Coders continue on the new version; answers in their drafts to "
                         "questions that no longer exist (or no longer accept them) are dropped."),
    RELEASE: gettext_noop("Their items go back to the pool; the next coder starts on the new "
                          "version."),
}
NOTE_MAX_CHARS = 5_000


class NothingToPublish(Exception):
    """No draft (already published, by this request's twin or someone else)."""


def draft_of(codebook):
    """The codebook's draft (its newest version, when not yet published), or None."""
    newest = codebook.versions.order_by("-number").first()
    return newest if newest is not None and not newest.is_published else None


def previous_version(version):
    return (version.codebook.versions.filter(number__lt=version.number)
            .order_by("-number").first())


def version_diff(version):
    """The diff of a version against the one before it (everything added for v1)."""
    before = previous_version(version)
    return diff(spec_of(before) if before else None, spec_of(version))


def taken_name(name):
    """Why a new codebook cannot have this name, in the reader's language."""
    return gettext("the study already has a codebook named %(name)r") % {"name": name}


@transaction.atomic
def new_codebook(study, actor, name, applies_to, description=""):
    """A codebook with an empty draft v1: nothing is published until the owner says so."""
    check_open(study)
    spec = check({"name": name, "applies_to": applies_to, "description": description,
                  "questions": []})
    if study.codebooks.filter(name=spec["name"]).exists():
        raise InvalidSpec([SpecError("name", taken_name(name))])
    try:
        with transaction.atomic():
            codebook = Codebook.objects.create(study=study, name=name, applies_to=applies_to,
                                               description=description or "")
    except IntegrityError:  # a concurrent request took the name first
        raise InvalidSpec([SpecError("name", taken_name(name))]) from None
    CodebookVersion.objects.create(codebook=codebook, number=1, created_by=actor)
    audit.record(actor, study, "codebook.create", audit.target_of("codebook", name=codebook.name),
                 applies_to=applies_to)
    return codebook


@transaction.atomic
def start_draft(codebook, actor):
    """(draft, made): the codebook's draft, made from the newest version when there is none.
    Two concurrent calls make one draft (the version number is unique per codebook)."""
    check_open(codebook.study)
    Codebook.objects.select_for_update().filter(pk=codebook.pk).first()
    draft = draft_of(codebook)
    if draft is not None:
        return draft, False
    try:
        with transaction.atomic():
            if codebook.versions.exists():
                draft = draft_new_version(codebook, actor)
            else:  # a codebook made elsewhere without any version
                draft = CodebookVersion.objects.create(codebook=codebook, number=1,
                                                       created_by=actor)
    except IntegrityError:
        return draft_of(codebook), False
    audit.record(actor, codebook.study, "codebook.draft",
                 audit.target_of("codebook_version", codebook=codebook.name, number=draft.number),
                 from_version=draft.number - 1 or None)
    return draft, True


class Conflict(Exception):
    """The draft changed since the editor read it (another tab, another owner)."""


def revision(spec):
    """A short fingerprint of a spec: what an editor read, to refuse saving over a newer one."""
    text = json.dumps(spec, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@transaction.atomic
def save_spec(version, actor, spec, base=None):
    """Write the spec into the draft (checked first; nothing written if it has errors).
    With `base`, the revision the editor started from, a draft saved meanwhile by someone
    else is not overwritten: Conflict."""
    check_open(version.codebook.study)
    CodebookVersion.objects.select_for_update().filter(pk=version.pk).first()
    before = spec_of(version)
    if base is not None and base != revision(before):
        raise Conflict(gettext("%(version)s was saved by someone else since you opened it; "
                               "reload it to see their changes (yours are still in this form).")
                       % {"version": version})
    if isinstance(spec, dict) and "translations" not in spec:
        # The editor's form (and a script that leaves them out) does not carry translations:
        # the draft keeps those of the questions and options it still has.
        spec = spec.copy()  # a dict, or a form body's QueryDict (copied: mutable)
        spec["translations"] = pruned(before.get("translations"), spec)
    save_draft(version, spec)
    version.codebook.refresh_from_db()
    changes = diff(before, spec)
    audit.record(actor, version.codebook.study, "codebook.edit",
                 audit.target_of("codebook_version", codebook=version.codebook.name,
                                 number=version.number),
                 changes=change_counts(changes), questions=len(spec.get("questions") or []))
    return version


@transaction.atomic
def publish_draft(codebook, actor, note, open_assignments, number=None, *, handle_open):
    """Publish the codebook's draft as an immutable version with `note`; returns
    (version, counts) where counts says what happened to open assignments:
    `handle_open(codebook, version, mode)` does that in this transaction and counts it
    (coding.actions.publish passes the queue's, coding.labeling.open_work).

    Raises InvalidSpec (located errors; nothing changes) or NothingToPublish."""
    check_open(codebook.study)
    errors = []
    Codebook.objects.select_for_update().filter(pk=codebook.pk).first()
    draft = draft_of(codebook)
    if draft is None or (number is not None and draft.number != number):
        raise NothingToPublish(
            gettext("%(codebook)s has no draft v%(number)s")
            % {"codebook": codebook.name, "number": number} if number else
            gettext("%(codebook)s has no draft to publish") % {"codebook": codebook.name})
    note = (note or "").strip()
    # A note says what changed since the version before; the first version has none.
    if not note and draft.number > 1:
        errors.append(SpecError("note", gettext("say what changed: the note is kept with the "
                                                "version")))
    elif len(note) > NOTE_MAX_CHARS:
        errors.append(SpecError("note", gettext("at most %(limit)s characters")
                                % {"limit": f"{NOTE_MAX_CHARS:,}"}))
    if open_assignments not in OPEN_ASSIGNMENTS:
        errors.append(SpecError("open_assignments", gettext("either 'switch' or 'release'")))
    spec = spec_of(draft)
    try:
        check(spec, publishing=True)
    except InvalidSpec as invalid:
        errors += invalid.errors
    if errors:
        raise InvalidSpec(errors)
    # Conditional: of two publishes of this draft (a replay, a double click, two
    # owners), one changes the row and the other finds nothing to publish.
    if not CodebookVersion.objects.filter(pk=draft.pk, status=CodebookVersion.Status.DRAFT).update(
            status=CodebookVersion.Status.PUBLISHED, published_at=timezone.now(), note=note):
        raise NothingToPublish(gettext("%(version)s was published meanwhile")
                               % {"version": draft})
    draft.refresh_from_db()
    counts = handle_open(codebook, draft, open_assignments)
    before = previous_version(draft)
    audit.record(actor, codebook.study, "codebook.publish",
                 audit.target_of("codebook_version", codebook=codebook.name, number=draft.number),
                 note=note,
                 open_assignments=open_assignments, **counts,
                 changes=change_counts(diff(spec_of(before) if before else None, spec)))
    return draft, counts

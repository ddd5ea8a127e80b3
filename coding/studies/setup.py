"""Setting a study up without a developer: create one (blank, from a preset, or as a copy
of a study you own), rename and describe it, archive and restore it; the owner's setup
checklist and audit trail.

Pages, the API and the commands call these functions; each change and its audit entry
(coding.access.audit.record) are written in one transaction.
"""

from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from coding.access.archive import check_open
from coding.access.audit import entries_for, record, target_in_words, target_of
from coding.access.roles import may_create_study
from coding.codebooks.diff import summary_line
from coding.codebooks.spec import spec_of
from coding.codebooks.versions import create_codebook
from coding.models import (
    Assignment, AuditEntry, CodebookVersion, Framework, Item, Membership, Method, OptionName, Role,
    Study,
)
from coding.studies import presets

# Settings a copy takes from its source. Not the queue seed (a new study draws its own
# order) nor the reliability sample (it names items, which are never copied).
COPIED_SETTINGS = [
    "overlap", "lease_minutes", "blinded_fields", "blind_authors", "adjudicators_see_blinded",
    "allow_self_adjudication", "coders_hold_other_roles", "discussion_step", "show_feedback",
    "feedback_shows_reasons", "coders_see_names", "adjudicators_see_names",
    "calibration_threshold",
]
# What an owner may change after creation, through the settings page or PATCH.
EDITABLE = ["name", "description", *COPIED_SETTINGS]
# Words the study's own pages use after /studies/: a study may not take them as its slug.
RESERVED_SLUGS = {"new"}
NAME_MAX = Study._meta.get_field("name").max_length


@dataclass(frozen=True)
class Preset:
    label: str
    codebooks: list
    blinded_fields: list
    catalog: bool = False
    description: str = field(default="")


THREAD_BLINDED = [f for f in presets.BLINDED_FIELDS if f != "included_in"]
PRESETS = {
    "rl-inclusion": Preset(
        gettext_lazy("RL-inclusion study: paper and thread codebooks, frameworks and method "
                     "catalog"),
        [presets.PAPER_CODEBOOK, presets.THREAD_CODEBOOK], presets.BLINDED_FIELDS, catalog=True),
    "threads": Preset(gettext_lazy("Thread study: the thread codebook only"),
                      [presets.THREAD_CODEBOOK], THREAD_BLINDED),
}


# --- creating ------------------------------------------------------------------------

def create_study(user, name, description="", preset=None, copy_of=None, by_command=False):
    """A new study owned by `user`: blank, from one of PRESETS, or as a copy of `copy_of`
    (a study `user` owns): its settings, the latest published version of each codebook
    (published as version 1 of the copy, its note naming the source) and its frameworks,
    methods and option names. Never its items, codings, decisions or other members.

    PermissionDenied if the user may not create studies (unless an administrator runs the
    command: `by_command`) or does not own `copy_of`; ValidationError naming the field for
    a bad name or preset."""
    if not by_command and not may_create_study(user):
        raise PermissionDenied(_("You may not create studies; ask an administrator "
                                 "(manage.py grant_study_creation)."))
    name, description = check_new(name, description, preset, copy_of)
    if copy_of is not None and Role.OWNER not in copy_of.roles_of(user):
        raise PermissionDenied(_("Only a study you own can be copied."))
    with transaction.atomic():
        study = _insert_with_unique_slug(user, name, description)
        Membership.objects.create(study=study, user=user, role=Role.OWNER)
        details = {}
        if preset:
            details = apply_preset(study, PRESETS[preset], user)
            details["preset"] = preset
        elif copy_of is not None:
            details = copy_setup(copy_of, study, user)
            details["copy_of"] = copy_of.slug
        if by_command:
            details["by"] = "manage.py create_study"
        record(user, study, "study.create", target_of("study", name=study.name), slug=study.slug,
               **details)
    return study


def check_new(name, description, preset, copy_of):
    name, description = (name or "").strip(), (description or "").strip()
    errors = {}
    if not name:
        errors["name"] = _("Give the study a name.")
    elif len(name) > NAME_MAX:
        errors["name"] = _("At most %(max)d characters.") % {"max": NAME_MAX}
    if preset and preset not in PRESETS:
        errors["preset"] = _("Not a preset: %(preset)r; choose one of %(presets)s.") % {
            "preset": preset, "presets": ", ".join(PRESETS)}
    if preset and copy_of is not None:
        errors["preset"] = _("Start from a preset or from a copy, not both.")
    if errors:
        raise ValidationError(errors)
    return name, description


def unique_slug(name, taken=()):
    """A slug from the name that no study (archived or removed ones included) holds yet:
    `my-study`, then `my-study-2`, `my-study-3` …"""
    base = slugify(name)[:70].strip("-") or "study"
    used = set(Study.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    used |= RESERVED_SLUGS | set(taken)
    candidate, n = base, 1
    while candidate in used:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _insert_with_unique_slug(user, name, description, attempts=5):
    # Two studies created at once with the same name may both find the same free slug:
    # the unique index refuses the second, which tries the next one.
    taken = []
    for _attempt in range(attempts):
        slug = unique_slug(name, taken)
        try:
            with transaction.atomic():
                return Study.objects.create(name=name, slug=slug, description=description,
                                            created_by=user)
        except IntegrityError:
            taken.append(slug)
    raise IntegrityError(f"no free slug for {name!r} after {attempts} attempts")


def apply_preset(study, preset, user):
    """The preset's codebooks (version 1, published), blinded fields and catalog."""
    Study.objects.filter(pk=study.pk).update(blinded_fields=preset.blinded_fields)
    study.blinded_fields = list(preset.blinded_fields)
    books = [create_codebook(study, spec, user).name for spec in preset.codebooks]
    if preset.catalog:
        add_preset_catalog(study)
    return {"codebooks": books}


def add_preset_catalog(study):
    """The design brief's frameworks and method catalog, with each framework's option names."""
    frameworks = {
        name: Framework.objects.create(study=study, name=name, repository=repo)
        for name, repo in presets.FRAMEWORKS
    }
    for position, (name, first_public, options) in enumerate(presets.METHODS):
        method = Method.objects.create(
            study=study, name=name, first_public=first_public, position=position
        )
        OptionName.objects.bulk_create(
            OptionName(method=method, framework=frameworks[fw], name=option)
            for fw, option in options.items()
        )


def copy_setup(source, study, user):
    """Settings, published codebooks and catalog of `source` into the new `study`."""
    for name in COPIED_SETTINGS:
        setattr(study, name, getattr(source, name))
    study.save(update_fields=COPIED_SETTINGS)
    copied, skipped = [], []
    for codebook in source.codebooks.order_by("pk"):
        version = codebook.current_version()
        if version is None:  # only drafts: nothing published to copy
            skipped.append(codebook.name)
            continue
        new = create_codebook(study, spec_of(version), user)
        new.versions.update(note=f"Copied from {source.name}: {codebook.name} v{version.number}.")
        copied.append(f"{codebook.name} v{version.number}")
    _copy_catalog(source, study)
    details = {"codebooks": copied}
    if skipped:
        details["not_copied_unpublished"] = skipped
    return details


def _copy_catalog(source, study):
    frameworks = {}
    for old in source.frameworks.order_by("pk"):
        frameworks[old.pk] = Framework.objects.create(
            study=study, name=old.name, repository=old.repository, main_branch=old.main_branch)
    methods = {}
    for old in source.methods.order_by("position", "pk"):
        methods[old.pk] = Method.objects.create(
            study=study, name=old.name, first_public=old.first_public,
            source_arxiv_id=old.source_arxiv_id, failure_addressed=old.failure_addressed,
            position=old.position)
    OptionName.objects.bulk_create(
        OptionName(method=methods[o.method_id], framework=frameworks[o.framework_id], name=o.name)
        for o in OptionName.objects.filter(method__study=source).order_by("pk"))


# --- changing ------------------------------------------------------------------------

@transaction.atomic
def update_study(study, user, changes):
    """Apply an owner's changes to EDITABLE fields (already validated by the form or
    serializer) and audit each kind of change with its old and new value: a rename, a new
    description, other settings. Returns the study as saved."""
    check_open(study)  # an archived study changes nothing but being restored
    from coding.labeling.queue import sync_targets  # the queue builds on modules this one uses

    current = Study.objects.select_for_update().get(pk=study.pk)
    changed = {name: {"from": getattr(current, name), "to": value}
               for name, value in changes.items()
               if name in EDITABLE and getattr(current, name) != value}
    for name, change in changed.items():
        setattr(current, name, change["to"])
        setattr(study, name, change["to"])
    if not changed:
        return study
    current.save(update_fields=list(changed))
    if "name" in changed:
        record(user, study, "study.rename", target_of("study", name=current.name),
               **changed.pop("name"))
    if "description" in changed:
        record(user, study, "study.describe", target_of("study", name=current.name),
               **changed.pop("description"))
    if changed:
        record(user, study, "study.settings", target_of("study", name=current.name), **changed)
    if "overlap" in changed:
        sync_targets(current, user)
    return study


def archive_study(study, user):
    """Archive the study (closed to new work, out of everyone's lists); True if it was
    live. A conditional update, so two owners archiving at once write one entry."""
    return _set_archived(study, user, timezone.now(), "study.archive")


def restore_study(study, user):
    """Open an archived study again; True if it was archived."""
    return _set_archived(study, user, None, "study.restore")


@transaction.atomic
def _set_archived(study, user, when, action):
    rows = Study.objects.filter(pk=study.pk, archived_at__isnull=when is not None)
    if not rows.update(archived_at=when):
        study.refresh_from_db(fields=["archived_at"])
        return False
    study.archived_at = when
    record(user, study, action, target_of("study", name=study.name))
    return True


def live(studies):
    return studies.filter(archived_at__isnull=True)


def archived(studies):
    return studies.filter(archived_at__isnull=False)


# --- the owner's checklist -----------------------------------------------------------

def safe_reverse(name, *args):
    """The URL of a page, or None while no page of that name exists."""
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


@dataclass
class Step:
    key: str
    label: str
    done: bool
    url: str | None
    hint: str
    action: str  # the link's words while the step is to do
    optional: bool = False


def setup_checklist(study):
    """What is set up and what is missing, in the order a study is set up: one query
    whatever the study's size (each step is an EXISTS that stops at the first row)."""
    here = OuterRef("pk")
    state = Study.objects.filter(pk=study.pk).annotate(
        has_published=Exists(CodebookVersion.objects.filter(
            codebook__study=here, status=CodebookVersion.Status.PUBLISHED)),
        has_coders=Exists(Membership.objects.filter(study=here, role=Role.CODER,
                                                deleted_at__isnull=True)),
        has_items=Exists(Item.objects.filter(study=here, deleted_at__isnull=True)),
        has_calibration=Exists(Item.objects.filter(study=here, deleted_at__isnull=True,
                                               round=Item.Round.CALIBRATION)),
        has_started=Exists(Assignment.objects.filter(study=here,
                                                 status=Assignment.Status.SUBMITTED)),
        has_catalog=Exists(Method.objects.filter(study=here)),
    ).values("has_published", "has_coders", "has_items", "has_calibration", "has_started",
             "has_catalog").get()
    state = {key.removeprefix("has_"): value for key, value in state.items()}
    slug = study.slug
    return [
        Step("codebook", _("Publish a codebook"), state["published"],
             safe_reverse("codebook-list", slug),
             _("Write the questions coders answer, then publish."), _("Write a codebook")),
        Step("members", _("Add at least one coder"), state["coders"],
             safe_reverse("members", slug),
             _("Add people with an account, or invite them with a one-time link."),
             _("Add members")),
        Step("items", _("Import items"), state["items"], safe_reverse("import", slug),
             _("Fill the pool from arXiv or GitHub, with screening rules."), _("Import")),
        Step("started", _("Coding started"), state["started"], safe_reverse("queue", slug),
             _("The first coding arrives once a coder opens the coding page; the queue shows "
               "who is working."), _("See the queue")),
        Step("calibration", _("Choose calibration items"), state["calibration"],
             safe_reverse("calibration", slug),
             _("Training items with reference answers, coded before the main round."),
             _("Choose items"), optional=True),
        Step("catalog", _("Edit the method catalog"), state["catalog"],
             safe_reverse("catalog-edit", slug),
             _("Methods and frameworks for the landing scan."), _("Edit the catalog"),
             optional=True),
    ]


# --- the audit trail -----------------------------------------------------------------

def audit_entries(study, after=None, limit=50):
    """A page of the study's audit entries, newest first, after the entry whose id is the
    page token `after` (keyset paging: a deep page costs what the first does). Each entry
    carries `token`, `action_words`, `target_words` and `details_words`. ValueError for a
    bad token."""
    rows = entries_for(study)
    if after:
        last = (AuditEntry.objects.filter(study=study, pk=_entry_id(after))
                .values("at", "pk").first())
        if last is None:
            raise ValueError("not a page token of this list")
        rows = rows.filter(Q(at__lt=last["at"]) | Q(at=last["at"], pk__lt=last["pk"]))
    found = list(rows.order_by("-at", "-id")[:limit])
    for entry in found:
        entry.token = str(entry.pk)
        entry.action_words = action_in_words(entry.action)
        entry.target_words = target_in_words(entry.target_parts, entry.target)
        entry.details_words = details_in_words(entry.details, entry.action)
    return found


def _entry_id(token):
    if not token.isdigit() or len(token) > 18:
        raise ValueError("not a page token of this list")
    return int(token)


# An entry keeps its action's key ("member.add") and its details' keys; the page and the
# API's *_words say them in the reader's language (the API's is always English).
ACTION_WORDS = {
    "study.create": gettext_lazy("created the study"),
    "study.rename": gettext_lazy("renamed the study"),
    "study.describe": gettext_lazy("changed the description"),
    "study.settings": gettext_lazy("changed settings"),
    "study.archive": gettext_lazy("archived the study"),
    "study.restore": gettext_lazy("restored the study"),
    "codebook.create": gettext_lazy("created a codebook"),
    "codebook.draft": gettext_lazy("started a draft version"),
    "codebook.edit": gettext_lazy("edited a draft version"),
    "codebook.publish": gettext_lazy("published a codebook version"),
    "codebook.import": gettext_lazy("imported a codebook file"),
    "member.add": gettext_lazy("added a member"),
    "member.role": gettext_lazy("changed a member's role"),
    "member.remove": gettext_lazy("removed a member"),
    "invite.create": gettext_lazy("made an invitation link"),
    "invite.revoke": gettext_lazy("revoked an invitation link"),
    "invite.use": gettext_lazy("joined through an invitation"),
    "calibration.add": gettext_lazy("added calibration items"),
    "calibration.remove": gettext_lazy("removed a calibration item"),
    "calibration.reference": gettext_lazy("set reference answers"),
    "calibration.threshold": gettext_lazy("changed the calibration threshold"),
    "calibration.waive": gettext_lazy("waived calibration for a coder"),
    "calibration.require": gettext_lazy("required calibration of a coder again"),
    "method.add": gettext_lazy("added a method to the catalog"),
    "method.edit": gettext_lazy("edited a method of the catalog"),
    "method.remove": gettext_lazy("removed a method from the catalog"),
    "option_name.add": gettext_lazy("added a method's name in a framework"),
    "inclusion_list.import": gettext_lazy("imported an inclusion list"),
    "member.reset_link": gettext_lazy("made a password reset link for a member"),
    "option_name.remove": gettext_lazy("removed a method's name in a framework"),
    "framework.add": gettext_lazy("added a framework to the catalog"),
    "framework.edit": gettext_lazy("edited a framework of the catalog"),
    "framework.remove": gettext_lazy("removed a framework from the catalog"),
    "rater.add": gettext_lazy("added a rater"),
    "comparison.add": gettext_lazy("added a comparison"),
    "rater.configure": gettext_lazy("changed how a model rater is called"),
    "model_run.start": gettext_lazy("started a model rater's run"),
    "model_run.pause": gettext_lazy("paused a model rater's run"),
    "model_run.resume": gettext_lazy("resumed a model rater's run"),
    "model_run.cancel": gettext_lazy("cancelled a model rater's run"),
    "round.assisted": gettext_lazy("made a round assisted"),
    "round.blind": gettext_lazy("made a round blind again"),
    "permission.grant": gettext_lazy("allowed an account to create studies"),
    "permission.revoke": gettext_lazy("no longer allowed an account to create studies"),
    "items.exclude": gettext_lazy("excluded items from the study"),
    "items.restore": gettext_lazy("restored excluded items"),
    "items.release": gettext_lazy("released items a coder held"),
    "items.return": gettext_lazy("returned items to the pool"),
    "items.sample": gettext_lazy("added items to the reliability sample by hand"),
    "screening.configure": gettext_lazy("changed how records are screened"),
    "screening.stop": gettext_lazy("stopped screening"),
    "screening.resume": gettext_lazy("resumed screening"),
}
# Details' keys as people read them; a key not here is read with spaces for underscores.
DETAIL_WORDS = {
    "name": pgettext_lazy("audit detail", "name"),
    "description": pgettext_lazy("audit detail", "description"),
    "slug": pgettext_lazy("audit detail", "slug"),
    "preset": pgettext_lazy("audit detail", "preset"),
    "copy_of": pgettext_lazy("audit detail", "copy of"),
    "by": pgettext_lazy("audit detail", "by"),
    "codebooks": pgettext_lazy("audit detail", "codebooks"),
    "not_copied_unpublished": pgettext_lazy("audit detail", "not copied (unpublished)"),
    "overlap": pgettext_lazy("audit detail", "overlap"),
    "lease_minutes": pgettext_lazy("audit detail", "lease minutes"),
    "blinded_fields": pgettext_lazy("audit detail", "blinded fields"),
    "blind_authors": pgettext_lazy("audit detail", "blind authors"),
    "adjudicators_see_blinded": pgettext_lazy("audit detail", "adjudicators see blinded fields"),
    "allow_self_adjudication": pgettext_lazy("audit detail", "allow self-adjudication"),
    "coders_hold_other_roles": pgettext_lazy("audit detail", "coders may also adjudicate or view"),
    "discussion_step": pgettext_lazy("audit detail", "discussion step"),
    "show_feedback": pgettext_lazy("audit detail", "show feedback"),
    "feedback_shows_reasons": pgettext_lazy("audit detail", "feedback shows reasons"),
    "coders_see_names": pgettext_lazy("audit detail", "coders see names"),
    "adjudicators_see_names": pgettext_lazy("audit detail", "adjudicators see names"),
    "calibration_threshold": pgettext_lazy("audit detail", "calibration threshold"),
    "applies_to": pgettext_lazy("audit detail", "applies to"),
    "note": pgettext_lazy("audit detail", "note"),
    "changes": pgettext_lazy("audit detail", "changes"),
    "format": pgettext_lazy("audit detail", "format"),
    "questions": pgettext_lazy("audit detail", "questions"),
    "new_codebook": pgettext_lazy("audit detail", "new codebook"),
    "replaced_draft": pgettext_lazy("audit detail", "replaced the draft"),
    "from_version": pgettext_lazy("audit detail", "from version"),
    "role": pgettext_lazy("audit detail", "role"),
    "user": pgettext_lazy("audit detail", "user"),
    "email": pgettext_lazy("audit detail", "e-mail"),
    "expires_at": pgettext_lazy("audit detail", "expires at"),
    "invite": pgettext_lazy("audit detail", "invitation"),
    "new_account": pgettext_lazy("audit detail", "new account"),
    "open_assignments": pgettext_lazy("audit detail", "open assignments"),
    "released": pgettext_lazy("audit detail", "released"),
    "items": pgettext_lazy("audit detail", "items"),
    "reason": pgettext_lazy("audit detail", "reason"),
    "reference": pgettext_lazy("audit detail", "reference"),
    "model_version": pgettext_lazy("audit detail", "model version"),
    "config_hash": pgettext_lazy("audit detail", "configuration hash"),
    "first": pgettext_lazy("audit detail", "first"),
    "second": pgettext_lazy("audit detail", "second"),
    "question": pgettext_lazy("audit detail", "question"),
    "weighting": pgettext_lazy("audit detail", "weighting"),
    "rater": pgettext_lazy("audit detail", "rater"),
    "fields": pgettext_lazy("audit detail", "settings changed"),
    "endpoint": pgettext_lazy("audit detail", "endpoint"),
    "run": pgettext_lazy("audit detail", "run"),
    "scope": pgettext_lazy("audit detail", "items"),
    "replicates": pgettext_lazy("audit detail", "replicates"),
    "repository": pgettext_lazy("audit detail", "repository"),
    "framework": pgettext_lazy("audit detail", "framework"),
    "method": pgettext_lazy("audit detail", "method"),
    "option_names": pgettext_lazy("audit detail", "names in frameworks"),
    "landings_removed": pgettext_lazy("audit detail", "landings removed"),
    "revived": pgettext_lazy("audit detail", "revived"),
    "drafts_pruned": pgettext_lazy("audit detail", "drafts trimmed"),
    "codebook_version": pgettext_lazy("audit detail", "codebook version"),
    "permission": pgettext_lazy("audit detail", "permission"),
    "first_public": pgettext_lazy("audit detail", "first public"),
    "source_arxiv_id": pgettext_lazy("audit detail", "source arXiv id"),
    "failure_addressed": pgettext_lazy("audit detail", "failure addressed"),
    "position": pgettext_lazy("audit detail", "order"),
    "main_branch": pgettext_lazy("audit detail", "main branch"),
    "file": pgettext_lazy("audit detail", "file"),
    "sha256": pgettext_lazy("audit detail", "SHA-256"),
    "rows": pgettext_lazy("audit detail", "rows"),
    "replaced": pgettext_lazy("audit detail", "rows replaced"),
    "include": pgettext_lazy("audit detail", "answers that include"),
    "model": pgettext_lazy("audit detail", "model"),
    "random_share": pgettext_lazy("audit detail", "share served at random"),
    "target_recall": pgettext_lazy("audit detail", "target recall"),
    "confidence": pgettext_lazy("audit detail", "confidence"),
    "prior_rater": pgettext_lazy("audit detail", "prior labels"),
    "screened": pgettext_lazy("audit detail", "screened"),
    "includes": pgettext_lazy("audit detail", "included"),
    "p": pgettext_lazy("audit detail", "p-value of the stopping rule"),
    "stopped_at": pgettext_lazy("audit detail", "stopped at"),
}


def action_in_words(action):
    """An entry's action key as people read it, in the active language."""
    words = ACTION_WORDS.get(action)
    return str(words) if words else action.replace(".", " ")


# Details' values that are keys, read in words (a key not here, or another value, is
# shown as it was recorded). A role, of `role` and of a role change's from/to, reads as
# the role's label.
VALUE_WORDS = {
    "weighting": {"unweighted": gettext_lazy("unweighted"),
                  "linear": pgettext_lazy("weights", "linear"),
                  "quadratic": pgettext_lazy("weights", "quadratic"),
                  "custom": pgettext_lazy("weights", "custom")},
    "open_assignments": {"switch": pgettext_lazy("audit detail", "switched to the new version"),
                         "release": pgettext_lazy("audit detail", "released to the pool")},
    "second": {"final decisions": pgettext_lazy("audit detail", "the final decisions")},
    "permission": {"create_study": pgettext_lazy("audit detail", "create studies")},
    "applies_to": {"paper": pgettext_lazy("audit detail", "papers"),
                   "thread": pgettext_lazy("audit detail", "threads")},
    "preset": {key: preset.label for key, preset in PRESETS.items()},
}
ROLE_CHANGES = {"member.role"}  # actions whose from/to are roles


def details_in_words(details, action=""):
    """An entry's details as a sentence: `from “a” to “b”`, `overlap: 2 → 3`, `codebooks: …`."""
    if not isinstance(details, dict):
        return _words(details)
    parts = []
    if "from" in details and "to" in details:
        key = "role" if action in ROLE_CHANGES else ""
        parts.append(_("from %(old)s to %(new)s") % {"old": _value(key, details["from"]),
                                                     "new": _value(key, details["to"])})
    for key, value in details.items():
        if key in ("from", "to"):
            continue
        label = str(DETAIL_WORDS.get(key) or key.replace("_", " "))
        if key == "changes" and isinstance(value, dict) and "added" in value:
            # A codebook's change_counts; older entries kept an English sentence.
            parts.append(_("%(label)s: %(value)s") % {"label": label,
                                                      "value": summary_line(value)})
        elif _is_changes(value):  # {field: {"from", "to"}}: each field a part of its own
            parts.append(details_in_words(value))
        elif isinstance(value, dict) and set(value) == {"from", "to"}:
            parts.append(_("%(label)s: %(old)s → %(new)s") % {
                "label": label, "old": _value(key, value["from"]),
                "new": _value(key, value["to"])})
        else:
            parts.append(_("%(label)s: %(value)s") % {"label": label,
                                                      "value": _value(key, value)})
    return _("; ").join(parts)


def _value(key, value):
    if key == "role" and value in Role.values:
        return _(Role(value).label).lower()
    words = VALUE_WORDS.get(key, {}).get(value) if isinstance(value, str) else None
    return str(words) if words else _words(value)


def _is_changes(value):
    return (isinstance(value, dict) and value and "from" not in value
            and all(isinstance(v, dict) and set(v) == {"from", "to"} for v in value.values()))


def _words(value):
    if value is None or value == "" or value == []:
        return _("nothing")
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, list):
        return ", ".join(_words(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_words(v)}" for k, v in value.items())
    if isinstance(value, str):
        return f"“{value}”"
    return str(value)

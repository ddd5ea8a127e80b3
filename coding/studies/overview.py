"""What a member sees of a study at a glance, and what they can do next.

Counts shown to a coder are about their own work only (rule 1): never how many
others coded an item, nor whether they agreed.
"""

from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from coding.access.blinding import hides_inclusion
from coding.access.roles import CAN_SEE_ALL_CODINGS, role_label
from coding.agreement.report import SEES_AGREEMENT
from coding.labeling.queue import held_items
from coding.models import Role
from coding.models.tallies import tallies
from ingest.models import Document


def study_overview(study, user):
    """The study's card. A few queries whatever its size (issues 13 and 42): the study's
    tallies (coding/models/tallies.py: kept as items and assignments are written, not
    counted on each view) for the coder's own assignments, the pool and the progress, and
    the items held now."""
    roles = study.roles_of(user)
    card = {"study": study, "roles": sorted(role_label(r) for r in roles)}
    sees_pool = bool(roles & (CAN_SEE_ALL_CODINGS | {Role.VIEWER}))
    sees_progress = bool(roles & CAN_SEE_ALL_CODINGS)
    if Role.CODER not in roles and not sees_pool and not sees_progress:
        card["actions"] = _actions(study, roles)
        return card
    counts = tallies(study)
    if Role.CODER in roles:
        card["mine"] = {status: counts.get(f"work:{user.pk}:{status}", 0)
                        for status in ("submitted", "active", "skipped")}
    if sees_pool or sees_progress:
        card.update(_pool_and_progress(study, counts, sees_pool, sees_progress))
    card["actions"] = _actions(study, roles)
    return card


def _pool_and_progress(study, counts, pool, progress):
    """From the study's tallies (`counts`): its alive items by their documents' kind, and
    how many items `taken` says one coder or `overlap` coders took. Progress counts
    submitted codings per item as `Item.taken` (active plus submitted) less the items'
    active assignments, which are few (one per coder at most):
    coding.labeling.queue.held_items."""
    def items_of(kind):
        return sum(n for name, n in counts.items()
                   if name.startswith("items:") and name.endswith(f":{kind}"))

    def taken_at_least(least):
        return sum(n for name, n in counts.items()
                   if name.startswith("taken:") and int(name[6:]) >= least)

    found = {"papers": items_of(Document.Kind.PAPER), "threads": items_of(Document.Kind.THREAD),
             "coded_once": taken_at_least(1), "fully_coded": taken_at_least(study.overlap)}
    card = {}
    if pool:
        card["pool"] = {"papers": found["papers"], "threads": found["threads"]}
    if progress:
        for held in held_items(study):
            submitted = held["taken"] - held["active"]
            for key, need in (("coded_once", 1), ("fully_coded", study.overlap)):
                if held["taken"] >= need > submitted:
                    found[key] -= 1
        card["progress"] = {"coded_once": found["coded_once"],
                            "fully_coded": found["fully_coded"], "overlap": study.overlap}
    return card


# (label, url name, who sees it, hint), in the order of a study's life.
ANALYSTS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}
ACTIONS = [
    (_("Code next item"), "code-next", {Role.CODER},
     _("Blind coding, keyboard first. Press ? on the page for the keys.")),
    (_("Import"), "import", {Role.OWNER}, _("Fill the pool from arXiv or GitHub, with screening.")),
    (_("Queue"), "queue", {Role.OWNER}, _("Progress per coder and round; the reliability sample.")),
    (_("Screening"), "screening-round", {Role.OWNER},
     _("Records ranked for each screener by a model of their own labels; when to stop.")),
    (_("Items"), "items", CAN_SEE_ALL_CODINGS,
     _("Every item with its state; search, filter, exclude, release, move to calibration.")),
    (_("Calibration"), "calibration", {Role.OWNER},
     _("Calibration items, your reference answers, the pass threshold, who passed.")),
    (_("Review disagreements"), "review-queue", {Role.ADJUDICATOR, Role.OWNER},
     _("Compare the codings side by side and decide the final values.")),
    (_("Agreement"), "agreement", SEES_AGREEMENT,
     _("Reliability per question, over time, and a report for the paper.")),
    (_("Export"), "export", ANALYSTS, _("The coded dataset with its data dictionary, for pandas or R.")),
    (_("Method catalog"), "catalog", ANALYSTS,
     _("When each method landed in each framework (hidden from coders).")),
    (_("Inclusion"), "inclusion", SEES_AGREEMENT,
     _("Included against not-included papers on every coded field; inclusion lists the "
       "team already has.")),
    (_("All codings"), "coding-list", CAN_SEE_ALL_CODINGS, _("Every submitted coding, by coder.")),
    (_("Settings"), "study-settings", {Role.OWNER}, _("Overlap, blinded fields, adjudication rules.")),
]


def _actions(study, roles):
    actions = [(label, reverse(name, args=[study.slug]), hint)
               for label, name, who, hint in ACTIONS if roles & who
               and not (name in ("catalog", "inclusion") and hides_inclusion(study, roles))]
    if Role.CODER in roles and not roles & CAN_SEE_ALL_CODINGS:
        actions.append((_("My codings"), reverse("coding-list", args=[study.slug]),
                        _("What you have submitted so far.")))
    if Role.CODER in roles and study.show_feedback:
        actions.append((_("Feedback"), reverse("feedback", args=[study.slug]),
                        _("Where your answers differed from the final decisions.")))
    actions.append((_("Codebooks"), reverse("study-detail", args=[study.slug]) + "#codebooks",
                    _("Read each question's definition and examples.")))
    return actions

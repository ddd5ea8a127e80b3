"""What a member sees of a study at a glance, and what they can do next.

Counts shown to a coder are about their own work only (rule 1): never how many
others coded an item, nor whether they agreed.
"""

from django.db.models import Count, Q
from django.urls import reverse

from ingest.models import Document

from .access import CAN_SEE_ALL_CODINGS
from .agreement_report import SEES_AGREEMENT
from .blinding import hides_inclusion
from .models import Assignment, Role


def study_overview(study, user):
    roles = study.roles_of(user)
    card = {"study": study, "roles": sorted(Role(r).label for r in roles)}
    if Role.CODER in roles:
        card["mine"] = Assignment.objects.filter(item__study=study, coder=user).aggregate(
            submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
            active=Count("id", filter=Q(status=Assignment.Status.ACTIVE)),
            skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
        )
    if roles & (CAN_SEE_ALL_CODINGS | {Role.VIEWER}):
        card["pool"] = study.items.alive().aggregate(
            papers=Count("id", filter=Q(document__kind=Document.Kind.PAPER)),
            threads=Count("id", filter=Q(document__kind=Document.Kind.THREAD)),
        )
    if roles & CAN_SEE_ALL_CODINGS:
        coded = (Assignment.objects.filter(item__study=study, status=Assignment.Status.SUBMITTED)
                 .values("item").annotate(n=Count("id")))
        card["progress"] = {
            "coded_once": coded.count(),
            "fully_coded": coded.filter(n__gte=study.overlap).count(),
            "overlap": study.overlap,
        }
    card["actions"] = _actions(study, roles)
    return card


# (label, url name, who sees it, hint), in the order of a study's life.
ANALYSTS = {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}
ACTIONS = [
    ("Code next item", "code-next", {Role.CODER},
     "Blind coding, keyboard first. Press ? on the page for the keys."),
    ("Import", "import", {Role.OWNER}, "Fill the pool from arXiv or GitHub, with screening."),
    ("Queue", "queue", {Role.OWNER}, "Progress per coder and round; the reliability sample."),
    ("Review disagreements", "review-queue", {Role.ADJUDICATOR, Role.OWNER},
     "Compare the codings side by side and decide the final values."),
    ("Agreement", "agreement", SEES_AGREEMENT,
     "Reliability per question, over time, and a report for the paper."),
    ("Export", "export", ANALYSTS, "The coded dataset with its data dictionary, for pandas or R."),
    ("Method catalog", "catalog", ANALYSTS,
     "When each method landed in each framework (hidden from coders)."),
    ("All codings", "coding-list", CAN_SEE_ALL_CODINGS, "Every submitted coding, by coder."),
    ("Settings", "study-settings", {Role.OWNER}, "Overlap, blinded fields, adjudication rules."),
]


def _actions(study, roles):
    actions = [(label, reverse(name, args=[study.slug]), hint)
               for label, name, who, hint in ACTIONS if roles & who
               and not (name == "catalog" and hides_inclusion(study, roles))]
    if Role.CODER in roles and not roles & CAN_SEE_ALL_CODINGS:
        actions.append(("My codings", reverse("coding-list", args=[study.slug]),
                        "What you have submitted so far."))
    if Role.CODER in roles and study.show_feedback:
        actions.append(("Feedback", reverse("feedback", args=[study.slug]),
                        "Where your answers differed from the final decisions."))
    actions.append(("Codebooks", reverse("study-detail", args=[study.slug]) + "#codebooks",
                    "Read each question's definition and examples."))
    return actions

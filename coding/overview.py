"""What a member sees of a study at a glance, and what they can do next.

Counts shown to a coder are about their own work only (rule 1): never how many
others coded an item, nor whether they agreed.
"""

from django.db.models import Count, Q
from django.urls import reverse

from ingest.models import Document

from .access import CAN_SEE_ALL_CODINGS
from .agreement_report import SEES_AGREEMENT
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


def _actions(study, roles):
    actions = []
    if Role.CODER in roles:
        actions.append(("Code next item", reverse("code-next", args=[study.slug]),
                        "Blind coding, keyboard first. Press ? on the page for the keys."))
    actions += [("Codebooks", reverse("study-detail", args=[study.slug]) + "#codebooks",
                "Read each question's definition and examples.")]
    if roles & {Role.ADJUDICATOR, Role.OWNER}:
        actions.append(("Review disagreements", reverse("review-queue", args=[study.slug]),
                        "Compare the codings side by side and decide the final values."))
    if Role.CODER in roles and study.show_feedback:
        actions.append(("Feedback", reverse("feedback", args=[study.slug]),
                        "Where your answers differed from the final decisions."))
    if roles & CAN_SEE_ALL_CODINGS:
        actions.append(("All codings", reverse("coding-list", args=[study.slug]),
                        "Every submitted coding, by coder."))
    elif Role.CODER in roles:
        actions.append(("My codings", reverse("coding-list", args=[study.slug]),
                        "What you have submitted so far."))
    if roles & {Role.OWNER, Role.ADJUDICATOR, Role.VIEWER}:
        actions.append(("Export", reverse("export", args=[study.slug]),
                        "The coded dataset with its data dictionary, for pandas or R."))
    if Role.OWNER in roles:
        actions.append(("Queue", reverse("queue", args=[study.slug]),
                        "Progress per coder and round; the reliability sample."))
        actions.append(("Settings", reverse("study-settings", args=[study.slug]),
                        "Overlap, blinded fields, adjudication rules."))
    if roles & SEES_AGREEMENT:
        actions.append(("Agreement", reverse("agreement", args=[study.slug]),
                        "Reliability per question, over time, and a report for the paper."))
    return actions

"""Every item of a study with its state, filtered and paged by keyset.

An item's state is read from what the study already keeps, never stored twice:

- excluded: an owner took it out (`Item.deleted_at`, with its reason);
- decided: every stored disagreement of it is decided;
- in disagreement: a stored disagreement of it is open;
- held: a coder holds it now (an active assignment);
- coded k of n: k coders submitted it, of the n it needs (its target; for a
  calibration item, the study's coders);
- skipped: someone skipped it and nobody has submitted it;
- in the pool: nobody has it.

The filters each ask "has this state" (an item in disagreement is also coded), so each
is one EXISTS on an indexed table. A page is one query for its items plus two for the
states of the items shown (assignments and disagreements grouped by item): the queries
do not grow with the study, and paging is by id from the last row shown (keyset), so
the millionth item's page costs what the first does.
"""

from dataclasses import dataclass

from django.db.models import Count, Exists, OuterRef, Q
from django.utils.translation import gettext, gettext_lazy, ngettext, pgettext_lazy

from coding.models import Assignment, ImportRun, Item, Membership, Role, StoredDisagreement

PAGE = 50
ACTIVE, SUBMITTED, SKIPPED = (Assignment.Status.ACTIVE, Assignment.Status.SUBMITTED,
                              Assignment.Status.SKIPPED)

# The filter's choices, in the order a study moves through them.
STATES = {
    "pool": gettext_lazy("in the pool (nobody has it)"),
    "held": gettext_lazy("held by a coder now"),
    "coded": gettext_lazy("coded by at least one coder"),
    "disagreement": gettext_lazy("in disagreement"),
    "decided": gettext_lazy("decided"),
    "skipped": gettext_lazy("skipped by someone"),
    "excluded": gettext_lazy("excluded"),
}
ROUNDS = {"main": pgettext_lazy("round", "main"),
          "calibration": pgettext_lazy("round", "calibration")}
KINDS = {"paper": pgettext_lazy("document kind", "papers"),
         "thread": pgettext_lazy("document kind", "threads")}
SAMPLE = {"yes": gettext_lazy("in the reliability sample"),
          "no": gettext_lazy("outside the reliability sample")}


class FilterError(ValueError):
    """A filter that is not one: `field` names it."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Filters:
    q: str = ""
    state: str = ""
    round: str = ""
    kind: str = ""
    coder: int | None = None
    run: int | None = None
    sample: str = ""

    def as_params(self):
        """The filters as query parameters, the empty ones left out (for links)."""
        return {k: v for k, v in self.__dict__.items() if v not in ("", None)}


def _choice(params, name, choices):
    value = (params.get(name) or "").strip()
    if value and value not in choices:
        raise FilterError(name, gettext("%(value)s is not one of: %(choices)s") % {
            "value": value[:40], "choices": ", ".join(choices)})
    return value


def _number(params, name):
    value = (params.get(name) or "").strip()
    if not value:
        return None
    if not value.isdigit() or len(value) > 18:
        raise FilterError(name, gettext("%(value)s is not an id (a whole number)") % {
            "value": value[:40]})
    return int(value)


def parse_filters(params):
    """Filters from a query string (a page's or the API's); FilterError names the field."""
    q = (params.get("q") or "").replace("\x00", "").strip()
    if len(q) > 200:
        raise FilterError("q", gettext("search for at most 200 characters"))
    return Filters(q=q, state=_choice(params, "state", STATES),
                   round=_choice(params, "round", ROUNDS), kind=_choice(params, "kind", KINDS),
                   coder=_number(params, "coder"), run=_number(params, "run"),
                   sample=_choice(params, "sample", SAMPLE))


def _assignments(*statuses):
    return Assignment.objects.filter(item=OuterRef("pk"), status__in=statuses)


def _disagreements(**match):
    return StoredDisagreement.objects.filter(item=OuterRef("pk"), **match)


STATE_FILTERS = {
    "pool": lambda: ~Exists(_assignments(ACTIVE, SUBMITTED, SKIPPED)),
    "held": lambda: Exists(_assignments(ACTIVE)),
    "coded": lambda: Exists(_assignments(SUBMITTED)),
    "disagreement": lambda: Exists(_disagreements(decided=False)),
    "decided": lambda: Exists(_disagreements(decided=True)) & ~Exists(_disagreements(
        decided=False)),
    "skipped": lambda: Exists(_assignments(SKIPPED)),
}


def items_for(study, filters):
    """The study's items matching the filters, by id. Excluded items only when asked for."""
    items = Item.objects.filter(study=study)
    if filters.state == "excluded":
        items = items.filter(deleted_at__isnull=False)
    else:
        items = items.filter(deleted_at__isnull=True)
        if filters.state:
            items = items.filter(STATE_FILTERS[filters.state]())
    if filters.q:
        items = items.filter(Q(document__key__icontains=filters.q)
                             | Q(document__title__icontains=filters.q))
    if filters.round:
        items = items.filter(round=filters.round)
    if filters.kind:
        items = items.filter(document__kind=filters.kind)
    if filters.sample:
        items = items.filter(in_reliability_sample=filters.sample == "yes")
    if filters.coder is not None:
        items = items.filter(Exists(Assignment.objects.filter(
            item=OuterRef("pk"), coder_id=filters.coder, status__in=(ACTIVE, SUBMITTED, SKIPPED))))
    if filters.run is not None:
        items = items.filter(import_run_id=filters.run)
    return items.order_by("pk")


def page_of(study, filters, after=None, limit=PAGE):
    """(rows, the `after` of the next page or None): each row an item with its state
    (`row_states`). Three queries whatever the study's size."""
    items = items_for(study, filters).select_related("document").only(
        "pk", "round", "target", "taken", "in_reliability_sample", "deleted_at",
        "excluded_reason", "added_at", "document__key", "document__title", "document__kind")
    if after is not None:
        items = items.filter(pk__gt=after)
    rows = list(items[:limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    row_states(study, rows)
    return rows, (rows[-1].pk if more else None)


def row_states(study, items):
    """Set on each item: `submitted`, `held`, `skipped` (coders), `open_disagreements`,
    `decided_disagreements`, `needed` (the n of "coded k of n") and `state` (key) with
    `state_words`. Two grouped queries over the items given, plus the count of coders
    when a calibration item is among them."""
    ids = [i.pk for i in items]
    work, split = {}, {}
    for item_id, status, n in (Assignment.objects.filter(item_id__in=ids)
                               .values_list("item_id", "status").order_by()
                               .annotate(n=Count("pk"))):
        work[(item_id, status)] = n
    for item_id, decided, n in (StoredDisagreement.objects.filter(item_id__in=ids)
                                .values_list("item_id", "decided").order_by()
                                .annotate(n=Count("pk"))):
        split[(item_id, decided)] = n
    coders = None
    if any(i.round == Item.Round.CALIBRATION for i in items):
        coders = Membership.objects.filter(study=study, role=Role.CODER,
                                           deleted_at__isnull=True).count()
    for item in items:
        item.submitted = work.get((item.pk, SUBMITTED), 0)
        item.held = work.get((item.pk, ACTIVE), 0)
        item.skipped = work.get((item.pk, SKIPPED), 0)
        item.open_disagreements = split.get((item.pk, False), 0)
        item.decided_disagreements = split.get((item.pk, True), 0)
        item.needed = coders if item.round == Item.Round.CALIBRATION else item.target
        item.state = state_of(item)
        item.state_words = state_words(item)
    return items


def state_of(item):
    """The one state a list shows for an item (the first that holds, in this order)."""
    if item.deleted_at is not None:
        return "excluded"
    if item.open_disagreements:
        return "disagreement"
    if item.decided_disagreements:
        return "decided"
    if item.held:
        return "held"
    if item.submitted:
        return "coded"
    if item.skipped:
        return "skipped"
    return "pool"


def state_words(item):
    """The state as a person reads it: "coded 1 of 2", "held by 1 coder, coded 1 of 2"."""
    coded = gettext("coded %(k)s of %(n)s") % {"k": item.submitted, "n": item.needed}
    parts = {
        "excluded": [gettext("excluded")],
        "disagreement": [ngettext("in disagreement on %(n)s question",
                                  "in disagreement on %(n)s questions",
                                  item.open_disagreements) % {"n": item.open_disagreements},
                         coded],
        "decided": [gettext("decided"), coded],
        "held": [gettext("held now"), coded],
        "coded": [coded],
        "skipped": [gettext("skipped"), coded],
        "pool": [gettext("in the pool")],
    }[item.state]
    if item.state in ("disagreement", "decided", "coded") and item.held:
        parts.insert(1, gettext("held now"))
    if item.skipped and item.state != "skipped":
        parts.append(gettext("skipped by %(n)s") % {"n": item.skipped})
    return ", ".join(parts)


def filter_choices(study, name):
    """The coders ([(user id, the name `name` gives them)], in that name's order) and the
    latest import runs to filter by: two small queries."""
    users = {m.user_id: m.user for m in Membership.objects.filter(study=study, role=Role.CODER)
             .select_related("user")}
    coders = sorted(((pk, name(user)) for pk, user in users.items()), key=lambda c: c[1])
    runs = list(ImportRun.objects.filter(study=study).order_by("-pk")[:50])
    return coders, runs

"""The screening workflow: a model labels the whole pool, people code a random sample of
it blind to the model's labels, and a comparison says how far the model can be trusted.

`screening_sample` draws that sample from the items the model labelled. The draw depends
only on the seed and the items' document identifiers (sorted), never on database ids or
row order, so the same labels and seed give the same sample on any database. The size
comes from the planner (coding.agreement.sample_size.units_needed) with the smallest category
share of the model's own labels, unless given. Chosen items may be moved to the front of
the coders' queue; coders code them as any item, and never see the model's labels.

Its refusals are marked for translation, as every refusal made in Python is: a page would
show them in the reader's language; the `screening_sample` command writes them in English,
as every command does (no language is active in a command).
"""

import numpy as np
from django.db import transaction
from django.utils.translation import gettext

from coding.agreement.sample_size import RELIABLE, units_needed
from coding.models import Item, RaterCoding

FRONT = 100  # the queue priority of a screening sample's items


def screening_sample(rater, question, *, size=None, seed=0, alpha_min=RELIABLE):
    """{"size", "planned", "smallest_share", "keys"}: document keys of the sample, sorted."""
    labels = dict(RaterCoding.objects.filter(rater=rater, question_key=question,
                                             item__deleted_at__isnull=True)
                  .values_list("item__document__key", "value"))
    if not labels:
        raise ValueError(gettext("%(rater)s has no imported answers to the question "
                                 "“%(question)s”.") % {"rater": rater.name, "question": question})
    counts = {}
    for value in labels.values():
        counts[str(value)] = counts.get(str(value), 0) + 1
    smallest = min(counts.values()) / len(labels)
    planned = units_needed(alpha_min, min(max(smallest, 1e-6), 0.5)) if len(counts) > 1 else None
    wanted = size if size is not None else planned
    if wanted is None:
        raise ValueError(gettext("Every label is the same, so the planner cannot size the "
                                 "sample: give the sample size."))
    keys = sorted(labels)
    chosen = np.random.default_rng(seed).permutation(len(keys))[:min(wanted, len(keys))]
    return {"size": len(chosen), "planned": planned, "smallest_share": smallest,
            "labels": counts, "keys": sorted(keys[i] for i in chosen)}


@transaction.atomic
def put_in_front(study, keys):
    """Move the sample's items to the front of the coders' queue; how many moved."""
    return Item.objects.alive().filter(study=study, document__key__in=keys).update(
        priority=FRONT)

"""When to stop screening: the recall so far, the stopping rule and the figures of a run.

Pure functions over a sequence of labels in the order records were screened (1 include,
0 exclude), no database.

The stopping rule is Callaghan and Müller-Hansen's hypergeometric test (2020, "Statistical
stopping criteria for automated screening in systematic reviews", Systematic Reviews 9:273),
applied as their "ranked quasi-sampling": the last n records screened are treated as a
random draw from the records that were still unscreened when those n began. The null
hypothesis is that recall is still below the target τ: the study then holds at least
⌊r/τ⌋ + 1 relevant records, r being those found, so at least K = ⌊r/τ⌋ + 1 − (r − k) of
them were among the N' records left before the last n, of which the n drawn held only k.
The chance of k or fewer under that hypothesis is the hypergeometric P(X ≤ k; N', K, n);
the test takes the smallest over every n, and stopping is safe at confidence c when it is
below 1 − c. The assumption: the model ranks relevant records at least as high as random
order would (so the last records screened were no richer than a random draw), which is
conservative for a model that works and wrong for one that ranks relevant records last.

`random_estimate` is the second, assumption-light estimate: records served in random
order (a share of every screener's records, marked so) are a uniform sample of what was
unscreened when each was served; their include rate, with a Clopper-Pearson upper bound,
bounds what is left. The pool only gets poorer as the model takes relevant records first,
so the bound is conservative.
"""

import math

import numpy as np

# scipy.stats is imported in the two functions that use it: with it every web and worker
# process started half a second slower and 60 MB larger (tests/workbench/test_startup.py).

EVERY_WINDOW_UP_TO = 2000
EXTRA_WINDOWS = 400


def stop_test(labels, total, target=0.95, confidence=0.95):
    """{"p", "stop", "window"}: the smallest p-value of the null "recall < target" over every
    window of last records, whether it is below 1 − confidence, and the window that gave it.
    `labels` in screening order; `total` the records in the set, screened or not."""
    seq = np.asarray(labels, dtype=np.int64)
    screened = len(seq)
    if screened == 0 or total <= 0:
        return {"p": 1.0, "stop": False, "window": 0}
    found = int(seq.sum())
    k_all = np.cumsum(seq[::-1])  # includes among the last n, for every n
    n = windows(screened)
    k = k_all[n - 1]
    left = total - (screened - n)  # unscreened when the last n began
    least = math.floor(found / target) + 1  # relevant records under the null, at least
    needed = least - (found - k)  # of them among `left`
    from scipy.stats import hypergeom

    with np.errstate(all="ignore"):
        p = hypergeom.cdf(k, left, np.clip(needed, 0, None), n)
    p = np.where(needed > left, 0.0, p)  # the pool left cannot hold that many: null false
    p = np.nan_to_num(p, nan=1.0)
    best = int(np.argmin(p))
    value = float(min(max(p[best], 0.0), 1.0))
    return {"p": value, "stop": value < 1 - confidence, "window": int(n[best])}


def windows(screened, every_up_to=EVERY_WINDOW_UP_TO, more=EXTRA_WINDOWS):
    """The window lengths tested: every one up to `every_up_to`, then `more` spaced evenly
    on a log scale up to all records. Leaving windows out can only raise the smallest
    p-value, so the test stays on the safe side while a 100,000-record study is fast."""
    head = np.arange(1, min(screened, every_up_to) + 1)
    if screened <= every_up_to:
        return head
    tail = np.unique(np.geomspace(every_up_to + 1, screened, more).astype(np.int64))
    return np.unique(np.concatenate([head, tail, [screened]]))


def random_estimate(found, unscreened, draws, includes, confidence=0.95):
    """Recall estimated from the records served in random order: the point estimate and its
    lower bound at `confidence`; None before any such record was screened."""
    if draws <= 0:
        return None
    from scipy.stats import beta

    rate = includes / draws
    upper = 1.0 if includes >= draws else float(beta.ppf(confidence, includes + 1,
                                                         draws - includes))
    point_left, most_left = unscreened * rate, unscreened * upper
    return {
        "draws": draws, "includes": includes,
        "recall": found / (found + point_left) if found + point_left else 1.0,
        "recall_low": found / (found + most_left) if found + most_left else 1.0,
        "left": point_left, "left_high": most_left,
    }


def since_last_include(labels):
    """Excludes screened since the last include (all of them when none was included)."""
    seq = list(labels)
    for back, value in enumerate(reversed(seq)):
        if value:
            return back
    return len(seq)


def curve(labels):
    """Includes found after each record screened."""
    return np.cumsum(np.asarray(labels, dtype=np.int64))


def figures(labels, total, relevant, recall=0.95, early=0.10):
    """What a simulation reports of one screening order over a fully labelled set: the
    records needed to reach `recall` and all of the relevant records, work saved over
    sampling at that recall (WSS) and the share of relevant records found after screening
    `early` of the set (RRF). `labels` covers the records screened after any priors;
    `total` and `relevant` count what was left to find, priors left out."""
    found = curve(labels)
    wanted = math.ceil(recall * relevant)

    def needed(count):
        hit = np.flatnonzero(found >= count)
        return int(hit[0]) + 1 if len(hit) else None

    at_recall, at_all = needed(wanted), needed(relevant)
    head = int(math.ceil(early * total))
    return {
        "records": total, "relevant": relevant,
        f"records_to_{round(recall * 100)}": at_recall, "records_to_100": at_all,
        f"wss_{round(recall * 100)}": (None if at_recall is None
                                      else (total - at_recall) / total - (1 - recall)),
        f"rrf_{round(early * 100)}": (float(found[min(head, len(found)) - 1]) / relevant
                                     if relevant and len(found) else None),
    }

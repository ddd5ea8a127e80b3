"""The screening model: which unscreened record a screener should read next.

Pure functions over numbers, no database. A record's features are the hashed counts of its
title and abstract words and word pairs (`features`): hashing needs no vocabulary, so the
counts of a record never change and records imported later are appended without
recomputing the others (`coding.screening.rankings` keeps them on disk per study). Each
ranking weights the counts by TF-IDF over the whole study (sublinear term frequency, so a
word repeated in one abstract does not dominate) and fits a linear classifier (a support
vector machine by default) on one screener's own labels, class-balanced because includes
are rare; records are ranked by its decision value, ties broken by a stable hash so the
order is reproducible.

`MODELS` names the rankers on offer; every one follows the same two calls (`fit` on the
labelled rows, `scores` over all rows), so another model can be offered beside the default.
"""

import functools

import numpy as np
from django.utils.translation import gettext

# scikit-learn is imported where a model is made, not with this module: every process
# loads this module (the demo study ranks records), and scikit-learn alone took a second
# and 170 MB of each web and worker process's start (tests/workbench/test_startup.py).

FEATURES = 2**20


@functools.cache
def _hasher():
    from sklearn.feature_extraction.text import HashingVectorizer

    return HashingVectorizer(n_features=FEATURES, ngram_range=(1, 2), alternate_sign=False,
                             norm=None, lowercase=True, token_pattern=r"(?u)\b\w\w+\b")


def features(texts):
    """Hashed counts of each text's words and word pairs: a sparse matrix, one row a text."""
    return _hasher().transform(texts).astype(np.float32).tocsr()


def text_of(fields):
    """The text a model reads of a record: its title and abstract (or body), in that order."""
    return " ".join(str(fields.get(name) or "") for name in ("title", "abstract", "body"))


class Ranker:
    """Fits on labelled rows of a TF-IDF matrix and scores every row."""

    name = ""

    def __init__(self, seed=0):
        self.seed = seed

    def classifier(self):
        raise NotImplementedError

    def prepare(self, counts):
        """The TF-IDF matrix a fit reads: only the columns some record has (a far smaller
        fit), weighted over every row. A replay prepares once and fits many times."""
        from sklearn.feature_extraction.text import TfidfTransformer

        used = np.unique(counts.indices)
        return TfidfTransformer(sublinear_tf=True).fit_transform(counts[:, used]).tocsr()

    def fit_scores(self, weighted, rows, labels):
        """The decision value of every row of a prepared matrix, fitted on `rows` labelled
        `labels` (1 include, 0 exclude; both must occur)."""
        model = self.classifier().fit(weighted[rows], np.asarray(labels))
        if hasattr(model, "decision_function"):
            return model.decision_function(weighted)
        log = model.predict_log_proba(weighted)
        return log[:, 1] - log[:, 0]

    def scores(self, counts, rows, labels):
        return self.fit_scores(self.prepare(counts), rows, labels)


class Logistic(Ranker):
    name = "tfidf-logistic"
    label = "TF-IDF and logistic regression, classes balanced"

    def classifier(self):
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(C=100.0, class_weight="balanced", solver="liblinear",
                                  random_state=self.seed)


class Svm(Ranker):
    name = "tfidf-svm"
    label = "TF-IDF and a linear support vector machine, classes balanced (default)"

    def classifier(self):
        # C = 1: on the shared benchmark set (benchmarks/screening.py) fewer records to 95%
        # recall than ASReview's C = 0.11 with the same features (429 against 480, 5 seeds).
        from sklearn.svm import LinearSVC

        return LinearSVC(C=1.0, class_weight="balanced", random_state=self.seed)


class Sgd(Ranker):
    name = "tfidf-sgd"
    label = "TF-IDF and a linear model by stochastic gradient descent, classes balanced"

    def classifier(self):
        from sklearn.linear_model import SGDClassifier

        return SGDClassifier(loss="modified_huber", alpha=1e-4, class_weight="balanced",
                             random_state=self.seed)


class Bayes(Ranker):
    name = "tfidf-bayes"
    label = "TF-IDF and naive Bayes"

    def classifier(self):
        from sklearn.naive_bayes import MultinomialNB

        return MultinomialNB(alpha=3.822)


MODELS = {cls.name: cls for cls in (Logistic, Svm, Sgd, Bayes)}
DEFAULT = Svm.name


def ranker(name=DEFAULT, seed=0):
    if name not in MODELS:
        raise ValueError(gettext("model: one of %(models)s.") % {"models": ", ".join(MODELS)})
    return MODELS[name](seed)


def order(scores, tiebreak):
    """Row numbers from the highest score down; equal scores by `tiebreak` (a stable hash)."""
    return np.lexsort((np.asarray(tiebreak), -np.asarray(scores)))

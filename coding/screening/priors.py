"""Prior labels from a screening file: the `label_included` column of an ASReview-style CSV,
imported as the answers of an outside rater (never stored with the documents, where coders
would read them), which the study's screening settings may then name as its prior labels
(coding.screening.rankings reads them as every screener's starting labels).

The rows are matched to the study's documents by the key the CSV importer gave them
(ingest.sources.screening_files.record_key) and written through the raters' import
(coding.raters.imports): checked against the codebook, all or nothing, idempotent, each
bad row named by its line.
"""

import csv
import io
import json
from pathlib import Path

from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from coding.models import Rater
from coding.raters import setup as raters
from coding.raters.imports import RaterImportError, import_codings
from coding.screening.setup import DEFAULTS, answers_of, configure, screening_question, settings_of
from ingest.sources.screening_files import record_key

NAME = "prior-labels"


class PriorLabelsError(ValueError):
    """The file cannot give prior labels; the message names the line or column."""


def _opened(source):
    """A text stream of the file: a path on this machine, or an upload's binary stream."""
    if isinstance(source, (str, Path)):
        return open(source, newline="", encoding="utf-8-sig")
    return io.TextIOWrapper(source, encoding="utf-8-sig", newline="")


def prior_rows(source, *, question, include, exclude, rater=NAME, label_column="label_included",
               name=None):
    """The raters' import rows (JSON Lines) of the labelled records of the file (a path or an
    upload's binary stream; `name` for messages), and how many rows were labelled."""
    lines, labelled = [], 0
    path = name or Path(str(source)).name
    with _opened(source) as handle:
        reader = csv.DictReader(handle)
        columns = {(name or "").strip().lower(): name for name in reader.fieldnames or []}
        for needed in ("title", label_column):
            if needed not in columns:
                raise PriorLabelsError(gettext("%(file)s: no column “%(column)s”.")
                                       % {"file": path, "column": needed})
        for line, row in enumerate(reader, start=2):
            raw = (row.get(columns[label_column]) or "").strip()
            if raw == "":
                continue  # not labelled: no prior for this record
            if raw not in ("0", "1", "0.0", "1.0"):
                raise PriorLabelsError(gettext(
                    "%(file)s, line %(line)s: %(column)s is “%(value)s”, not 0 or 1.")
                    % {"file": path, "line": line, "column": label_column,
                       "value": raw[:40]})
            fields = {name: row.get(columns[name]) for name in ("title", "doi", "year")
                      if name in columns}
            lines.append(json.dumps({"item": record_key(fields), "rater": rater,
                                     "question": question,
                                     "value": include if float(raw) else exclude}))
            labelled += 1
    return lines, labelled


def import_priors(study, source, *, question, include, exclude, rater=NAME, user=None,
                  label_column="label_included", dry_run=False, name=None):
    """Import the file's labels as the answers of the outside rater `rater` (made if the
    study has none of that name); the raters' import report."""
    name = name or Path(str(source)).name
    lines, _labelled = prior_rows(source, question=question, include=include, exclude=exclude,
                                  rater=rater, label_column=label_column, name=name)
    if not Rater.objects.filter(study=study, name=rater).exists() and not dry_run:
        try:
            raters.add_rater(study, user, kind=Rater.Kind.OUTSIDE, name=rater,
                             provenance=f"{label_column} of {name}")
        except ValidationError as problem:
            raise PriorLabelsError("; ".join(
                f"{field}: {' '.join(messages)}"
                for field, messages in problem.message_dict.items())) from problem
    try:
        return import_codings(study, io.StringIO("\n".join(lines) + "\n"), "jsonl",
                              dry_run=dry_run)
    except RaterImportError as problem:
        raise PriorLabelsError(str(problem)) from problem


def use_priors(study, source, *, user=None, rater=NAME, exclude=None, name=None):
    """Import a file's labels for the study's screening question (a 1 becomes its first
    include answer, a 0 `exclude`, by default its first answer that does not include) and
    name them the study's prior labels; the import's counts."""
    current = settings_of(study)
    if not current["question"]:
        raise PriorLabelsError(gettext("The study does not screen: choose its screening "
                                       "question first."))
    question = screening_question(study, current["question"])
    exclude = exclude or next(
        (a for a in answers_of(question) if a not in current["include"]), "")
    counts = import_priors(study, source, question=current["question"],
                           include=current["include"][0], exclude=exclude, rater=rater,
                           user=user, name=name).as_dict()["counts"]
    configure(study, **{**{k: current[k] for k in DEFAULTS}, "prior_rater": rater}, user=user)
    return counts

"""The columns of each export shape, described once: names, types, categories, meaning.

The same descriptions drive the writers (CSV, JSON Lines, Parquet), the data
dictionary (datapackage.json, Frictionless Table Schema) and the pandas reader.
"""

from dataclasses import dataclass, field, replace

from coding.access.blinding import KINDS, hidden_fields_for

# How a question's final or coded value stands, in the `__status` / `status` columns.
ANSWERED, NOT_APPLICABLE, MISSING, UNDECIDED = "answered", "not_applicable", "missing", "undecided"
# An item whose independent codings are not all in (or a calibration item, never decided):
# no final value, and nothing for an adjudicator yet; undecided is a disagreement waiting.
PENDING = "pending"
# The screening decision of a record no screener read (a study that screens: coding.screening).
NOT_SCREENED = "not_screened"
# A question the codebook does not send to the adjudicator (free text by default) whose
# coders' answers differ: each answer is in long, none is the final one.
NOT_ADJUDICATED = "not_adjudicated"
STATUS_NOTE = (
    "answered: the value column holds the answer; not_applicable: the question's condition "
    "was not met, the value is empty; missing: the question applied but was not answered, "
    "the value is empty; undecided (wide and decisions only): the coders' answers differ and "
    "no decision is final yet (the review list's open questions); pending (wide only): the "
    "item's independent codings are not all in, or it is a calibration item, so there is no "
    "final value and nothing to decide yet; any other word is a special option of a number "
    "question (e.g. not_reported), the value is empty."
)


DECISION_METHODS = ("unanimous", "single", "consensus", "adjudicated", "not_applicable",
                    "not_adjudicated", "reopened")
WIDE_METHODS = DECISION_METHODS[:-1]  # a reopened question is undecided: no method


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # string, integer, number, boolean, datetime
    description: str
    categories: tuple = ()  # allowed values, in codebook order (ordered when ordinal)
    ordered: bool = False
    extra: dict = field(default_factory=dict, hash=False, compare=False)

    def schema(self):
        """This column in Frictionless Table Schema form."""
        described = {"name": self.name, "type": self.type, "description": self.description}
        if self.type == "datetime":
            described["format"] = "any"
        if self.categories:
            described["constraints"] = {"enum": list(self.categories)}
            described["categories"] = list(self.categories)
            described["categoriesOrdered"] = self.ordered
        return {**described, **self.extra}


def s(name, description, **kwargs):
    return Field(name, "string", description, **kwargs)


# In CSV, a text that reads as a number is read as one by pandas, R and spreadsheets
# (2501.90100 becomes 2501.901). A document key that would is written with this prefix
# in CSV alone, the form arXiv itself gives for citing; coding.dataset.load (load.py in
# every bundle) takes it off, so every format loads the same.
KEY_PREFIX = "arXiv:"


def key_field(description):
    return s("document_key", description + " In CSV an arXiv identifier that reads as a "
             "number is written arXiv:2501.90100, so that pandas, R and spreadsheets read "
             "the column as text; load.py gives it back bare, as Parquet and JSON Lines "
             "have it.", extra={"csvTextPrefix": KEY_PREFIX})


ITEM_FIELDS = [
    Field("item_id", "integer", "The item's id in the study."),
    key_field("arXiv identifier without version, or owner/repo#number."),
    s("kind", "paper or thread.", categories=("paper", "thread")),
    s("source", "Where the document was imported from (arxiv, github, demo …)."),
    s("title", "Title as imported (untrusted text, stored as received)."),
    s("url", "Link to the source."),
    Field("published", "datetime", "First version or opening date (UTC)."),
    Field("updated", "datetime", "Last update known at the snapshot (UTC)."),
    s("round", "calibration or main.", categories=("calibration", "main")),
    Field("in_reliability_sample", "boolean", "Coded by the study's overlap of coders."),
    Field("snapshot", "integer", "Number of the frozen snapshot that was coded."),
    s("snapshot_sha256", "SHA-256 of the snapshot's canonical JSON."),
    s("abstract", "Paper abstract."),
    s("authors", "Authors, joined with '; '."),
    s("affiliations", "Affiliations, joined with '; '."),
    s("author_records", "One record per author, in order, as JSON: name (derived from the parts "
      "when the source gives them), keyname, forenames, suffix, that author's own affiliations "
      "(an empty list: the source names none for this author) and orcid (null when not given)."),
    s("categories", "arXiv categories, joined with '; '."),
    s("included_in", "The imported metadata's own included_in field, as the source gave it, "
      "joined with '; ' (blinded from coders); empty when inclusion comes from the method "
      "tracker, whose finding is frameworks_landed."),
    s("repository", "Thread repository (owner/name)."),
    Field("number", "integer", "Thread number in its repository."),
    s("thread_type", "issue or pull_request."),
    s("state", "Thread state at the snapshot (blinded from coders)."),
    Field("merged", "boolean", "Pull request merged (blinded from coders)."),
    s("labels", "Thread labels, joined with '; ' (blinded from coders)."),
    Field("closed_at", "datetime", "When the thread was closed (blinded from coders)."),
    s("state_reason", "Why the thread was closed (completed, not_planned, duplicate …); "
      "withheld wherever state is."),
    Field("merged_at", "datetime", "When the pull request was merged; withheld wherever merged is."),
    s("head_label", "Pull request head as owner:branch."),
    s("head_sha", "Pull request head commit."),
    s("head_repo", "Pull request head repository (owner/name); empty when the fork was deleted."),
    Field("head_repo_deleted", "boolean", "The pull request's head repository (its fork) was deleted."),
    s("base_ref", "Branch the pull request targets."),
    s("review_states", "States of the pull request's submitted reviews in time order (APPROVED, "
      "CHANGES_REQUESTED, COMMENTED, DISMISSED), joined with '; '."),
    Field("n_review_comments", "integer", "Review comments (on a file and line) in the thread."),
    s("category", "Discussion category."),
    Field("answered", "boolean", "The discussion has a chosen answer."),
    Field("n_posts", "integer", "Posts in the thread snapshot."),
    s("frameworks_landed", "Frameworks whose main branch gained an option of a method this "
      "paper is the source of, joined with '; ' (from the git histories; blinded from coders)."),
    Field("first_landing", "datetime", "The earliest such landing (UTC)."),
    Field("days_to_first_landing", "integer",
          "Days from the paper's first version to its method's first landing."),
]

# The content key each column of the items table is read from. A column whose key is
# blinded for the requester's roles is withheld (blinding.hidden_fields_for, the same
# projection as the pages). Columns not named here come from the study's own records
# (ids, kind, round, snapshot number) and are never blinded.
ITEM_SOURCES = {
    "title": "title", "url": "url", "published": "published", "updated": "updated",
    "abstract": "abstract", "authors": "authors", "affiliations": "affiliations",
    "categories": "categories", "included_in": "included_in", "repository": "repository",
    "number": "number", "thread_type": "thread_type", "state": "state", "merged": "merged",
    "labels": "labels", "closed_at": "closed_at", "n_posts": "posts",
    "author_records": "author_records", "state_reason": "state_reason", "merged_at": "merged_at",
    "head_label": "head", "head_sha": "head", "head_repo": "head", "head_repo_deleted": "head",
    "base_ref": "base", "review_states": "posts", "n_review_comments": "posts",
    "category": "category", "answered": "answered",
    "frameworks_landed": "included_in", "first_landing": "first_landing",
    "days_to_first_landing": "days_to_first_landing",
}
# A hash of the whole snapshot, blinded fields included: knowing the rest of the content,
# one could find a blinded value with few possibilities (a thread's state) by trying each.
# Withheld wherever anything of the item is.
WHOLE_SNAPSHOT = ("snapshot_sha256",)


def withheld_item_columns(study, roles):
    """{column of the items table: the kinds of item it is withheld for} for these roles."""
    withheld = {}
    for kind in KINDS:
        hidden = hidden_fields_for(study, roles, kind)
        if not hidden:
            continue
        for column in [c for c, key in ITEM_SOURCES.items() if key in hidden] + list(WHOLE_SNAPSHOT):
            withheld.setdefault(column, set()).add(kind)
    return {column: tuple(k for k in KINDS if k in kinds) for column, kinds in withheld.items()}


def item_fields(withheld):
    """The items table's columns with the withheld ones left out: a column withheld for
    every kind is not there at all (so the data dictionary describes only what is there);
    one withheld for some kinds stays, empty for those, and says so."""
    fields = []
    for column in ITEM_FIELDS:
        kinds = withheld.get(column.name, ())
        if set(kinds) >= set(KINDS):
            continue
        if kinds:
            column = replace(column, description=f"{column.description} Empty for "
                             f"{' and '.join(k + 's' for k in kinds)}: blinded, and withheld "
                             "from whoever asked for this export.")
        fields.append(column)
    return fields


LONG_FIELDS = [
    Field("item_id", "integer", "The item's id in the study."),
    key_field("arXiv identifier or owner/repo#number."),
    s("coder", "Pseudonymous coder (coder_1, coder_2 …, stable within the study)."),
    s("round", "calibration or main.", categories=("calibration", "main")),
    Field("codebook_version", "integer", "Codebook version the coding answered."),
    Field("revision", "integer", "1 for the first submission; each revision is kept."),
    s("phase", "independent (feeds reliability), informed (after its coder could see a decision "
      "on the item) or reconciliation (after discussion); only independent feeds reliability.",
      categories=("independent", "informed", "reconciliation")),
    Field("independent", "boolean", "This revision is the coder's last independent one: "
          "the coding reliability is computed on."),
    Field("assisted", "boolean", "Made after its coder was shown a model's suggested answer "
          "on this item (an assisted round, issue 16): never independent, never in "
          "reliability. Empty for raters."),
    Field("submitted_at", "datetime", "When this revision was submitted (UTC)."),
    Field("seconds_spent", "integer", "Seconds the coder spent on this revision."),
    Field("unsure", "boolean", "The coder flagged the item as unsure."),
    s("question", "Question key."),
    s("value", "The answer as text; a multiple-choice answer is a JSON list; a number "
      "question's special option (e.g. not_reported) is written as its word."),
    s("status", "answered: value holds the answer; not_applicable: the question's condition "
      "was not met, value empty; missing: the question applied but was not answered, value empty.",
      categories=(ANSWERED, NOT_APPLICABLE, MISSING)),
    s("rater_kind", "coder: a coding of the study's own coders (coder holds the pseudonym); "
      "model, outside or person: an imported answer of a rater that is not a coder (coder holds "
      "the rater's name; phase empty; revision counts the imports that changed it; "
      "submitted_at is when the rater labelled it, else when it was imported). Raters never "
      "feed reliability.", categories=("coder", "model", "outside", "person")),
    s("rater_provenance", "For raters: the model version, the prompt or configuration hash and "
      "the owner's account of where the labels come from; empty for coders."),
]

DECISION_FIELDS = [
    Field("item_id", "integer", "The item's id in the study."),
    key_field("arXiv identifier or owner/repo#number."),
    s("question", "Question key."),
    Field("revision", "integer", "1 for the first decision; every revision is kept."),
    Field("current", "boolean", "This revision is the final value now."),
    s("value", "The decided value as text; a multiple-choice value is a JSON list; empty when "
      "every coder left the question unanswered (missing), and for not_applicable and "
      "reopened."),
    s("method", "How the value was reached. not_applicable: the decision on the question its "
      "condition names rules it out (recorded as that decision's consequence, by whoever made "
      "it); reopened: that decision changed and the question applies again, so it waits for a "
      "decision of its own; not_adjudicated: the codebook leaves the question to the coders "
      "and their answers differ (each is in long).", categories=DECISION_METHODS),
    s("decided_by", "Pseudonymous adjudicator, empty for automatic decisions."),
    s("rationale", "The adjudicator's reason."),
    Field("decided_at", "datetime", "When this revision was recorded (UTC)."),
]


# A coding revision's own columns, first in the evidence and notes tables as in long.
_REVISION = [
    Field("item_id", "integer", "The item's id in the study."),
    key_field("arXiv identifier or owner/repo#number."),
    s("coder", "Pseudonymous coder (coder_1, coder_2 …, stable within the study)."),
    s("round", "calibration or main.", categories=("calibration", "main")),
    Field("revision", "integer", "The coding revision (as in long): 1 for the first submission."),
    s("phase", "independent, informed or reconciliation, as in long.",
      categories=("independent", "informed", "reconciliation")),
    Field("submitted_at", "datetime", "When this revision was submitted (UTC)."),
]

EVIDENCE_FIELDS = [
    *_REVISION,
    s("question", "Question key the quote supports."),
    s("field", "The item's field the quote is from: title, abstract or posts.N.body (the "
      "N-th post of a thread, from 0). A quote from a field withheld from the reader of the "
      "export is left out, as the field is."),
    Field("start", "integer", "Where the quote starts in the field's text as imported, in "
          "characters (Unicode code points) from 0."),
    Field("end", "integer", "Where the quote ends in the field's text (exclusive)."),
    s("quote", "The quoted text as the coder selected it (untrusted text)."),
]

NOTE_FIELDS = [
    *_REVISION,
    s("note", "The coder's note on this revision, as written (untrusted text)."),
]


def wide_fields(version, screening_question=""):
    """One row per item: the final value of each question of this codebook version; the
    study's screening decision question (if it screens) may also be not_screened."""
    fields = [
        Field("item_id", "integer", "The item's id in the study."),
        key_field("arXiv identifier or owner/repo#number."),
        s("round", "calibration or main.", categories=("calibration", "main")),
        Field("in_reliability_sample", "boolean", "Coded by the study's overlap of coders."),
    ]
    for question in version.questions.prefetch_related("options"):
        fields += question_fields(question, screening=question.key == screening_question)
    return fields


def question_fields(question, screening=False):
    options = [o.value for o in question.options.all()]
    about = f"{question.text} ({question.get_kind_display().lower()}, {question.level})"
    if question.kind == "multiple":
        columns = [Field(f"{question.key}__{o.value}", "boolean", f"{about}: {o.label} chosen.")
                   for o in question.options.all()]
    elif question.kind == "number":
        columns = [Field(question.key, "number", about)]
    elif question.kind == "single":
        columns = [s(question.key, about, categories=tuple(options),
                     ordered=question.level == "ordinal")]
    elif question.kind == "yes_no":
        columns = [s(question.key, about, categories=("yes", "no"))]
    else:
        columns = [s(question.key, about)]
    statuses = (ANSWERED, NOT_APPLICABLE, MISSING, UNDECIDED, PENDING,
                *(() if question.is_adjudicated else (NOT_ADJUDICATED,)),
                *((NOT_SCREENED,) if screening else ()),
                *(options if question.kind == "number" else ()))
    return columns + [
        s(f"{question.key}__status", f"How {question.key} stands. {STATUS_NOTE}"
          + ("" if question.is_adjudicated else " not_adjudicated: the codebook does not send "
             "this question to the adjudicator and the coders' answers differ; each is in "
             "long, none is final.")
          + (" not_screened: the study's screening decision, and no screener read this "
             "record (screening stopped, or has not reached it)." if screening else ""),
          categories=statuses),
        s(f"{question.key}__method", f"How the final {question.key} was reached; empty if "
          "undecided; not_applicable when a decision on the question its condition names "
          "rules it out; not_adjudicated when the codebook leaves it to the coders and their "
          "answers differ.", categories=WIDE_METHODS),
    ]

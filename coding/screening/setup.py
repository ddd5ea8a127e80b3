"""A study's screening settings: which question is the screening decision and how the queue
orders records for it.

Kept on `Study.screening` (a JSON object; empty when the study does not screen):
- `question`: the key of a single-choice, multiple-choice or yes/no question of the study's
  codebook; `include`: the answers to it that mean include (yes/no answers are "yes"/"no");
- `model`: a ranker of coding.screening.model.MODELS; `random_share`: the share of records
  served in random order for the recall estimate (0–0.5, 5% by default);
- `target_recall` and `confidence`: the stopping rule's (coding.screening.stopping);
- `prior_rater`: the outside rater whose answers are the prior labels (a file's
  `label_included`), or blank;
- `stopped`: the owner's stop, with who, when and the estimate at that moment.
"""

from django.utils.translation import gettext

from coding.access.archive import check_open
from coding.access.audit import record, target_of
from coding.models import CodebookVersion, Question, Rater
from coding.screening.model import DEFAULT, MODELS

DEFAULTS = {"question": "", "include": [], "model": DEFAULT, "random_share": 0.05,
            "target_recall": 0.95, "confidence": 0.95, "prior_rater": ""}
KINDS = (Question.Kind.SINGLE, Question.Kind.MULTIPLE, Question.Kind.YES_NO)


class SettingsError(ValueError):
    """A refused setting; `field` names it (the message starts with it too)."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


def settings_of(study):
    """The study's screening settings with the defaults filled in."""
    return {**DEFAULTS, **(study.screening or {})}


def answer_word(value):
    """An answer as the include list names it: yes/no for booleans, else its text."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def is_include(value, include):
    chosen = value if isinstance(value, list) else [value]
    return any(answer_word(v) in include for v in chosen)


def screening_question(study, key):
    """The question `key` in the study's newest codebook version that has it, or None."""
    versions = (CodebookVersion.objects.filter(codebook__study=study, questions__key=key)
                .order_by("-published_at", "-pk"))
    version = versions.first()
    if version is None:
        return None
    return version.questions.filter(key=key).prefetch_related("options").first()


def answers_of(question):
    if question.kind == Question.Kind.YES_NO:
        return ["yes", "no"]
    return [option.value for option in question.options.all()]


def configure(study, *, question, include, model=DEFAULT, random_share=0.05,
              target_recall=0.95, confidence=0.95, prior_rater="", user=None):
    """Turn screening on (or change its settings); a refusal names the field (SettingsError)."""
    check_open(study)
    found = screening_question(study, question)
    if found is None:
        raise SettingsError("question", gettext(
            "question: the study's codebook has no question “%(key)s”.") % {"key": question})
    if found.kind not in KINDS:
        raise SettingsError("question", gettext(
            "question: “%(key)s” is not a choice or yes/no question; a screening decision "
            "must be one.") % {"key": question})
    include = sorted({str(v) for v in include})
    if not include or set(include) - set(answers_of(found)):
        raise SettingsError("include", gettext(
            "include: name the answers of “%(key)s” that mean include, among: %(answers)s.")
            % {"key": question, "answers": ", ".join(answers_of(found))})
    if model not in MODELS:
        raise SettingsError("model", gettext("model: one of %(models)s.")
                            % {"models": ", ".join(MODELS)})
    checks = (("random_share", random_share, 0.0, 0.5),
              ("target_recall", target_recall, 0.5, 1.0), ("confidence", confidence, 0.5, 0.999))
    for name, value, low, high in checks:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not low <= value <= high:
            raise SettingsError(name, gettext("%(field)s: a number from %(low)s to %(high)s.")
                                % {"field": name, "low": low, "high": high})
    if prior_rater and not Rater.objects.filter(study=study, name=prior_rater).exists():
        raise SettingsError("prior_rater", gettext(
            "prior_rater: the study has no rater “%(name)s”.") % {"name": prior_rater})
    before = settings_of(study)
    study.screening = {**(study.screening or {}), "question": question, "include": include,
                       "model": model, "random_share": float(random_share),
                       "target_recall": float(target_recall), "confidence": float(confidence),
                       "prior_rater": prior_rater}
    study.save(update_fields=["screening"])
    after = settings_of(study)
    record(user, study, "screening.configure", target_of("study", name=study.name),
           **{key: {"from": before[key], "to": after[key]} for key in DEFAULTS
              if before[key] != after[key]})
    return settings_of(study)

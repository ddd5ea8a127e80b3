"""A codebook's texts in other languages, kept with its version.

A spec (coding.codebooks.spec) may carry, beside its questions:

    "translations": {"zh-hans": {"questions": {
        "label": {"text": "…", "definition": "…", "unit": "…",
                  "options": {"rl_method": {"label": "…", "definition": "…",
                                            "examples": "…", "counter_examples": "…"}}}}}}

by language code (one of settings.LANGUAGES), question key and option value: a translator
writes one block per language and never touches what codings store. Only texts a person
reads are translated; keys and values stay as they are, so codings, exports and agreement
never see a translated word. Coders read their language with the original one click away
(coding/_question.html).
"""

from django.conf import settings
from django.utils.translation import gettext

QUESTION_TEXTS = ("text", "definition", "unit")
OPTION_TEXTS = ("label", "definition", "examples", "counter_examples")


def _languages():
    return [code for code, _name in settings.LANGUAGES]


def check(translations, questions, err, text):
    """Report each problem of a spec's `translations` with `err(path, message)`; `text`
    checks one translated text as the codebook's own (type, length, storable)."""
    if translations in (None, {}):
        return
    if not isinstance(translations, dict):
        err("translations", gettext('an object of languages: {"zh-hans": {"questions": {…}}}'))
        return
    by_key = {q["key"]: q for q in questions
              if isinstance(q, dict) and isinstance(q.get("key"), str)}
    for code, block in translations.items():
        at = f"translations.{code}"
        if code not in _languages():
            err(at, gettext("unknown language %(code)r: one of %(codes)s")
                % {"code": code, "codes": ", ".join(_languages())})
        elif not isinstance(block, dict) or set(block) - {"questions"}:
            err(at, gettext('a language holds "questions" only: {"questions": {key: {…}}}'))
        elif not isinstance(block.get("questions", {}), dict):
            err(f"{at}.questions", gettext("an object of question keys"))
        else:
            for key, texts in block.get("questions", {}).items():
                _question(texts, by_key.get(key), key, f"{at}.questions.{key}", err, text)


def _question(texts, question, key, at, err, text):
    if question is None:
        err(at, gettext("no question %(key)r in this codebook") % {"key": key})
        return
    if not isinstance(texts, dict):
        err(at, gettext("an object of texts: text, definition, unit, options"))
        return
    for field in sorted(set(texts) - {*QUESTION_TEXTS, "options"}):
        err(f"{at}.{field}", gettext("not a text of a question that can be translated"))
    for field in QUESTION_TEXTS:
        if field in texts:
            text(texts, field, f"{at}.{field}", err)
    options = texts.get("options", {})
    if not isinstance(options, dict):
        err(f"{at}.options", gettext("an object of option values"))
        return
    listed = question.get("options") if isinstance(question.get("options"), list) else []
    values = {o["value"] for o in listed if isinstance(o, dict) and isinstance(o.get("value"), str)}
    for value, option_texts in options.items():
        where = f"{at}.options.{value}"
        if value not in values:
            err(where, gettext("no option %(value)r in question %(key)r")
                % {"value": value, "key": key})
        elif not isinstance(option_texts, dict):
            err(where, gettext("an object of texts: label, definition, examples, "
                              "counter_examples"))
        else:
            for field in sorted(set(option_texts) - set(OPTION_TEXTS)):
                err(f"{where}.{field}", gettext("not a text of an option that can be "
                                                "translated"))
            for field in OPTION_TEXTS:
                if field in option_texts:
                    text(option_texts, field, f"{where}.{field}", err)


def normalized(translations):
    """Valid translations without empty texts, options, questions or languages, in the
    spec's key order: what a version keeps."""
    kept = {}
    for code, block in (translations or {}).items():
        questions = {}
        for key, texts in block.get("questions", {}).items():
            q = {f: texts[f] for f in QUESTION_TEXTS if texts.get(f)}
            options = {value: {f: o[f] for f in OPTION_TEXTS if o.get(f)}
                       for value, o in (texts.get("options") or {}).items()}
            options = {value: o for value, o in options.items() if o}
            if options:
                q["options"] = options
            if q:
                questions[key] = q
        if questions:
            kept[code] = {"questions": questions}
    return kept


def pruned(translations, spec):
    """The translations of questions and options the spec still has: what an editor that
    does not show translations keeps when it saves (a removed option takes its own)."""
    questions = {}
    for q in spec.get("questions") if isinstance(spec.get("questions"), list) else []:
        if isinstance(q, dict) and isinstance(q.get("key"), str):
            options = q.get("options") if isinstance(q.get("options"), list) else []
            questions[q["key"]] = {o.get("value") for o in options
                                   if isinstance(o, dict) and isinstance(o.get("value"), str)}
    kept = {}
    for code, block in (translations or {}).items():
        kept_questions = {}
        for key, texts in block.get("questions", {}).items():
            if key not in questions:
                continue
            texts = dict(texts)
            if "options" in texts:
                texts["options"] = {v: o for v, o in texts["options"].items()
                                    if v in questions[key]}
            kept_questions[key] = texts
        kept[code] = {"questions": kept_questions}
    return normalized(kept)


def apply_to_questions(questions, language):
    """`apply` for the questions of a list page (review list, feedback), which may come from
    several versions: each version's translations read once, in one query for the page."""
    from coding.models import CodebookVersion  # models import this module's checks

    by_version = {}
    for question in questions:
        by_version.setdefault(question.version_id, {})[id(question)] = question
    versions = CodebookVersion.objects.only("translations").in_bulk(list(by_version))
    for pk, found in by_version.items():
        apply(versions[pk], found.values(), language)


def label(version, key, text, language):
    """A question's text in `language` where the version has it, else as written."""
    block = (version.translations or {}).get(language, {}).get("questions", {})
    return block.get(key, {}).get("text") or text


def apply(version, questions, language):
    """Give each question and option of the version its texts in `language` (`.tr`, a
    dict, empty where there is none), for the coding page to show beside the original."""
    block = (version.translations or {}).get(language, {}).get("questions", {})
    for question in questions:
        texts = block.get(question.key, {})
        question.tr = texts
        options = texts.get("options", {})
        for option in question.options.all():
            option.tr = options.get(option.value, {})
    return bool(block)

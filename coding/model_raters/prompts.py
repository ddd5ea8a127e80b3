"""What a model rater is sent: a prompt built from the codebook version and the item as the
coders see it, and the JSON schema its answer must follow.

The prompt has two messages. The system message is the codebook version in words (each
question with its definition, how to answer it, its options with their definitions,
examples and counter-examples, the condition that asks it, the special answers a number
question takes) and the answer's format; it depends only on the version and the rater's
settings, and its hash (`prompt_hash`) names the prompt template in every call's
provenance. The user message is the item: its snapshot through the coders' projection
(coding.access.blinding.coder_view), so blinded fields are never sent, unless the owner
turned `send_blinded` on, when the owners' projection is used and the preview says so.

The answer is one JSON object: each question's key with its answer (null where a
condition does not ask the question) and "evidence", each question's key with a short
quote or null. `answer_schema` is that object's JSON schema, derived from the version: it
goes to the endpoint as structured output (`response_format` json_schema) or, for servers
without it, into the prompt (json_object or text). Whatever the server did with it, the
answer is read by `read_answer` and checked by the same function as a coder's submission
(coding.codebooks.versions.check_values); a problem is named per question.

`request_for` is the exact request body; `call_key` its cache key: the hash of the
endpoint, the body (model, parameters, both messages) and the replicate number, so a
change to any of them is a new call and the same request is never paid for twice.
"""

import hashlib
import json
import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext

from coding.access.blinding import OWNER_LEVEL, coder_view, view_for
from coding.codebooks.versions import YES_NO, check_values, questions_with_options
from coding.models import Question

TEMPLATE_VERSION = "1"
EVIDENCE = "evidence"
QUOTE_MAX = 500
# Fields of an item shown first and in this order; the rest follow as the snapshot has them.
LEADING = ("kind", "key", "title", "url", "abstract", "body")
FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def _names(question):
    return [o.value for o in question.options.all()]


def question_schema(question):
    """The JSON schema of one question's answer; null is allowed (not asked, or unknown)."""
    values = _names(question)
    kind = question.kind
    if kind == Question.Kind.SINGLE:
        return {"type": ["string", "null"], "enum": [*values, None]}
    if kind == Question.Kind.YES_NO:
        return {"type": ["string", "null"], "enum": [*YES_NO, None]}
    if kind == Question.Kind.MULTIPLE:
        return {"type": ["array", "null"], "items": {"type": "string", "enum": values}}
    if kind == Question.Kind.NUMBER:
        number = {"type": "number"}
        if question.min_value is not None:
            number["minimum"] = question.min_value
        if question.max_value is not None:
            number["maximum"] = question.max_value
        choices = [number, {"type": "null"}]
        if values:
            choices.insert(1, {"type": "string", "enum": values})
        return {"anyOf": choices}
    return {"type": ["string", "null"]}


def answer_schema(version):
    """The answer's JSON schema: every question's key and "evidence", all required (as
    strict structured output wants), nothing else."""
    questions = questions_with_options(version)
    keys = [q.key for q in questions]
    return {
        "type": "object",
        "properties": {**{q.key: question_schema(q) for q in questions},
                       EVIDENCE: {"type": "object",
                                  "properties": {k: {"type": ["string", "null"]} for k in keys},
                                  "required": keys, "additionalProperties": False}},
        "required": [*keys, EVIDENCE],
        "additionalProperties": False,
    }


def _how_to_answer(question):
    kind = question.kind
    if kind == Question.Kind.SINGLE:
        return "one option's value"
    if kind == Question.Kind.MULTIPLE:
        alone = [o.value for o in question.options.all() if o.exclusive]
        return ("a list of option values" + (
            f"; {', '.join(alone)} only alone, never with another option" if alone else ""))
    if kind == Question.Kind.YES_NO:
        return '"yes" or "no"'
    if kind == Question.Kind.NUMBER:
        bounds = []
        if question.min_value is not None:
            bounds.append(f"at least {question.min_value:g}")
        if question.max_value is not None:
            bounds.append(f"at most {question.max_value:g}")
        how = "a number" + (f" ({', '.join(bounds)})" if bounds else "")
        if question.unit:
            how += f", in {question.unit}"
        if question.options.all():
            how += ", or one of the special answers below"
        return how
    return "free text"


def codebook_text(version):
    """The codebook version in words, one question after another."""
    lines = [f"Codebook: {version.codebook.name}, version {version.number}."]
    if version.codebook.description:
        lines.append(version.codebook.description.strip())
    for n, question in enumerate(questions_with_options(version), start=1):
        lines += ["", f"{n}. {question.text.strip()} (key: {question.key})"]
        if question.definition:
            lines.append(f"   Definition: {question.definition.strip()}")
        lines.append(f"   Answer: {_how_to_answer(question)}.")
        if question.show_if:
            asked = ", ".join(str(v) for v in question.show_if["in"])
            lines.append(f"   Asked only when {question.show_if['question']} is {asked}; "
                         "otherwise answer null.")
        elif not question.required:
            lines.append("   May be left unanswered (null).")
        options = list(question.options.all())
        if options:
            lines.append("   Special answers:" if question.kind == Question.Kind.NUMBER
                         else "   Options:")
        for option in options:
            line = f"   - {option.value}: {option.label}"
            if option.definition:
                line += f". {option.definition.strip()}"
            lines.append(line)
            if option.examples:
                lines.append(f"     Examples: {option.examples.strip()}")
            if option.counter_examples:
                lines.append(f"     Not this option: {option.counter_examples.strip()}")
    return "\n".join(lines)


FORMAT = (
    "Answer with one JSON object and nothing else. Give each question's key with its answer "
    "(null for a question that is not asked), and \"evidence\": an object giving each "
    "question's key a short quote from the document that supports the answer, or null.")


def system_message(machine, version):
    parts = ["You code documents for a research study as a trained coder does: read the "
             "document, then answer each question of the codebook below by its definitions."]
    if machine.instructions:
        parts.append(machine.instructions)
    parts += [codebook_text(version), FORMAT]
    if machine.output != "json_schema":
        parts.append("The object follows this JSON schema:\n"
                     + json.dumps(answer_schema(version), ensure_ascii=False, sort_keys=True))
    return "\n\n".join(parts)


def _value_text(value):
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def item_text(content):
    """The item's fields as text, the leading ones first, posts one after another."""
    lines = []
    keys = [k for k in LEADING if k in content] + [k for k in content if k not in LEADING]
    for key in keys:
        value = content[key]
        if value in (None, "", [], {}):
            continue
        if key == "posts" and isinstance(value, list):
            lines.append("posts:")
            for n, post in enumerate(value):
                if not isinstance(post, dict):
                    continue
                head = " ".join(str(post.get(k)) for k in ("kind", "author", "created")
                                if post.get(k))
                lines.append(f"[post {n}] {head}".rstrip())
                lines.append(str(post.get("body") or ""))
                rest = {k: v for k, v in post.items()
                        if k not in ("kind", "author", "created", "body") and v not in
                        (None, "", [], {})}
                if rest:
                    lines.append(_value_text(rest))
            continue
        lines.append(f"{key}: {_value_text(value)}")
    return "\n".join(lines)


def content_sent(machine, item):
    """The item's content as the model receives it: the coders' view unless the owner lets
    the model see blinded fields."""
    content = item.snapshot.content
    if machine.send_blinded:
        return view_for(item.study, OWNER_LEVEL, content)
    return coder_view(item.study, content)


def withheld(machine, item):
    """The content keys left out of what is sent (the preview lists them)."""
    if machine.send_blinded:
        return []
    return sorted(set(item.snapshot.content) - set(coder_view(item.study,
                                                               item.snapshot.content)))


def request_for(machine, version, item, system=None):
    """The exact chat completions request body for this item."""
    body = {
        "model": machine.model,
        "messages": [
            {"role": "system", "content": system or system_message(machine, version)},
            {"role": "user", "content": "Document:\n" + item_text(content_sent(machine, item))},
        ],
        "temperature": machine.temperature,
        "max_tokens": machine.max_tokens,
    }
    if machine.seed is not None:
        body["seed"] = machine.seed
    if machine.output == "json_schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": "coding", "strict": True, "schema": answer_schema(version)}}
    elif machine.output == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def _digest(value):
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True,
                                     separators=(",", ":")).encode()).hexdigest()


def prompt_hash(machine, version, system=None):
    """The hash of everything item-independent in the request: the prompt template."""
    return _digest({"template": TEMPLATE_VERSION, "system": system or system_message(
        machine, version), "schema": answer_schema(version), "output": machine.output})


def call_key(machine, body, replicate=0):
    """The cache key of a call: endpoint, request body, replicate."""
    return _digest({"endpoint": machine.base_url, "body": body, "replicate": replicate})


class InvalidAnswer(ValueError):
    """The model's answer cannot be read or fails the codebook's checks: `reason` says how."""


def read_answer(version, text):
    """({question key: checked value}, {question key: quote}) from the answer's text, or
    InvalidAnswer naming what is wrong."""
    raw = (text or "").strip()
    if fenced := FENCE.match(raw):
        raw = fenced.group(1)
    try:
        answer = json.loads(raw)
    except ValueError as exc:
        raise InvalidAnswer(gettext("the answer is not JSON (%(error)s)")
                            % {"error": str(exc)[:120]}) from None
    if not isinstance(answer, dict):
        raise InvalidAnswer(gettext("the answer is not a JSON object"))
    evidence = answer.pop(EVIDENCE, None)
    values = {key: value for key, value in answer.items() if value is not None}
    try:
        checked = check_values(version, values, complete=True)
    except ValidationError as exc:
        problems = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
        raise InvalidAnswer("; ".join(f"{key}: {' '.join(messages)}" if key else
                                      " ".join(messages) for key, messages in
                                      sorted(problems.items()))) from None
    quotes = {}
    if isinstance(evidence, dict):
        quotes = {key: quote.strip()[:QUOTE_MAX] for key, quote in evidence.items()
                  if key in checked and isinstance(quote, str) and quote.strip()}
    return checked, quotes

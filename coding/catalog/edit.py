"""Editing the method catalog and frameworks: the one place that checks and writes them.

The catalog page, the API and `manage.py catalog` all call these functions. Each checks
all of its input first and raises Django's `ValidationError({field: [messages]})`, so
every door reports the same located errors; then it writes and audits in one transaction.

Landings are found by scanning, never typed in. A change that takes away what a landing
was found with (its method, its framework, the option name) removes the landing too, but
only when confirmed: without `confirm` it raises `NeedsConfirmation` listing what would
go. Names a scan has not searched through the whole history are searched in full at the
next scan (`landings.scan_framework`); removing a landing also forgets that the method's
other names in that framework were searched, so the next scan finds its first landing
again from the names that are left.
"""

import re

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from coding.access import audit
from coding.access.limits import BIDI_CONTROLS
from coding.catalog import names as landings_names
from coding.catalog.landings import first_public as first_public_date
from coding.models import Framework, FrameworkScan, Landing, Method, OptionName
from ingest.sources.papers import ARXIV_ID

FIRST_PUBLIC = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")
# GitHub's rules: an owner of up to 39 letters, digits and inner hyphens; a name of letters,
# digits, '.', '_' and '-'.
REPOSITORY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}$")
GITHUB_URL = re.compile(r"^(?:https?://)?(?:www\.)?github\.com/([^/]+/[^/]+?)(?:\.git)?/?$")
# What `git check-ref-format` refuses in a branch name (a leading '-' would read as an option).
BAD_BRANCH = re.compile(r"^[-/.]|\.\.|//|@\{|[/.]$|\.lock(/|$)|/\.|[\x00-\x20\x7f~^:?*\[\\]")
CONTROLS = re.compile(r"[\x00-\x1f\x7f]")
OPTION_NAME_MAX = 200
# The identifier part of a catalog name: a flag's leading dashes and dotted config paths.
OPTION_KEY = re.compile(r"-{0,2}[A-Za-z0-9_][A-Za-z0-9_.-]*")


class NeedsConfirmation(Exception):
    """The change would remove landings; `removes` says what, one line each."""

    def __init__(self, removes):
        self.removes = list(removes)
        super().__init__(_("This also removes: %(removes)s")
                         % {"removes": "; ".join(self.removes)})


# --- checks: each returns the cleaned value or raises ValueError with the reason ------

def _text(value, what, limit, required=False):
    text = "" if value is None else str(value).strip()
    if required and not text:
        raise ValueError(_("%(what)s is required") % {"what": what})
    if len(text) > limit:
        raise ValueError(_("%(what)s has %(count)s characters; at most %(limit)s")
                         % {"what": what, "count": len(text), "limit": limit})
    if CONTROLS.search(text) or BIDI_CONTROLS.search(text):
        raise ValueError(_("%(what)s contains a control character") % {"what": what})
    return text


def check_first_public(value):
    text = _text(value, _("the first public date"), 10, required=True)
    if not FIRST_PUBLIC.match(text):
        raise ValueError(_("%(text)r is not a date as YYYY, YYYY-MM or YYYY-MM-DD")
                         % {"text": text})
    try:
        first_public_date(Method(first_public=text))
    except ValueError:
        raise ValueError(_("%(text)r is not a date in the calendar") % {"text": text}) from None
    return text


def check_arxiv_id(value):
    """An arXiv identifier without its version ('2503.14476'); 'arXiv:' and 'v2' are dropped."""
    text = _text(value, _("the arXiv identifier"), 40)
    text = re.sub(r"^arxiv:", "", text, flags=re.IGNORECASE)
    text = re.sub(r"v\d+$", "", text)
    if text and not ARXIV_ID.match(text):
        raise ValueError(_("%(text)r is not an arXiv identifier (like 2503.14476)")
                         % {"text": text})
    return text


def check_repository(value):
    """'owner/name' on GitHub; a github.com address is read as the same."""
    text = _text(value, _("the repository"), 200, required=True)
    if match := GITHUB_URL.match(text):
        text = match.group(1)
    if not REPOSITORY.match(text) or text.split("/")[1] in (".", ".."):
        raise ValueError(_("%(text)r is not a GitHub repository as owner/name") % {"text": text})
    return text


def check_branch(value):
    text = _text(value, _("the branch"), 100) or "main"
    if BAD_BRANCH.search(text) or text == "@":
        raise ValueError(_("%(text)r is not a git branch name") % {"text": text})
    return text


def check_option_name(value):
    """An option name (`use_tis`), a part of identifiers (`*is_correction`) or an option
    with a value (`importance_sampling=seq`), as coding.catalog.names reads them; stored in
    one spelling so the same name is never held twice."""
    text = _text(value, _("an option name"), OPTION_NAME_MAX, required=True)
    if "," in text:
        raise ValueError(_("%(text)r: an option name has no comma") % {"text": text})
    kind, key = landings_names.kind_of(text), landings_names.key_of(text)
    if not OPTION_KEY.fullmatch(key):
        raise ValueError(_(
            "%(text)r: the name is letters, digits, _ and -, with dots between config "
            "levels (%(example)s)") % {"text": text, "example": "algorithm.use_tis"})
    if kind == landings_names.VALUE and (not landings_names.value_of(text)
                                         or "=" in landings_names.value_of(text)):
        raise ValueError(_("%(text)r: an option with a value is written key=value "
                           "(importance_sampling=seq)") % {"text": text})
    if kind == landings_names.PART and "." in key:
        raise ValueError(_("%(text)r: a part of an identifier has no dots; a * marks where "
                           "the identifier may go on (*is_correction)") % {"text": text})
    return landings_names.canonical(text)


def _checked(checks):
    """Run {field: thunk} checks; the cleaned values, or one ValidationError naming each field."""
    values, errors = {}, {}
    for field, check in checks.items():
        try:
            values[field] = check()
        except ValueError as error:
            errors[field] = [str(error)]
    if errors:
        raise ValidationError(errors)
    return values


def _unique_write(write, what, field="name"):
    """Run a write that a database unique constraint guards: a concurrent request that took
    the same name first is a located error, not a server error."""
    try:
        with transaction.atomic():
            return write()
    except IntegrityError:
        raise ValidationError({field: [JUST_SAVED[what]()]}) from None


# Two requests saving the same name at once: what the one that came second reads.
JUST_SAVED = {
    "method": lambda: _("another method of this name was just saved; reload and try again"),
    "framework": lambda: _("another framework of this name was just saved; reload and try "
                           "again"),
    "option name": lambda: _("another option name of this name was just saved; reload and try "
                             "again")}


def _changes(obj, values):
    return {field: {"from": getattr(obj, field), "to": value}
            for field, value in values.items() if getattr(obj, field) != value}


# --- methods --------------------------------------------------------------------------

def check_method(study, data, method=None):
    """Cleaned method fields from `data` (missing fields keep the method's values)."""
    current = method or Method(study=study, first_public="")

    def given(field):
        return data[field] if field in data else getattr(current, field)

    others = study.methods.exclude(pk=method.pk) if method else study.methods.all()
    return _checked({
        "name": lambda: _unique(_text(given("name"), _("the name"), 200, required=True), others,
                                "method"),
        "first_public": lambda: check_first_public(given("first_public")),
        "source_arxiv_id": lambda: check_arxiv_id(given("source_arxiv_id")),
        "failure_addressed": lambda: _text(given("failure_addressed"), _("the failure"), 200),
        "position": lambda: _position(data.get("position"), current),
    })


def _unique(name, others, what):
    """Names differing only in case would read as one in every table: refused too."""
    if others.filter(name__iexact=name).exists():
        raise ValueError((_("the study already has a method named %(name)r") if what == "method"
                          else _("the study already has a framework named %(name)r"))
                         % {"name": name})
    return name


def _position(value, method):
    if value in (None, ""):
        return method.position if method.pk else None
    try:
        position = int(value)
    except (TypeError, ValueError):
        raise ValueError(_("the order %(value)s is not a whole number")
                         % {"value": f"{value!r:.20}"}) from None
    if not 0 <= position <= 1_000_000:
        raise ValueError(_("the order is a whole number from 0 to 1,000,000"))
    return position


@transaction.atomic
def save_method(study, actor, data, method=None):
    """Add a method (no `method`) or change one; audited. Unchanged input writes nothing."""
    values = check_method(study, data, method)
    if method is None:
        if values["position"] is None:
            last = study.methods.aggregate(last=Max("position"))["last"]
            values["position"] = 0 if last is None else last + 1
        method = _unique_write(lambda: Method.objects.create(study=study, **values), "method")
        audit.record(actor, study, "method.add", audit.target_of("method", name=method.name),
                     **values)
        return method
    changes = _changes(method, values)
    if changes:
        for field, value in values.items():
            setattr(method, field, value)
        _unique_write(method.save, "method")
        audit.record(actor, study, "method.edit", audit.target_of("method", name=method.name),
                     changes=changes)
    return method


def removal_of_method(method):
    return [_("%(method)s's landing in %(framework)s (%(day)s, %(name)s)") % {
                "method": method.name, "framework": landing.framework.name,
                "day": f"{landing.committed_at:%Y-%m-%d}", "name": landing.option_name}
            for landing in method.landings.select_related("framework")]


@transaction.atomic
def remove_method(method, actor, confirm=False):
    """Remove a method with its option names, links and landings (landings: only if confirmed)."""
    removes = removal_of_method(method)
    if removes and not confirm:
        raise NeedsConfirmation(removes)
    names = [str(o) for o in method.option_names.select_related("framework")]
    audit.record(actor, method.study, "method.remove", audit.target_of("method", name=method.name),
                 option_names=names, landings_removed=removes)
    method.delete()


# --- option names ---------------------------------------------------------------------

def check_new_option_name(method, framework, name):
    """The cleaned name, or ValidationError on `name` (bad, or already this method's here)."""
    values = _checked({"name": lambda: check_option_name(name)})
    if framework.study_id != method.study_id:
        raise ValidationError({"framework": [_("no such framework in this study")]})
    if method.option_names.filter(framework=framework, name=values["name"]).exists():
        raise ValidationError({"name": [
            _("%(method)s already has the option name %(name)r in %(framework)s") % {
                "method": method.name, "name": values["name"], "framework": framework.name}]})
    return values["name"]


@transaction.atomic
def add_option_name(method, framework, name, actor):
    """Add an option name; the next scan of the framework searches it through the whole
    history, whether or not the method has landed there already (and even if the name was
    searched before for another method)."""
    name = check_new_option_name(method, framework, name)
    option = _unique_write(
        lambda: OptionName.objects.create(method=method, framework=framework, name=name),
        "option name", field="name")
    _reopen_scan(framework, {name})  # another method may have had it searched already
    audit.record(actor, method.study, "option_name.add",
                 audit.target_of("option_name", method=method.name, framework=framework.name),
                 name=name)
    return option


def removal_of_option_name(option):
    """The landing found with this name, which goes with it."""
    return [_("%(method)s's landing in %(framework)s (%(day)s, found with %(name)s)") % {
                "method": option.method.name, "framework": option.framework.name,
                "day": f"{landing.committed_at:%Y-%m-%d}", "name": landing.option_name}
            for landing in Landing.objects.filter(method_id=option.method_id,
                                                  framework_id=option.framework_id,
                                                  option_name=option.name)]


@transaction.atomic
def remove_option_name(option, actor, confirm=False):
    """Remove an option name; the landing found with it goes too (if confirmed) and the
    method's other names in that framework are searched again at the next scan."""
    removes = removal_of_option_name(option)
    if removes and not confirm:
        raise NeedsConfirmation(removes)
    method, framework = option.method, option.framework
    audit.record(actor, method.study, "option_name.remove",
                 audit.target_of("option_name", method=method.name, framework=framework.name),
                 name=option.name, landings_removed=removes)
    option.delete()
    if removes:
        Landing.objects.filter(method=method, framework=framework).delete()
        _reopen_scan(framework, {option.name,
                                 *method.option_names.filter(framework=framework)
                                 .values_list("name", flat=True)})


def _reopen_scan(framework, names):
    """Forget that these names were searched, so the next scan reads the whole history for them."""
    scan = FrameworkScan.objects.select_for_update().filter(framework=framework).first()
    if scan and set(scan.searched_names) & names:
        scan.searched_names = sorted(set(scan.searched_names) - names)
        scan.save(update_fields=["searched_names"])


def check_names(names_by_framework):
    """{framework: [cleaned names]}, or ValidationError keyed "option_names.<framework>"."""
    errors, cleaned = {}, {}
    for framework, wanted in names_by_framework.items():
        cleaned[framework] = []
        for name in wanted:
            try:
                name = check_option_name(name)
            except ValueError as error:
                errors.setdefault(f"option_names.{framework.name}", []).append(str(error))
                continue
            if name in cleaned[framework]:
                errors.setdefault(f"option_names.{framework.name}", []).append(
                    _("%(name)r is given twice") % {"name": name})
            cleaned[framework].append(name)
    if errors:
        raise ValidationError(errors)
    return cleaned


@transaction.atomic
def set_option_names(method, names_by_framework, actor, confirm=False):
    """Make the method's option names per framework exactly these ({framework: [names]});
    frameworks not given are left alone. A renamed name is a removal and an addition."""
    wanted = check_names(names_by_framework)
    current = {}
    for option in method.option_names.select_related("framework", "method"):
        current.setdefault(option.framework_id, []).append(option)
    plan = []
    for framework, names in wanted.items():
        have = current.get(framework.pk, [])
        plan += [("remove", o) for o in have if o.name not in names]
        plan += [("add", framework, n) for n in dict.fromkeys(names)
                 if n not in {o.name for o in have}]
    removes = [line for step in plan if step[0] == "remove"
               for line in removal_of_option_name(step[1])]
    if removes and not confirm:
        raise NeedsConfirmation(removes)
    for step in plan:
        if step[0] == "remove":
            remove_option_name(step[1], actor, confirm=True)
        else:
            add_option_name(method, step[1], step[2], actor)
    return len(plan)


def save_method_and_names(study, actor, data, names_by_framework, method=None, confirm=False):
    """Add or change a method and its option names together: every error of both at once,
    and nothing written unless all of it can be."""
    errors = {}
    with transaction.atomic():
        try:
            method = save_method(study, actor, data, method)
        except ValidationError as error:
            errors.update(error.message_dict)
        try:
            if errors:
                check_names(names_by_framework)
            else:
                set_option_names(method, names_by_framework, actor, confirm)
        except ValidationError as error:
            errors.update(error.message_dict)
        if errors:
            transaction.set_rollback(True)
    if errors:
        raise ValidationError(errors)
    return method


# --- frameworks -----------------------------------------------------------------------

def check_framework(study, data, framework=None):
    current = framework or Framework(study=study)

    def given(field):
        return data[field] if field in data else getattr(current, field)

    others = study.frameworks.exclude(pk=framework.pk) if framework else study.frameworks.all()
    return _checked({
        "name": lambda: _unique(_text(given("name"), _("the name"), 100, required=True), others,
                                "framework"),
        "repository": lambda: check_repository(given("repository")),
        "main_branch": lambda: check_branch(given("main_branch")),
    })


@transaction.atomic
def save_framework(study, actor, data, framework=None):
    """Add a framework (no `framework`) or change one; audited. A changed default branch
    makes the next scan read that branch's whole history."""
    values = check_framework(study, data, framework)
    if framework is None:
        framework = _unique_write(lambda: Framework.objects.create(study=study, **values),
                                  "framework")
        audit.record(actor, study, "framework.add",
                     audit.target_of("framework", name=framework.name), **values)
        return framework
    changes = _changes(framework, values)
    if changes:
        for field, value in values.items():
            setattr(framework, field, value)
        _unique_write(framework.save, "framework")
        audit.record(actor, study, "framework.edit",
                     audit.target_of("framework", name=framework.name),
                     changes=changes)
    return framework


def removal_of_framework(framework):
    return [_("%(method)s's landing in %(framework)s (%(day)s, %(name)s)") % {
                "method": landing.method.name, "framework": framework.name,
                "day": f"{landing.committed_at:%Y-%m-%d}", "name": landing.option_name}
            for landing in framework.landings.select_related("method")]


@transaction.atomic
def remove_framework(framework, actor, confirm=False):
    """Remove a framework with its option names, scan record and landings (if confirmed)."""
    removes = removal_of_framework(framework)
    if removes and not confirm:
        raise NeedsConfirmation(removes)
    names = [f"{o.method.name}: {o.name}" for o in framework.option_names.select_related("method")]
    audit.record(actor, framework.study, "framework.remove",
                 audit.target_of("framework", name=framework.name),
                 repository=framework.repository, option_names=names, landings_removed=removes)
    framework.delete()

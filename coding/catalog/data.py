"""The method catalog as data: export and idempotent import (`manage.py catalog`).

The file holds frameworks, methods and their option names per framework, in a fixed order,
so the same catalog gives the same bytes. Loading goes through coding.catalog.edit, the
one place that checks and writes the catalog, so every change is checked and audited as
from the page or the API.
"""

from django.core.exceptions import ValidationError
from django.db import transaction

from coding.catalog.edit import (
    add_option_name, check_framework, check_method, check_option_name, save_framework, save_method,
)

FORMAT, VERSION = "workbench-catalog", 1


def catalog_data(study):
    """The study's frameworks, methods and option names as plain data, in a fixed order."""
    # Sorted here, not by the database: collations differ, the bytes must not.
    methods = sorted(study.methods.prefetch_related("option_names__framework"),
                     key=lambda m: (m.position, m.name))
    data = {"format": FORMAT, "version": VERSION, "frameworks": [], "methods": []}
    for framework in sorted(study.frameworks.all(), key=lambda f: f.name):
        data["frameworks"].append({"name": framework.name, "repository": framework.repository,
                                   "main_branch": framework.main_branch})
    for method in methods:
        names = {}
        for option in sorted(method.option_names.all(), key=lambda o: (o.framework.name, o.name)):
            names.setdefault(option.framework.name, []).append(option.name)
        data["methods"].append({
            "name": method.name, "first_public": method.first_public,
            "source_arxiv_id": method.source_arxiv_id,
            "failure_addressed": method.failure_addressed, "position": method.position,
            "option_names": names})
    return data


def load_catalog(study, data, actor, dry_run=False):
    """Add and update frameworks, methods (matched by name) and option names from `data`;
    never removes anything, so loading the same data again changes nothing. Every error is
    located ("methods[2].first_public") and nothing is written unless all are fixed. With
    `dry_run` the changes are made and rolled back: the counts say what would change."""
    errors = _check_catalog_data(study, data)
    if errors:
        raise ValidationError(errors)
    counts = dict.fromkeys(["frameworks_added", "frameworks_changed", "methods_added",
                            "methods_changed", "option_names_added"], 0)
    with transaction.atomic():
        frameworks = {f.name.lower(): f for f in study.frameworks.all()}
        for entry in data.get("frameworks", []):
            found = frameworks.get(str(entry["name"]).strip().lower())
            before = _state(found, FRAMEWORK_FIELDS)
            saved = save_framework(study, actor, _fields(entry, FRAMEWORK_FIELDS), found)
            _count(counts, "frameworks", found, before, saved)
            frameworks[saved.name.lower()] = saved
        methods = {m.name.lower(): m for m in study.methods.all()}
        for entry in data.get("methods", []):
            found = methods.get(str(entry["name"]).strip().lower())
            before = _state(found, METHOD_FIELDS)
            saved = save_method(study, actor, _fields(entry, METHOD_FIELDS), found)
            _count(counts, "methods", found, before, saved)
            have = set(saved.option_names.values_list("framework__name", "name"))
            for framework_name, names in (entry.get("option_names") or {}).items():
                framework = frameworks[framework_name.strip().lower()]
                for name in dict.fromkeys(check_option_name(n) for n in names):
                    if (framework.name, name) not in have:
                        add_option_name(saved, framework, name, actor)
                        counts["option_names_added"] += 1
        if dry_run:
            transaction.set_rollback(True)
    return counts


FRAMEWORK_FIELDS = ("name", "repository", "main_branch")
METHOD_FIELDS = ("name", "first_public", "source_arxiv_id", "failure_addressed", "position")


def _fields(entry, fields):
    return {field: entry[field] for field in fields if field in entry}


def _count(counts, kind, found, before, saved):
    if found is None:
        counts[f"{kind}_added"] += 1
    elif before != {field: getattr(saved, field) for field in before}:
        counts[f"{kind}_changed"] += 1


def _state(obj, fields):
    return {field: getattr(obj, field) for field in fields} if obj else None


def _check_catalog_data(study, data):
    """{location: [messages]} for everything wrong with the data; empty when it loads."""
    errors = {}

    def err(path, message):
        errors.setdefault(path, []).append(message)

    if not isinstance(data, dict):
        return {"catalog": ["the catalog is an object with frameworks and methods"]}
    if data.get("format", FORMAT) != FORMAT or data.get("version", VERSION) != VERSION:
        err("format", f"this reads {FORMAT} version {VERSION}")
    known = {f.name.lower(): f for f in study.frameworks.all()}
    for kind, fields, check, by_name in (
            ("frameworks", FRAMEWORK_FIELDS, check_framework, known),
            ("methods", METHOD_FIELDS, check_method,
             {m.name.lower(): m for m in study.methods.all()})):
        entries = data.get(kind, [])
        if not isinstance(entries, list):
            err(kind, "a list")
            continue
        seen = set()
        for n, entry in enumerate(entries):
            where = f"{kind}[{n}]"
            if not isinstance(entry, dict):
                err(where, "an object")
                continue
            name = str(entry.get("name") or "").strip().lower()
            if name and name in seen:
                err(f"{where}.name", f"{entry['name']!r} is given twice")
            seen.add(name)
            try:
                check(study, _fields(entry, fields), by_name.get(name))
            except ValidationError as error:
                for field, messages in error.message_dict.items():
                    for message in messages:
                        err(f"{where}.{field}", message)
            if kind == "frameworks" and name:
                known.setdefault(name, None)
            if kind == "methods":
                _check_entry_names(entry.get("option_names"), known, f"{where}.option_names", err)
    return errors


def _check_entry_names(names, frameworks, where, err):
    if names is None:
        return
    if not isinstance(names, dict):
        err(where, "an object of {framework: [option names]}")
        return
    for framework, listed in names.items():
        if str(framework).strip().lower() not in frameworks:
            err(f"{where}.{framework}", f"no framework {framework!r} in the study or the file")
        if not isinstance(listed, list):
            err(f"{where}.{framework}", "a list of option names")
            continue
        for n, name in enumerate(listed):
            try:
                check_option_name(name)
            except ValueError as error:
                err(f"{where}.{framework}[{n}]", str(error))

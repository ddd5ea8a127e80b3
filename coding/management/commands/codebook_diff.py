"""What changed between two versions of a codebook (as the version page shows it)."""

import json

from django.core.management.base import BaseCommand, CommandError

from coding.codebooks.diff import diff, is_empty
from coding.codebooks.spec import spec_of
from coding.management.studies import study_or_error


def codebook_or_error(study, name_or_id):
    """A study's codebook by id or by name; a command error naming it otherwise."""
    codebooks = study.codebooks.all()
    found = (codebooks.filter(pk=int(name_or_id)).first() if name_or_id.isdigit() else None) \
        or codebooks.filter(name=name_or_id).first()
    if found is None:
        raise CommandError(f"No codebook {name_or_id!r} in {study.slug}.")
    return found


class Command(BaseCommand):
    help = "Print what changed from version A to version B of a codebook (added, removed, changed)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("codebook", help="the codebook's id or name")
        parser.add_argument("a", type=int, help="the older version's number")
        parser.add_argument("b", type=int, help="the newer version's number")
        parser.add_argument("--json", action="store_true", dest="as_json",
                            help="print the diff as JSON")

    def handle(self, *args, study, codebook, a, b, as_json, **options):
        found = codebook_or_error(study_or_error(study), codebook)
        versions = {v.number: v for v in found.versions.filter(number__in=[a, b])}
        for number in (a, b):
            if number not in versions:
                raise CommandError(f"{found.name} has no version {number}.")
        changes = diff(spec_of(versions[a]), spec_of(versions[b]))
        if as_json:
            self.stdout.write(json.dumps(changes, indent=2, ensure_ascii=False))
            return
        self.stdout.write(f"{found.name}: v{a} → v{b}")
        for line in lines(changes):
            self.stdout.write(line)


def lines(changes):
    """The diff as text lines: + added, - removed, ~ changed (field: old → new)."""
    for change in changes["codebook"]:
        yield f"~ {change['field']}: {change['old']!r} → {change['new']!r}"
    for q in changes["added"]:
        yield f"+ {q['key']}: {q['text']} ({q['kind']})"
    for q in changes["removed"]:
        yield f"- {q['key']}: {q['text']}"
    for q in changes["changed"]:
        yield f"~ {q['key']}"
        for f in q["fields"]:
            yield f"    {f['field']}: {f['old']!r} → {f['new']!r}"
        options = q["options"]
        for o in options["added"]:
            yield f"    + option {o['value']} ({o['label']})"
        for o in options["removed"]:
            yield f"    - option {o['value']} ({o['label']})"
        for o in options["changed"]:
            for f in o["fields"]:
                yield f"    ~ option {o['value']} {f['field']}: {f['old']!r} → {f['new']!r}"
        if options["order"]:
            yield f"    option order: {', '.join(options['order']['new'])}"
    if changes["order"]:
        yield f"~ question order: {', '.join(changes['order']['new'])}"
    for t in changes.get("translations", []):
        at = f"{t['question']}.options.{t['option']}" if t["option"] else t["question"]
        mark = "+" if t["old"] is None else "-" if t["new"] is None else "~"
        yield f"{mark} translation {t['language']} {at} {t['field']}: {t['old']!r} → {t['new']!r}"
    if is_empty(changes):
        yield "no changes"

from django.core.management.base import BaseCommand, CommandError

from coding.catalog import landings
from coding.management.studies import study_or_error
from coding.models.catalog import OptionHit


class Command(BaseCommand):
    help = ("Scan a framework's git history (a clone, bare or partial: --filter=blob:none "
            "works) for each option name's first appearance in code or configuration and "
            "each method's landing; rescans read only new commits. docs/scanning.md.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("framework", help="the framework's name in the study, e.g. verl")
        parser.add_argument("--repo", required=True, help="path of the clone")
        parser.add_argument("--branch", help="defaults to the framework's main branch")
        parser.add_argument("--exclude", action="append", metavar="PATTERN",
                            help="a path pattern not to read (fnmatch, e.g. 'examples/*'); "
                                 "given once or more, it replaces the framework's list and "
                                 "is kept for later scans")
        parser.add_argument("--default-exclude", action="store_true",
                            help="go back to the default exclusions (prose, lock files, "
                                 "vendored code, data)")

    def handle(self, *args, study, framework, repo, branch, exclude, default_exclude, **options):
        found = study_or_error(study)
        target = found.frameworks.filter(name=framework).first()
        if target is None:
            names = ", ".join(found.frameworks.values_list("name", flat=True))
            raise CommandError(f"No framework {framework!r} in {study} (there are: {names}).")
        if exclude and default_exclude:
            raise CommandError("Give --exclude or --default-exclude, not both.")
        if exclude or default_exclude:
            target.scan_exclude = None if default_exclude else [p.strip() for p in exclude
                                                                if p.strip()]
            target.save(update_fields=["scan_exclude"])
        try:
            summary = landings.scan_framework(target, repo, branch)
        except landings.GitError as error:
            raise CommandError(str(error)) from error
        linked = landings.link_documents(found)
        landings.blind_inclusion(found)
        self.stdout.write(f"{target.name}: scanned to {summary['commit'][:10]} "
                          f"({summary['commits_read']} commits read), "
                          f"{summary['landings_found']} new landings, {summary['landings']} in all; "
                          f"{linked} new document links.")
        for landing in target.landings.select_related("method", "hit").order_by("committed_at"):
            hit = landing.hit
            flags = []
            if hit and hit.renamed:
                flags.append(f"possible rename: {hit.rename_reason}")
            if hit and hit.bulk:
                flags.append(f"bulk commit, {hit.files_changed} files")
            if hit and hit.batch_sync:
                flags.append(f"batch sync, authored {hit.authored_at:%Y-%m-%d}")
            bound = "<= " if landing.upper_bound else ""
            where = f" as {hit.variant} ({hit.kind}, {hit.path}:{hit.line_number})" if hit else ""
            self.stdout.write(f"  {landing.method.name:<40} {bound}{landings.landing_day(landing)} "
                              f"{landing.commit[:10]} {landing.option_name}{where}"
                              + (f" [{'; '.join(flags)}]" if flags else ""))
        hits = (OptionHit.objects.filter(option__framework=target)
                .select_related("option__method").order_by("committed_at"))
        if hits:
            self.stdout.write("Each option name's first appearance:")
        for hit in hits:
            self.stdout.write(f"  {hit.option.name:<40} {hit.committed_on} {hit.commit[:10]} "
                              f"({hit.option.method.name})")
        for warning in landings.scan_warnings(target.scan):
            self.stdout.write(self.style.WARNING(f"Warning: {warning}"))

from django.core.management.base import BaseCommand, CommandError

from coding import landings
from coding.management.studies import study_or_error


class Command(BaseCommand):
    help = ("Scan a framework's git history (a local clone or bare repository) for the first "
            "commit adding each catalog method's option names; rescans read only new commits.")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("framework", help="the framework's name in the study, e.g. verl")
        parser.add_argument("--repo", required=True, help="path of the clone")
        parser.add_argument("--branch", help="defaults to the framework's main branch")

    def handle(self, *args, study, framework, repo, branch, **options):
        found = study_or_error(study)
        target = found.frameworks.filter(name=framework).first()
        if target is None:
            names = ", ".join(found.frameworks.values_list("name", flat=True))
            raise CommandError(f"No framework {framework!r} in {study} (there are: {names}).")
        try:
            summary = landings.scan_framework(target, repo, branch)
        except landings.GitError as error:
            raise CommandError(str(error)) from error
        linked = landings.link_documents(found)
        landings.blind_inclusion(found)
        self.stdout.write(f"{target.name}: scanned to {summary['commit'][:10]}, "
                          f"{summary['landings_found']} new landings, {summary['landings']} in all; "
                          f"{linked} new document links.")
        for landing in target.landings.select_related("method").order_by("committed_at"):
            bound = "<= " if landing.upper_bound else ""
            self.stdout.write(f"  {landing.method.name:<40} {bound}{landing.committed_at:%Y-%m-%d} "
                              f"{landing.commit[:10]} {landing.option_name}")

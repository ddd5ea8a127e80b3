from ..base import IngestCommand


class Command(IngestCommand):
    help = ("Import GitHub issue, pull-request and discussion threads: saved API JSON (saved) or a "
            "repository's threads updated since a date (live; token from GITHUB_TOKEN).")

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        saved = sub.add_parser("saved", help=(
            "saved threads: workbench bundles (.json, .jsonl), raw REST answers or `gh api "
            "--paginate` output, saved GraphQL discussions, or a folder of them (comments_41.json, "
            "timeline_41.json, reviews_42.json, review_comments_42.json, pull_42.json are "
            "joined to their thread); a saved GitHub error fails the command"))
        saved.add_argument("path")
        saved.set_defaults(format="github_file")
        self.add_common_arguments(saved)
        live = sub.add_parser("live", help="fetch a repository's threads from the REST API "
                                           "(and its Discussions from GraphQL)")
        live.add_argument("repository", help="owner/name")
        live.add_argument("--since", default=None, help="ISO date, e.g. 2025-01-01T00:00:00Z")
        live.add_argument("--save-to", default=None, help="also write the bundles to this .jsonl")
        live.add_argument("--discussions", action="store_true",
                          help="also read the repository's Discussions (GraphQL)")
        live.set_defaults(format="github")
        self.add_common_arguments(live)

    def handle(self, *args, **options):
        if options["format"] == "github_file":
            params = {"path": options["path"]}
        else:
            params = {"repository": options["repository"], "since": options["since"],
                      "save_to": options["save_to"], "discussions": options["discussions"]}
        self.run({"format": options["format"], **params}, options)

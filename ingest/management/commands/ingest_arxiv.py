from ..base import IngestCommand


class Command(IngestCommand):
    help = ("Import arXiv papers: a saved API response (atom), a saved OAI-PMH response "
            "(oai), the metadata snapshot (snapshot), a live API query (api) or a live "
            "OAI-PMH harvest (harvest). Importing the same papers twice adds nothing.")

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="what", required=True)
        for name, fmt, text in (("atom", "arxiv_atom_file", "a saved arXiv API response"),
                                ("oai", "arxiv_oai_file", "a saved OAI-PMH response"),
                                ("snapshot", "arxiv_snapshot_file", "the JSON Lines snapshot")):
            command = sub.add_parser(name, help=f"import {text}")
            command.add_argument("path")
            command.set_defaults(format=fmt)
            self.add_common_arguments(command)
        api = sub.add_parser("api", help="query the live arXiv API (3 s between pages)")
        api.add_argument("--query", dest="search_query", default="")
        api.add_argument("--id", dest="id_list", action="append", default=[])
        api.add_argument("--max-results", type=int, default=None)
        api.add_argument("--sort-by", default="submittedDate")
        api.add_argument("--sort-order", default="ascending")
        api.set_defaults(format="arxiv_api")
        self.add_common_arguments(api)
        harvest = sub.add_parser("harvest", help="harvest live OAI-PMH ListRecords")
        harvest.add_argument("--prefix", dest="metadata_prefix", default="arXiv",
                             choices=["arXiv", "arXivRaw"])
        harvest.add_argument("--set", default=None)
        harvest.add_argument("--from", dest="from_date", default=None)
        harvest.add_argument("--until", default=None)
        harvest.set_defaults(format="arxiv_oai")
        self.add_common_arguments(harvest)

    def handle(self, *args, **options):
        fmt = options["format"]
        if fmt == "arxiv_api":
            params = {key: options[key] for key in
                      ("search_query", "id_list", "max_results", "sort_by", "sort_order")}
        elif fmt == "arxiv_oai":
            params = {"metadata_prefix": options["metadata_prefix"], "set": options["set"],
                      "from": options["from_date"], "until": options["until"]}
        else:
            params = {"path": options["path"]}
        self.run({"format": fmt, **params}, options)

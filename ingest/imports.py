"""One import, described by plain JSON params: the door the job, the commands and the
study side all use.

    run_import({"format": "arxiv_snapshot_file", "path": "/data/arxiv.jsonl"})

Formats and their params (all also take "strict" and "batch_size"):

| format              | params                                                          |
|---------------------|-----------------------------------------------------------------|
| arxiv_atom_file     | path (a saved API response)                                     |
| arxiv_oai_file      | path (a saved ListRecords/GetRecord response)                   |
| arxiv_snapshot_file | path (JSON Lines, .gz allowed)                                  |
| csv_file            | path, mapping (see sources.tabular), encoding, delimiter        |
| jsonl_file          | path, mapping                                                   |
| github_file         | path (a bundle .json, a .jsonl of bundles, or a directory)      |
| arxiv_api           | search_query and/or id_list, max_results, sort_by, sort_order   |
| arxiv_oai           | metadata_prefix (arXiv or arXivRaw), set, from, until           |
| github              | repository ("owner/repo"), since (ISO date), save_to (a .jsonl) |
"""

from pathlib import Path

from .clients.arxiv_api import ArxivApiClient
from .clients.github import GitHubClient
from .clients.oai import OaiClient
from .load import BATCH_SIZE, import_records
from .sources import arxiv_atom, arxiv_snapshot, github, oai_pmh, tabular

FILE_FORMATS = ("arxiv_atom_file", "arxiv_oai_file", "arxiv_snapshot_file", "csv_file",
                "jsonl_file", "github_file")
LIVE_FORMATS = ("arxiv_api", "arxiv_oai", "github")
# Live sources give records slowly (a GitHub thread takes several requests), so
# they write smaller batches to show progress and honour a cancel sooner.
LIVE_BATCH_SIZE = {"arxiv_api": 100, "arxiv_oai": 500, "github": 20}

# Tests replace these to serve recorded responses; nothing else should.
CLIENTS = {"arxiv_api": ArxivApiClient, "arxiv_oai": OaiClient, "github": GitHubClient}


def run_import(params, *, screen=None, on_batch=None, progress=None, log_error=None, sleep=None):
    """Read the source the params describe and write it; returns the counts of import_records.

    `sleep` replaces time.sleep in the live clients (the job passes one that keeps
    reporting, so a long rate-limit wait neither looks like a dead worker nor
    ignores a cancel).
    """
    check_params(params)
    batch_size = params.get("batch_size") or LIVE_BATCH_SIZE.get(params["format"], BATCH_SIZE)
    return import_records(
        read_source(params, sleep), strict=bool(params.get("strict")), batch_size=int(batch_size),
        screen=screen, on_batch=on_batch, progress=progress, log_error=log_error,
    )


def check_params(params):
    """Refuse params that cannot work before anything is read; ValueError says why."""
    fmt = params.get("format") if isinstance(params, dict) else None
    if fmt not in FILE_FORMATS + LIVE_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FILE_FORMATS + LIVE_FORMATS)}")
    if fmt in FILE_FORMATS and not Path(params.get("path") or "").exists():
        raise ValueError(f"{fmt} needs an existing 'path', got {params.get('path')!r}")
    if fmt in ("csv_file", "jsonl_file"):
        tabular.Mapping.from_dict(params.get("mapping"))
    if fmt == "arxiv_api" and not (params.get("search_query") or params.get("id_list")):
        raise ValueError("arxiv_api needs a 'search_query' or an 'id_list'")
    if fmt == "arxiv_oai" and params.get("metadata_prefix", "arXiv") not in ("arXiv", "arXivRaw"):
        raise ValueError("arxiv_oai reads the 'arXiv' and 'arXivRaw' metadata formats")
    if fmt == "github" and str(params.get("repository", "")).count("/") != 1:
        raise ValueError("github needs a 'repository' as owner/name")


def read_source(params, sleep=None):
    """The records of the source, lazily: nothing is read until they are iterated."""
    fmt, path = params["format"], params.get("path")
    if fmt == "arxiv_atom_file":
        return arxiv_atom.read_file(path)
    if fmt == "arxiv_oai_file":
        return oai_pmh.read_file(path)
    if fmt == "arxiv_snapshot_file":
        return arxiv_snapshot.read_file(path)
    if fmt == "csv_file":
        return tabular.read_csv_file(path, tabular.Mapping.from_dict(params["mapping"]),
                                     encoding=params.get("encoding", "utf-8"),
                                     delimiter=params.get("delimiter", ","))
    if fmt == "jsonl_file":
        return tabular.read_jsonl_file(path, tabular.Mapping.from_dict(params["mapping"]))
    if fmt == "github_file":
        return github.read_path(path)
    return _read_live(fmt, params, sleep)


def _read_live(fmt, params, sleep):
    client = CLIENTS[fmt](**({"sleep": sleep} if sleep else {}))
    if fmt == "arxiv_api":
        id_list = params.get("id_list") or []
        return client.search(
            search_query=params.get("search_query", ""),
            id_list=id_list.split(",") if isinstance(id_list, str) else id_list,
            max_results=params.get("max_results"),
            sort_by=params.get("sort_by", "submittedDate"),
            sort_order=params.get("sort_order", "ascending"))
    if fmt == "arxiv_oai":
        return client.list_records(params.get("metadata_prefix", "arXiv"),
                                   set_spec=params.get("set"), from_date=params.get("from"),
                                   until=params.get("until"))
    return client.threads(params["repository"], since=params.get("since"),
                          save_to=params.get("save_to"))

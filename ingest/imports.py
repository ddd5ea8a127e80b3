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
| ris_file            | path: RIS from Zotero, EndNote, Mendeley (sources.screening_files) |
| asreview_csv_file   | path: title, abstract, optional doi, authors, year, keywords    |
| qdpx_file           | path: a REFI-QDA project's text sources as papers (sources.qdpx; |
|                     | a PROJECT_FORMAT: coding.raters.qdpx imports its codings too)   |
| github_file         | path: bundles (.json, .jsonl), raw REST answers or `gh api`      |
|                     | output (streamed), saved GraphQL discussions, or a folder of   |
|                     | them (per-thread parts matched by endpoint and number)          |
| arxiv_api           | search_query and/or id_list, max_results, sort_by, sort_order   |
| arxiv_oai           | metadata_prefix (arXiv or arXivRaw), set, from, until           |
| github              | repository ("owner/repo"), since (ISO date), save_to (a .jsonl), |
|                     | discussions (true: the Discussions too, through GraphQL)        |

What a file may not be, whatever its format (each is a located error, never a crash;
tests/ingest/test_hostile_files.py feeds every importer a corpus of such files):

- a text field over records.MAX_TEXT_CHARS (262,144 characters), a list field (authors,
  affiliations, categories) over that many characters in all, or a mapped table value
  over that many characters as JSON;
- a line over sources.lines.MAX_LINE_BYTES (16 MiB; skipped unread); a JSON number of
  more than 100 digits, or one too large for a float (1e400); a JSON object with a
  key twice; an item of a saved GitHub JSON file over 16 MiB (the file itself is
  streamed, whatever its size);
- XML with a DTD or entities, nested over 64 deep, or with a text or tag over 4 MiB
  (sources.xml); XML whose root is not the format's;
- empty, in UTF-16 or UTF-32, or a `.gz` that is not gzip or is cut short.
"""

from pathlib import Path

from django.utils.translation import gettext as _

from .clients.arxiv_api import ArxivApiClient
from .clients.github import GitHubClient
from .clients.oai import OaiClient
from .load import BATCH_SIZE, import_records
from .sources import arxiv_atom, arxiv_snapshot, github, oai_pmh, qdpx, screening_files, tabular

FILE_FORMATS = ("arxiv_atom_file", "arxiv_oai_file", "arxiv_snapshot_file", "csv_file",
                "jsonl_file", "github_file", "ris_file", "asreview_csv_file")
# Read only by the import that brings a whole project's codings along with its texts
# (coding.raters.qdpx): not offered where a person picks a file's format.
PROJECT_FORMATS = ("qdpx_file",)
LIVE_FORMATS = ("arxiv_api", "arxiv_oai", "github")
# Live sources give records slowly (a GitHub thread takes several requests), so
# they write smaller batches to show progress and honour a cancel sooner.
LIVE_BATCH_SIZE = {"arxiv_api": 100, "arxiv_oai": 500, "github": 20}

# Tests replace these to serve recorded responses; nothing else should.
CLIENTS = {"arxiv_api": ArxivApiClient, "arxiv_oai": OaiClient, "github": GitHubClient}


def run_import(params, *, screen=None, on_batch=None, progress=None, log_error=None, sleep=None,
               log_warning=None):
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
        log_warning=log_warning,
    )


MAX_BATCH_SIZE = 50_000


def check_params(params):
    """Refuse params that cannot work before anything is read; ValueError says why."""
    fmt = params.get("format") if isinstance(params, dict) else None
    if fmt not in FILE_FORMATS + LIVE_FORMATS + PROJECT_FORMATS:
        raise ValueError(_("unknown format %(format)s; one of %(formats)s") % {
            "format": f"{fmt!r:.60}", "formats": ", ".join(FILE_FORMATS + LIVE_FORMATS)})
    if fmt in FILE_FORMATS and "stored" in params:
        # A stored file (workbench.storage), which the study's import job copies to a
        # path on its machine before reading: it must be a key, not checked here.
        if not isinstance(params["stored"], str) or not params["stored"]:
            raise ValueError(_("%(format)s needs 'stored' to be the key of a stored file") % {
                "format": fmt})
    elif fmt in FILE_FORMATS + PROJECT_FORMATS:
        _check_path(fmt, params.get("path"))
    batch_size = params.get("batch_size")
    if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                                   or not 0 < batch_size <= MAX_BATCH_SIZE):
        raise ValueError(_("batch_size must be a whole number from 1 to %(limit)s, got "
                           "%(value)s") % {"limit": f"{MAX_BATCH_SIZE:,}",
                                           "value": f"{batch_size!r:.40}"})
    if fmt == "csv_file":
        tabular.check_csv_options(params.get("encoding", "utf-8"), params.get("delimiter", ","))
    if fmt in ("csv_file", "jsonl_file"):
        tabular.Mapping.from_dict(params.get("mapping"))
    if fmt == "asreview_csv_file" and "path" in params:
        screening_files.asreview_mapping(params["path"])
    if fmt == "arxiv_api" and not (params.get("search_query") or params.get("id_list")):
        raise ValueError(_("arxiv_api needs a 'search_query' or an 'id_list'"))
    if fmt == "arxiv_oai" and params.get("metadata_prefix", "arXiv") not in ("arXiv", "arXivRaw"):
        raise ValueError(_("arxiv_oai reads the 'arXiv' and 'arXivRaw' metadata formats"))
    if fmt == "github" and str(params.get("repository", "")).count("/") != 1:
        raise ValueError(_("github needs a 'repository' as owner/name"))
    if fmt == "github" and not isinstance(params.get("discussions", False), bool):
        raise ValueError(_("github's 'discussions' is true or false"))


def _check_path(fmt, path):
    found = Path(path) if isinstance(path, str) and path.strip() else None
    try:
        if found is None or not found.exists():
            raise ValueError(_("%(format)s needs an existing 'path', got %(path)s") % {
                "format": fmt, "path": f"{path!r:.200}"})
        # A directory of saved threads is read file by file; anything else must be a
        # regular file (a device or a pipe would never end).
        if not (found.is_file() or (fmt == "github_file" and found.is_dir())):
            raise ValueError(_("%(format)s needs a file, and %(path)s is not a regular file")
                             % {"format": fmt, "path": f"{path!r:.200}"})
    except OSError as error:  # a name too long for the file system, and the like
        raise ValueError(_("%(format)s cannot use the path %(path)s: %(error)s") % {
            "format": fmt, "path": f"{path!r:.200}", "error": error.strerror}) from None


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
    if fmt == "ris_file":
        return screening_files.read_ris_file(path)
    if fmt == "asreview_csv_file":
        return screening_files.read_asreview_csv(path)
    if fmt == "qdpx_file":
        return qdpx.read_file(path)
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
                          save_to=params.get("save_to"),
                          discussions=bool(params.get("discussions")))

"""Imports into a study's pool: screening, counts for the screening flow, idempotence."""

import json
import re

import pytest

from coding.labeling import pool
from coding.models import Item
from tests import factories
from workbench.models import Job

PAPERS = [
    # id, title, abstract, categories, first version
    ("2599.10001", "Clipped Ratios for RL Fine-Tuning", "A policy optimisation method.", "cs.LG",
     "Mon, 03 Feb 2025 10:00:00 GMT"),
    ("2599.10002", "A Survey of Soil Microbes", "Nothing about learning.", "q-bio.PE",
     "Tue, 04 Mar 2025 10:00:00 GMT"),
    ("2599.10003", "Entropy Bonuses Revisited", "Reinforcement learning with entropy.", "cs.CL",
     "Wed, 05 Nov 2025 10:00:00 GMT"),
    ("2599.10004", "Group Baselines Without Critics", "Policy gradient for language models.",
     "cs.LG cs.AI", "Thu, 06 Mar 2025 10:00:00 GMT"),
]


def snapshot_line(arxiv_id, title, abstract, categories, created, version="v1"):
    return json.dumps({
        "id": arxiv_id, "submitter": "Ann Example", "authors": "Ann Example and Bo Sample",
        "title": title, "comments": None, "journal-ref": None, "doi": None, "report-no": None,
        "categories": categories, "license": None, "abstract": abstract,
        "versions": [{"version": version, "created": created}], "update_date": "2025-12-01",
        "authors_parsed": [["Example", "Ann", ""], ["Sample", "Bo", ""]]})


@pytest.fixture
def snapshot_file(tmp_path):
    def write(rows=PAPERS, extra_lines=()):
        path = tmp_path / f"arxiv-{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_text("\n".join([*(snapshot_line(*row) for row in rows), *extra_lines]) + "\n")
        return str(path)
    return write


def run(study, path, **screening):
    return pool.import_into_study(study, {"format": "arxiv_snapshot_file", "path": path},
                                  pool.Screening.from_dict(screening))


def test_screened_papers_enter_the_pool_and_every_one_is_counted(alpha, snapshot_file):
    counts = run(alpha, snapshot_file(), date_from="2025-01-01", date_to="2025-06-30",
                 categories=["cs.LG", "cs.CL"], query="policy")
    keys = set(Item.objects.filter(study=alpha).values_list("document__key", flat=True))
    assert {"2599.10001", "2599.10004"} <= keys
    assert "2599.10002" not in keys and "2599.10003" not in keys
    assert counts["read"] == 4 and counts["added_to_pool"] == 2
    assert counts["excluded"] == {"categories": 1, "date_range": 1}


def test_a_regular_expression_query_screens_title_and_abstract(alpha, snapshot_file):
    run(alpha, snapshot_file(), query=r"entropy|baselines?", regex=True)
    keys = set(Item.objects.filter(study=alpha, document__source="arxiv")
               .values_list("document__key", flat=True))
    assert keys == {"2599.10003", "2599.10004"}


def test_a_bad_pattern_is_refused_before_anything_is_read(alpha):
    with pytest.raises(ValueError, match="regular expression"):
        pool.Screening.from_dict({"query": "(unclosed", "regex": True})
    with pytest.raises(ValueError, match="date_from"):
        pool.Screening.from_dict({"date_from": "last spring"})


def test_importing_the_same_file_twice_adds_nothing(alpha, snapshot_file):
    path = snapshot_file()
    run(alpha, path)
    items = Item.objects.filter(study=alpha).count()
    counts = run(alpha, path)
    assert Item.objects.filter(study=alpha).count() == items
    assert (counts["added_to_pool"], counts["already_in_pool"], counts["unchanged"]) == (0, 4, 4)


def test_a_new_version_moves_uncoded_items_but_coded_items_keep_their_snapshot(
        alpha, people, snapshot_file):
    run(alpha, snapshot_file())
    coded = Item.objects.get(study=alpha, document__key="2599.10001")
    uncoded = Item.objects.get(study=alpha, document__key="2599.10004")
    factories.code(coded, people["cora"])
    revised = [(i, t, a + " Revised.", c, d) for i, t, a, c, d in PAPERS]
    counts = run(alpha, snapshot_file(revised))
    coded.refresh_from_db()
    uncoded.refresh_from_db()
    assert coded.snapshot.number == 1 and "Revised" not in coded.snapshot.content["abstract"]
    assert uncoded.snapshot.number == 2 and "Revised" in uncoded.snapshot.content["abstract"]
    assert counts["refreshed"] == 3


def test_a_bad_line_is_logged_where_it_is_and_the_rest_still_enters(alpha, people, snapshot_file):
    path = snapshot_file(extra_lines=['{"id": "2599.10005", "title": '])
    job = Job.objects.create(kind="import_to_study", created_by=people["olive"])
    counts = pool.import_into_study(alpha, {"format": "arxiv_snapshot_file", "path": path},
                                    pool.Screening(), job=job)
    assert counts["failed"] == 1 and counts["added_to_pool"] == 4
    event = job.events.get()
    assert "line 5" in event.location


def test_the_screening_flow_adds_up_every_run(alpha, snapshot_file):
    run(alpha, snapshot_file(), categories=["cs.LG"])
    run(alpha, snapshot_file(), query="entropy")
    flow = pool.screening_flow(alpha)["totals"]
    assert flow["read"] == 8
    assert flow["excluded_named"] == {"does not match the query": 3,
                                      "not in the chosen categories": 2}
    assert flow["added_to_pool"] == 3 and flow["already_in_pool"] == 0


def test_owner_imports_an_uploaded_file_from_the_browser(alpha, people, client_for, snapshot_file,
                                                        django_capture_on_commit_callbacks):
    olive = client_for(people["olive"])
    with open(snapshot_file(), "rb") as upload, django_capture_on_commit_callbacks(execute=True):
        response = olive.post(f"/studies/{alpha.slug}/import/", {
            "format": "arxiv_snapshot_file", "file": upload, "categories": "cs.LG"})
    assert response.status_code == 302 and "/jobs/" in response["Location"]
    job = Job.objects.get(kind="import_to_study")
    assert job.status == Job.Status.DONE, job.error
    assert job.result["counts"]["added_to_pool"] == 2
    page = olive.get(f"/studies/{alpha.slug}/import/").content.decode()
    assert "not in the chosen categories" in page


def test_api_import_and_screening_flow(alpha, people, client_for, snapshot_file, tmp_path,
                                       settings, django_capture_on_commit_callbacks):
    settings.IMPORT_DIR = tmp_path  # where snapshot_file writes; an administrator's folder
    olive = client_for(people["olive"])
    with django_capture_on_commit_callbacks(execute=True):
        started = olive.post(f"/api/studies/{alpha.slug}/imports/", {
            "source": {"format": "arxiv_snapshot_file", "path": snapshot_file()},
            "screening": {"query": "entropy"}}, content_type="application/json")
    assert started.status_code == 202
    flow = olive.get(f"/api/studies/{alpha.slug}/screening/").json()
    assert flow["totals"]["added_to_pool"] == 1 and flow["totals"]["excluded"] == {"query": 3}


def test_a_source_that_cannot_work_is_refused_by_name(alpha, people, client_for):
    response = client_for(people["olive"]).post(
        f"/api/studies/{alpha.slug}/imports/",
        {"source": {"format": "arxiv_snapshot_file", "path": "/nowhere.jsonl"}},
        content_type="application/json")
    assert response.status_code == 400 and "path" in response.json()["source"]


def test_only_owners_import(alpha, people, client_for):
    for name in ("cora", "ada", "vera"):
        assert client_for(people[name]).get(f"/studies/{alpha.slug}/import/").status_code == 403


def test_import_command_prints_the_screening_counts(alpha, snapshot_file, capsys):
    from django.core.management import call_command

    call_command("import_to_study", alpha.slug, "--format", "arxiv_snapshot_file", "--path",
                 snapshot_file(), "--date-to", "2025-06-30")
    out = capsys.readouterr().out
    assert "excluded: outside the date range" in out and "added_to_pool" in out


def test_the_api_reads_named_files_only_from_the_import_folder(alpha, people, client_for,
                                                               snapshot_file, tmp_path, settings):
    """An owner is not an administrator: a path may not reach any file the server can read."""
    settings.IMPORT_DIR = tmp_path / "imports"
    settings.IMPORT_DIR.mkdir()
    outside = snapshot_file()  # a real file, next to the folder, not in it
    olive = client_for(people["olive"])
    for path in (outside, "../" + outside.rsplit("/", 1)[1], "/etc/hostname"):
        refused = olive.post(f"/api/studies/{alpha.slug}/imports/",
                             {"source": {"format": "arxiv_snapshot_file", "path": path}},
                             content_type="application/json")
        assert refused.status_code == 400
        assert "outside the server's import folder" in refused.json()["source"]["path"]


def test_the_api_does_not_let_an_owner_write_files_on_the_server(alpha, people, client_for):
    refused = client_for(people["olive"]).post(
        f"/api/studies/{alpha.slug}/imports/",
        {"source": {"format": "github", "repository": "lab/repo", "save_to": "/tmp/anything"}},
        content_type="application/json")
    assert refused.status_code == 400
    assert "administrator" in refused.json()["source"]["save_to"]


# --- every record read is counted once (issue 35, finding 5) ------------------------

THREADS = "tests/ingest/fixtures/github/threads.jsonl"


def started_by_olive(people):
    return Job.objects.create(kind="import_to_study", created_by=people["olive"])


def test_a_good_a_broken_and_a_strict_run_add_up_to_what_was_read(alpha, people, snapshot_file):
    """A good file, a broken file (a duplicate and a bad line) and the broken file again
    in strict mode: the flow's lines sum to the records read, and the strict run that
    stopped keeps its counts (it used to show Read 0 / Failed 0)."""
    from coding.models import ImportRun
    from ingest.load import StrictModeError

    run(alpha, snapshot_file())
    broken = snapshot_file(rows=[*PAPERS, PAPERS[0]], extra_lines=['{"id": "2599.1', ""])
    run(alpha, broken)
    with pytest.raises(StrictModeError):
        pool.import_into_study(alpha, {"format": "arxiv_snapshot_file", "path": broken,
                                       "strict": True},
                               pool.Screening(), job=started_by_olive(people))
    strict = ImportRun.objects.filter(study=alpha).latest("created_at")
    assert strict.status == ImportRun.Status.FAILED and "first bad record" in strict.error
    assert (strict.counts["read"], strict.counts["failed"]) == (6, 1)
    assert sum(pool.accounted_for(strict.counts).values()) == 6

    flow = pool.screening_flow(alpha)
    totals = flow["totals"]
    assert totals["read"] == 4 + 6 + 6
    assert sum(totals[key] for key in pool.FLOW) == totals["read"] and totals["adds_up"]
    assert (totals["added_to_pool"], totals["already_in_pool"], totals["duplicates"],
            totals["failed"]) == (4, 4 + 4, 1 + 1, 1 + 1)
    assert [r.adds_up for r in flow["runs"]] == [True, True, True]
    assert [r.shown_status for r in flow["runs"]] == ["done", "done", "failed"]
    assert flow["runs"][2].started_by == people["olive"]
    assert flow["runs"][2].file_name == broken.rsplit("/", 1)[1]


def test_the_imports_table_names_each_run_its_file_starter_and_status(
        alpha, people, client_for, snapshot_file):
    from ingest.load import StrictModeError

    broken = snapshot_file(extra_lines=["not json"])
    with pytest.raises(StrictModeError):
        pool.import_into_study(alpha, {"format": "arxiv_snapshot_file", "path": broken,
                                       "strict": True},
                               pool.Screening(), job=started_by_olive(people))
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/import/").content.decode()
    table = page[page.index('id="import-runs"'):]
    row = table[table.index("<tbody>"):table.index("</tr>", table.index("<tbody>"))]
    assert broken.rsplit("/", 1)[1] in row and "olive" in row and "failed" in row
    cells = [c.split("</td>")[0].strip() for c in re.split(r"<td[^>]*>", row)[1:]]
    # read, added, already in the pool, excluded, duplicates, failed, no codebook
    assert cells[5:12] == ["5", "4", "0", "0", "0", "1", "0"]
    flow = olive.get(f"/api/studies/{alpha.slug}/screening/").json()
    [imported] = flow["imports"]
    assert (imported["status"], imported["started_by"], imported["adds_up"]) == (
        "failed", "olive", True)
    assert imported["counts"]["read"] == 5 and flow["totals"]["adds_up"] is True


def test_threads_for_a_study_without_a_thread_codebook_are_counted_and_warned_of(
        alpha, people, client_for):
    """A study with a paper codebook only: an import of threads says, before and after,
    that they go nowhere (it used to end "0 added, 0 failed" with an empty log)."""
    olive = client_for(people["olive"])
    page = olive.get(f"/studies/{alpha.slug}/import/").content.decode()
    warning = page[page.index('id="no-codebook-warning"'):].split("</p>")[0]
    assert "no codebook for threads" in warning
    assert "github_file" in warning and "arxiv_snapshot_file" not in warning

    job = started_by_olive(people)
    counts = pool.import_into_study(alpha, {"format": "github_file", "path": THREADS},
                                    pool.Screening(), job=job)
    assert (counts["read"], counts["no_codebook"], counts["added_to_pool"]) == (3, 3, 0)
    assert sum(pool.accounted_for(counts).values()) == counts["read"]
    [event] = job.events.filter(level="warning")
    assert "3 documents did not join the pool" in event.message
    assert "no codebook for threads" in event.message
    assert olive.get(f"/api/studies/{alpha.slug}/screening/").json()["missing_codebooks"] == [
        "thread"]


def test_a_deletion_is_counted_and_never_joins_the_pool(alpha):
    from ingest.load import import_records
    from ingest.records import Deletion

    adder = pool.PoolAdder(alpha)
    counts = import_records([Deletion("arxiv", "2599.77777", "2025-09-15")], on_batch=adder)
    assert (counts["read"], counts["deletions"]) == (1, 1)
    assert adder.counts["added_to_pool"] == adder.counts["already_in_pool"] == 0


def test_the_import_page_keeps_the_format_of_the_last_import(alpha, people, client_for):
    """Issue 39, finding 7: the format went back to the first one after every run."""
    from coding.models import ImportRun

    olive = client_for(people["olive"])

    def chosen():
        page = olive.get(f"/studies/{alpha.slug}/import/").content.decode()
        formats = re.search(r'<select name="format".*?</select>', page, re.S).group(0)
        return re.findall(r'<option value="([a-z_]+)" selected>', formats)

    assert chosen() == []  # a first import: the list's first format
    ImportRun.objects.create(study=alpha, params={"format": "github_file", "path": "x"})
    assert chosen() == ["github_file"]

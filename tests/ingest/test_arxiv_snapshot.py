"""The arXiv metadata snapshot (JSON Lines): streamed, idempotent, bad lines recorded."""

import gzip
import json
from datetime import UTC, datetime

import pytest

from ingest.imports import run_import
from ingest.load import StrictModeError, import_records
from ingest.models import Document, Snapshot
from ingest.sources import arxiv_snapshot

from .conftest import FIXTURES

SNAPSHOT = FIXTURES / "arxiv" / "snapshot.jsonl"
BAD = FIXTURES / "arxiv" / "snapshot_bad.jsonl"


def import_file(path, **params):
    errors = []
    counts = run_import({"format": "arxiv_snapshot_file", "path": str(path), **params},
                        log_error=errors.append)
    return counts, errors


def line(**fields):
    record = {"id": "2507.99950", "title": "An Invented Title", "abstract": "  Invented.\n",
              "authors": "Ann Example", "categories": "cs.LG",
              "versions": [{"version": "v1", "created": "Mon, 4 Aug 2025 10:00:00 GMT"}],
              "update_date": "2025-08-05", "authors_parsed": [["Example", "Ann", ""]]}
    return json.dumps({**record, **fields})


def test_a_snapshot_line_becomes_a_paper_with_its_metadata(db):
    counts, errors = import_file(SNAPSHOT)
    assert (counts["added"], errors) == (3, [])
    paper = Document.objects.get(source="arxiv", key="2507.99917")
    assert paper.kind == "paper"
    assert paper.title == "Sparse Lantern Probes for Tracing Gradient Echoes in Toy Transformers"
    assert paper.url == "https://arxiv.org/abs/2507.99917"
    assert paper.published == datetime(2025, 7, 30, 8, 41, 27, tzinfo=UTC)
    assert paper.updated == datetime(2025, 9, 14, 16, 2, 11, tzinfo=UTC)
    assert paper.metadata["authors"] == ["Ada Q. Placeholder", "Bo Testwell", "Chloé Mockford"]
    assert paper.metadata["affiliations"] == ["Example Institute of Technology"]
    assert paper.metadata["categories"] == ["cs.LG", "stat.ML"]
    assert paper.metadata["versions"] == [
        {"version": "v1", "created": "2025-07-30T08:41:27+00:00"},
        {"version": "v2", "created": "2025-09-14T16:02:11+00:00"}]
    assert paper.metadata["doi"] == "10.5555/jir.2025.0042"
    assert paper.metadata["journal_ref"] == "Journal of Imaginary Results 12 (2025) 101-114"
    assert paper.metadata["license"] == "http://creativecommons.org/licenses/by/4.0/"


def test_old_style_identifiers_keep_their_slash(db):
    import_file(SNAPSHOT)
    assert Document.objects.get(key="hep-th/9901991").metadata["affiliations"] == [
        "Example Institute of Technology"]


def test_untrusted_text_is_stored_as_received(db):
    import_file(SNAPSHOT)
    paper = Document.objects.get(key="2508.99933")
    assert paper.title == "Lantern Probes at Scale: <b>not</b> a Sequel"
    assert paper.metadata["abstract"] == "  Fictional. Uses $x < y$ & nothing else.\n"


def test_reimporting_the_same_snapshot_creates_nothing(db):
    import_file(SNAPSHOT)
    refreshed = {d.key: d.refreshed_at for d in Document.objects.all()}
    counts, _ = import_file(SNAPSHOT)
    assert (counts["added"], counts["updated"], counts["unchanged"]) == (0, 0, 3)
    assert Document.objects.count() == 3
    assert {d.key: d.refreshed_at for d in Document.objects.all()} == refreshed


def test_a_new_version_updates_the_paper_and_never_its_snapshots(db, tmp_path):
    import_file(SNAPSHOT)
    paper = Document.objects.get(key="2507.99917")
    before = paper.take_snapshot()
    record = json.loads(SNAPSHOT.read_text().splitlines()[0])
    record["versions"].append({"version": "v3", "created": "Sat, 1 Nov 2025 09:00:00 GMT"})
    record["abstract"] = "  A revised invented abstract.\n"
    (tmp_path / "newer.jsonl").write_text(json.dumps(record) + "\n")
    counts, _ = import_file(tmp_path / "newer.jsonl")
    assert counts["updated"] == 1
    paper.refresh_from_db()
    assert [v["version"] for v in paper.metadata["versions"]] == ["v1", "v2", "v3"]
    assert paper.updated == datetime(2025, 11, 1, 9, tzinfo=UTC)
    assert Snapshot.objects.get(pk=before.pk).content["abstract"].startswith("  We introduce")
    assert paper.take_snapshot().number == 2


def test_each_bad_line_is_recorded_with_its_line_and_reason(db):
    counts, errors = import_file(BAD)
    assert (counts["read"], counts["added"], counts["failed"]) == (9, 2, 7)
    reasons = {e.location.rsplit(" ", 1)[-1]: e.reason for e in errors}
    assert all(e.location.startswith(f"{BAD} line ") for e in errors)
    assert reasons["2"].startswith("malformed JSON")
    assert reasons["3"] == "not UTF-8: byte 0xe9 at byte 176 of the line"
    assert reasons["4"] == "missing field 'id'"
    assert reasons["5"] == "field 'title' should be a string, got int"
    assert reasons["6"] == "bad date in versions[0].created: 'Blursday, 99 Foo 2025'"
    assert reasons["7"] == "duplicate key 'id' in one JSON object"
    assert reasons["8"] == "a line should hold a JSON object, got list"
    assert set(Document.objects.values_list("key", flat=True)) == {"2507.99917", "2507.99931"}


def test_a_truncated_last_line_is_a_bad_record(db, tmp_path):
    path = tmp_path / "cut.jsonl"
    path.write_text(line() + "\n" + line(id="2507.99951")[:90])
    counts, errors = import_file(path)
    assert (counts["added"], counts["failed"]) == (1, 1)
    assert errors[0].location == f"{path} line 2"
    # Said in words a person can act on (issue 39, finding 7), not "Expecting value at
    # column 91".
    assert errors[0].reason.startswith("malformed JSON: the line ends before its record does "
                                       "(cut short")


def test_a_field_over_the_size_limit_is_a_bad_record(db, tmp_path):
    path = tmp_path / "huge.jsonl"
    path.write_text(line(abstract="x" * 300_000) + "\n" + line(id="2507.99951") + "\n")
    counts, errors = import_file(path)
    assert (counts["added"], counts["failed"]) == (1, 1)
    assert errors[0].reason == "field 'abstract' is 300,000 characters, over the 262,144 limit"


def test_a_line_over_the_line_limit_is_skipped_without_being_read_whole(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_text(line(abstract="y" * 5000) + "\n" + line(id="2507.99951") + "\n")
    items = list(arxiv_snapshot.read_file(path, max_line_bytes=1024))
    assert [type(i).__name__ for i in items] == ["RecordError", "DocumentRecord"]
    assert items[0].reason == "line longer than 1,024 bytes"


@pytest.mark.parametrize("field, value, reason", [
    ("versions", "v1", "field 'versions' should be a list, got str"),
    ("categories", ["cs.LG"], "field 'categories' should be a string, got list"),
    ("authors_parsed", [["Example", 3]], "field 'authors_parsed' should be a list of lists of strings"),
    ("id", "not an id", "id 'not an id' is not an arXiv identifier"),
    ("id", None, "missing field 'id'"),
])
def test_wrong_types_are_bad_records(field, value, reason, tmp_path):
    path = tmp_path / "types.jsonl"
    path.write_text(line(**{field: value}) + "\n")
    [item] = arxiv_snapshot.read_file(path)
    assert item.reason == reason


def test_the_same_key_twice_in_one_file_is_one_paper_and_the_later_wins(db, tmp_path):
    path = tmp_path / "twice.jsonl"
    path.write_text(line(title="First Reading") + "\n" + line(title="Second Reading") + "\n")
    counts, _ = import_file(path)
    assert (counts["added"], counts["duplicates"]) == (1, 1)
    assert Document.objects.get().title == "Second Reading"


def test_a_gzipped_snapshot_is_streamed(db, tmp_path):
    path = tmp_path / "snapshot.jsonl.gz"
    path.write_bytes(gzip.compress(SNAPSHOT.read_bytes()))
    counts, _ = import_file(path)
    assert counts["added"] == 3


def test_strict_mode_stops_at_the_first_bad_line(db):
    with pytest.raises(StrictModeError, match=r"snapshot_bad.jsonl line 2: malformed JSON"):
        import_file(BAD, strict=True)
    assert list(Document.objects.values_list("key", flat=True)) == ["2507.99917"]


def test_strict_mode_off_reads_past_every_bad_line(db):
    counts = import_records(arxiv_snapshot.read_file(BAD), strict=False)
    assert counts["added"] == 2


def test_a_byte_order_mark_before_the_first_line_is_ignored(db, tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line().encode() + b"\n")
    counts, errors = import_file(path)
    assert (counts["added"], errors) == (1, [])


def test_latex_accents_in_names_and_titles_become_unicode_and_the_written_form_is_kept(
        db, tmp_path):
    """Issue 39, finding 7: `Bal\\'azs` reads Balázs; what the source wrote stays beside it."""
    path = tmp_path / "latex.jsonl"
    path.write_text(line(
        title=r"Invented Fran\c{c}ais Probes for {GRPO} at 50\% Budget",
        authors=r"Bal\'azs Kov\'acs and Ann Example",
        authors_parsed=[[r"Kov\'acs", r"Bal\'azs", ""], ["Example", "Ann", ""]]) + "\n")
    counts, errors = import_file(path)
    assert (counts["added"], errors) == (1, [])
    paper = Document.objects.get(key="2507.99950")
    assert paper.title == "Invented Français Probes for GRPO at 50% Budget"
    assert paper.metadata["title_latex"] == r"Invented Fran\c{c}ais Probes for {GRPO} at 50\% Budget"
    assert paper.metadata["authors"] == ["Balázs Kovács", "Ann Example"]
    first, second = paper.metadata["author_records"]
    assert (first["keyname"], first["name_latex"]) == ("Kovács", r"Bal\'azs Kov\'acs")
    assert "name_latex" not in second  # a name without LaTeX keeps no second form


def test_a_line_cut_inside_a_string_says_so_and_names_the_line(db, tmp_path):
    path = tmp_path / "cut.jsonl"
    whole = line(id="2507.99951")
    path.write_text(line() + "\n" + whole[:whole.index("An Invented") + 5] + "\n" + line(
        id="2507.99952") + "\n")
    counts, errors = import_file(path)
    assert (counts["added"], counts["failed"]) == (2, 1)
    assert errors[0].location == f"{path} line 2"
    assert errors[0].reason.startswith("malformed JSON: the line ends inside a string")
    assert "control character" not in errors[0].reason

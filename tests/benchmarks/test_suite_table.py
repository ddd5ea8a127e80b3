"""`make bench`'s table: every target line a script printed, met or missed, and the scripts
that printed none, written between docs/performance.md's markers without touching the
rest of the page."""

from benchmarks import machine, suite


def test_the_table_holds_every_target_line_and_names_the_silent_scripts():
    said = "\n".join(["machine: m, cpu, 2 cores, 8 GB; python 3.11",
                      machine.target("ingest: records/s", "10,000/s", "10,751/s", True),
                      "some other line | with bars",
                      machine.target("ingest: peak RSS", "under 150 MB", "151 MB", False)])
    runs = [suite.Ran("ingest", "ok", "5 s", suite.targets(said)),
            suite.Ran("scan", "ok", "1 s"),
            suite.Ran("pages", "skipped", "pages.py needs PostgreSQL: set DATABASE_URL")]
    table = suite.report("10k", "machine: m, cpu, 2 cores, 8 GB; python 3.11", runs)
    assert "1 of 2 targets met" in table and "m, cpu, 2 cores" in table
    assert "| ingest | ingest: records/s | 10,000/s | 10,751/s | met |" in table
    assert "| ingest | ingest: peak RSS | under 150 MB | 151 MB | missed |" in table
    assert "| scan | | | ran; prints no target line yet" in table
    assert "| pages | | | skipped: pages.py needs PostgreSQL" in table


def test_the_table_replaces_only_the_section_between_the_markers(tmp_path):
    page = tmp_path / "performance.md"
    page.write_text(f"# Performance\n\nkept above\n\n{suite.BEGIN}\nold table\n{suite.END}\n\n"
                    "kept below\n")
    suite.write_section(page, "new table")
    text = page.read_text()
    assert "old table" not in text and f"{suite.BEGIN}\nnew table\n{suite.END}" in text
    assert text.startswith("# Performance\n\nkept above") and text.endswith("kept below\n")
    suite.write_section(page, "newer table")
    assert text.count(suite.BEGIN) == 1 and "newer table" in page.read_text()


def test_the_page_in_the_repository_has_the_markers():
    text = (suite.ROOT / "docs" / "performance.md").read_text()
    assert text.count(suite.BEGIN) == 1 and text.count(suite.END) == 1
